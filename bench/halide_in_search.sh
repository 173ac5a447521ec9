#!/usr/bin/env bash
# What adding halide to the search gives: each model is tuned twice into one
# measurement cache (every backend; every backend but halide), and the two
# plans kept are replayed in alternation (with, without, with, ...), ROUNDS
# rounds of REPEAT runs. Prints one line per run and a table of the medians
# of the round medians with the ratio and the geometric mean.
#
#   bench/halide_in_search.sh [COLLAGE_BINARY]     (default build/collage)
# Environment: THREADS (default 2), ROUNDS (default 3), REPEAT (default 30),
# MODELS (default: the zoo and the PaddleOCR models, see bench/models.sh),
# CACHE (the measurement cache both tunes share; default: collage's own, so
# a tune already done is reused; 'fresh' for a new one, a cold tune),
# COLLAGE_ZOO_DIR. Run on an idle machine (check `uptime`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
collage="${1:-$(dirname "$here")/build/collage}"
threads="${THREADS:-2}"
rounds="${ROUNDS:-3}"
repeat="${REPEAT:-30}"
. "$here/models.sh"
cache=()
case "${CACHE:-}" in
  "") ;;
  fresh) cache=(--cache "$work/cache.sqlite") ;;
  *) cache=(--cache "$CACHE") ;;
esac
without="$("$collage" backends | awk '$2 ~ /^(library|graph|compiler)$/ && $1 != "halide" {print $1}' | paste -sd,)"

declare -A models
names=()
for m in ${MODELS:-$default_models}; do
  read -r onnx _ _ shape <<< "$(model_args "$m")"
  [ -n "${onnx:-}" ] || { echo "skip $m: not available (make zoo)" >&2; continue; }
  name="$(model_name "$m")"
  names+=("$name")
  models[$name]="$onnx${shape:+ --input-shape $shape}"
done

declare -A tune_with tune_without
for m in "${names[@]}"; do
  # shellcheck disable=SC2086
  set -- ${models[$m]}
  echo "== $m tune" >&2
  start=$(date +%s)
  "$collage" tune "$@" --backends all --threads "$threads" "${cache[@]}" -q \
    --no-verify -o "$work/$m.with.json" > /dev/null
  middle=$(date +%s)
  "$collage" tune "$@" --backends "$without" --threads "$threads" "${cache[@]}" \
    -q --no-verify -o "$work/$m.without.json" > /dev/null
  tune_with[$m]=$((middle - start))
  tune_without[$m]=$(($(date +%s) - middle))
done

# Each round replays every model's two plans in turn, so that a slow spell
# of the machine falls on one round of a model and the median leaves it out.
for r in $(seq "$rounds"); do
  for m in "${names[@]}"; do
    # shellcheck disable=SC2086
    set -- ${models[$m]}
    for v in with without; do
      "$collage" run "$@" --plan "$work/$m.$v.json" --threads "$threads" --repeat "$repeat" \
        --warmup 3 | awk -v m="$m" -v v="$v" -v r="$r" '/^latency/ {print m, v, r, $6}' >> "$work/runs"
      tail -1 "$work/runs" >&2
    done
  done
done

echo "| model | with halide ms | without ms | speedup | halide partitions | tune with / without s |"
echo "|---|---|---|---|---|---|"
product=1
count=0
for m in "${names[@]}"; do
  a=$(awk -v m="$m" '$1 == m && $2 == "with" {print $4}' "$work/runs" | median)
  b=$(awk -v m="$m" '$1 == m && $2 == "without" {print $4}' "$work/runs" | median)
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
  product=$(awk -v p="$product" -v r="$ratio" 'BEGIN {print p * r}')
  count=$((count + 1))
  halide=$(/usr/bin/python3 -c "import json, sys
parts = json.load(open(sys.argv[1]))['partitions']
print(sum(p['backend'] == 'halide' for p in parts), 'of', len(parts))" "$work/$m.with.json")
  echo "| $m | $a | $b | ${ratio}x | $halide | ${tune_with[$m]} / ${tune_without[$m]} |"
done
awk -v p="$product" -v n="$count" -v t="$threads" \
  'BEGIN {printf "\ngeometric mean speedup from halide: %.3fx over %d models (%d threads)\n", p ^ (1 / n), n, t}'
