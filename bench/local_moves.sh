#!/usr/bin/env bash
# What local moves give: each model is tuned with local moves, then again
# with --no-local-moves into the same measurement cache (which reproduces
# the searched plan the moves started from, without measuring anything
# again), and the two plans are replayed side by side (moved, searched,
# moved, ... in one process), ROUNDS rounds of REPEAT runs. Prints one line
# per plan and round and a table of the medians of the round medians, the
# ratio, the moves measured and kept, and the cold tune's time; then the
# geometric mean.
#
#   bench/local_moves.sh [COLLAGE_BINARY]     (default build/collage)
# Environment: THREADS (default 2), ROUNDS (default 3), REPEAT (default 30),
# MODELS (default: the zoo and the PaddleOCR models), CACHE (default: a new
# cache in a scratch directory, so every tune is cold), COLLAGE_ZOO_DIR.
# Run on an idle machine (check `uptime`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
collage="${1:-$(dirname "$here")/build/collage}"
threads="${THREADS:-2}"
rounds="${ROUNDS:-3}"
repeat="${REPEAT:-30}"
. "$here/models.sh"
cache="${CACHE:-$work/cache.sqlite}"

moves() {
  /usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['search']; \
print(s.get('moves_tried', 0), s.get('moves_kept', 0))" "$1"
}
echo "| model | searched ms | after moves ms | speedup | moves measured / kept | cold tune s |"
echo "|---|---|---|---|---|---|"
product=1
count=0
for m in ${MODELS:-$default_models}; do
  tune_args "$m" || continue
  start=$(date +%s)
  "$collage" tune "${args[@]}" --backends all --threads "$threads" --cache "$cache" -q \
    --no-verify -o "$work/$m.moved.json" > /dev/null
  end=$(date +%s)
  "$collage" tune "${args[@]}" --backends all --threads "$threads" --cache "$cache" -q \
    --no-verify --no-local-moves -o "$work/$m.searched.json" > /dev/null
  replay_alternating "$m" moved searched
  a=$(replayed_median "$m" moved)
  b=$(replayed_median "$m" searched)
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
  product=$(awk -v p="$product" -v r="$ratio" 'BEGIN {print p * r}')
  count=$((count + 1))
  read -r tried kept <<< "$(moves "$work/$m.moved.json")"
  echo "| $m | $b | $a | ${ratio}x | $tried / $kept | $((end - start)) |"
done
awk -v p="$product" -v n="$count" -v t="$threads" \
  'BEGIN {if (n) printf "\ngeometric mean speedup from local moves: %.3fx over %d models (%d threads)\n", p ^ (1 / n), n, t}'
