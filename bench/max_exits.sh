#!/usr/bin/env bash
# What candidates with several exits give: each model is tuned with
# --max-exits 1 (the default) and with --max-exits EXITS into the same
# measurement cache, and the two plans are replayed side by side (1, EXITS,
# 1, ... in one process), ROUNDS rounds of REPEAT runs. Prints one line per
# plan and round and a table of partitions, candidates, tune time and the
# medians of the round medians; then the geometric mean of the ratios.
#
#   bench/max_exits.sh [COLLAGE_BINARY]     (default build/collage)
# Environment: EXITS (default 2), THREADS (default 2), ROUNDS (default 3),
# REPEAT (default 30), MODELS (default: the zoo and the PaddleOCR models),
# CACHE (default: the user's measurement cache), COLLAGE_ZOO_DIR.
# Run on an idle machine (check `uptime`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
collage="${1:-$(dirname "$here")/build/collage}"
exits="${EXITS:-2}"
threads="${THREADS:-2}"
rounds="${ROUNDS:-3}"
repeat="${REPEAT:-30}"
. "$here/models.sh"
cache_args=()
[ -n "${CACHE:-}" ] && cache_args=(--cache "$CACHE")

summary() {
  /usr/bin/python3 -c "import json,sys; p=json.load(open(sys.argv[1])); \
print(len(p['partitions']), p['search']['candidates'])" "$1"
}
echo "| model | partitions (1 / $exits exits) | candidates (1 / $exits) | tune s (1 / $exits) | 1 exit ms | $exits exits ms | speedup |"
echo "|---|---|---|---|---|---|---|"
product=1
count=0
for m in ${MODELS:-$default_models}; do
  tune_args "$m" || continue
  seconds=()
  for e in 1 "$exits"; do
    start=$(date +%s)
    "$collage" tune "${args[@]}" --backends all --threads "$threads" "${cache_args[@]}" -q \
      --no-verify --max-exits "$e" -o "$work/$m.$e.json" > /dev/null
    seconds+=($(($(date +%s) - start)))
  done
  replay_alternating "$m" 1 "$exits"
  a=$(replayed_median "$m" 1)
  b=$(replayed_median "$m" "$exits")
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a / b}')
  product=$(awk -v p="$product" -v r="$ratio" 'BEGIN {print p * r}')
  count=$((count + 1))
  read -r p1 c1 <<< "$(summary "$work/$m.1.json")"
  read -r pe ce <<< "$(summary "$work/$m.$exits.json")"
  echo "| $m | $p1 / $pe | $c1 / $ce | ${seconds[0]} / ${seconds[1]} | $a | $b | ${ratio}x |"
done
awk -v p="$product" -v n="$count" -v t="$threads" -v e="$exits" \
  'BEGIN {if (n) printf "\ngeometric mean speedup of --max-exits %d over 1: %.3fx over %d models (%d threads)\n", e, p ^ (1 / n), n, t}'
