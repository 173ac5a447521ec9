#!/usr/bin/env bash
# What adding halide to the search gives: each model is tuned twice into one
# measurement cache (every backend; every backend but halide), and the two
# plans kept are replayed in alternation (with, without, with, ...), ROUNDS
# rounds of REPEAT runs. Prints one line per run and a table of the medians
# of the round medians with the ratio and the geometric mean.
#
#   bench/halide_in_search.sh [COLLAGE_BINARY]     (default build/collage)
# Environment: THREADS (default 2), ROUNDS (default 3), REPEAT (default 30),
# COLLAGE_ZOO_DIR. Run on an idle machine (check `uptime`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
collage="${1:-$(dirname "$here")/build/collage}"
threads="${THREADS:-2}"
rounds="${ROUNDS:-3}"
repeat="${REPEAT:-30}"
zoo="${COLLAGE_ZOO_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/collage/zoo}"
paddle="${XDG_CACHE_HOME:-$HOME/.cache}/collage/thirdparty/paddleocr"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
without="$("$collage" backends | awk '$2 ~ /^(library|graph|compiler)$/ && $1 != "halide" {print $1}' | paste -sd,)"

. "$here/models.sh"
declare -A models
for m in mobilenet_v2 squeezenet1_1 bert_encoder resnet18 ocr_cls ocr_rec; do
  read -r onnx _ _ shape <<< "$(model_args "$m")"
  [ -n "${onnx:-}" ] && models[$m]="$onnx${shape:+ --input-shape $shape}"
done

echo "| model | with halide ms | without ms | speedup | tune with / without s |"
echo "|---|---|---|---|---|"
product=1
count=0
for m in "${!models[@]}"; do
  # shellcheck disable=SC2086
  set -- ${models[$m]}
  start=$(date +%s)
  "$collage" tune "$@" --backends all --threads "$threads" --cache "$work/cache.sqlite" -q \
    --no-verify -o "$work/$m.with.json" > /dev/null
  middle=$(date +%s)
  "$collage" tune "$@" --backends "$without" --threads "$threads" --cache "$work/cache.sqlite" \
    -q --no-verify -o "$work/$m.without.json" > /dev/null
  end=$(date +%s)
  for r in $(seq "$rounds"); do
    for v in with without; do
      "$collage" run "$@" --plan "$work/$m.$v.json" --threads "$threads" --repeat "$repeat" \
        --warmup 3 | awk -v m="$m" -v v="$v" -v r="$r" '/^latency/ {print m, v, r, $6}' >> "$work/runs"
      tail -1 "$work/runs" >&2
    done
  done
  a=$(awk -v m="$m" '$1 == m && $2 == "with" {print $4}' "$work/runs" | median)
  b=$(awk -v m="$m" '$1 == m && $2 == "without" {print $4}' "$work/runs" | median)
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
  product=$(awk -v p="$product" -v r="$ratio" 'BEGIN {print p * r}')
  count=$((count + 1))
  echo "| $m | $a | $b | ${ratio}x | $((middle - start)) / $((end - middle)) |"
done
awk -v p="$product" -v n="$count" -v t="$threads" \
  'BEGIN {printf "\ngeometric mean speedup from halide: %.3fx over %d models (%d threads)\n", p ^ (1 / n), n, t}'
