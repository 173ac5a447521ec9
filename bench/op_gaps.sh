#!/usr/bin/env bash
# Per op class, the time collage's kernels and ONNX Runtime's kernels spend on
# each model (bench/op_gaps.py), then summed over the models: where the kept
# plans lose to ONNX Runtime. Each model is tuned (from the measurement
# cache when it was tuned before), its plan run under `collage run --profile`
# and the model run under ONNX Runtime's profiler, same input, same threads.
# Models as bench/models.sh takes them (zoo or PaddleOCR names, PATH.onnx,
# PATH.onnx:DIMS); bench/broad_set.sh's set with MODELS unset and BROAD=1.
# Usage: bench/op_gaps.sh [COLLAGE_BINARY]
#   env: MODELS, BROAD=1, THREADS (2), REPEAT (traced runs, 50), OUT (the
#   markdown file; default stdout only), TUNE_ARGS (more options for each
#   tune, e.g. "--budget 30" as bench/broad_set.sh tunes)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
collage="${1:-$root/build/collage}"
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/collage"
threads="${THREADS:-2}"
repeat="${REPEAT:-50}"
modules="$cache_dir/npm/node_modules"
[ -d "$modules/onnxruntime-node" ] ||
  { echo "op_gaps: needs onnxruntime-node (scripts/fetch_thirdparty.sh)" >&2; exit 2; }
paddle="$cache_dir/thirdparty/paddleocr"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$root/bench/models.sh"
if [ -z "${MODELS:-}" ] && [ "${BROAD:-0}" = 1 ]; then
  MODELS="$(BROAD_LIST=1 bash "$root/bench/broad_set.sh")"
fi
models="${MODELS:-$default_models}"

report="$work/report.md"
summaries=()
for model in $models; do
  read -r onnx input_name input_npy shape <<< "$(model_args "$model")"
  [ -n "${onnx:-}" ] || { echo "skip $model: not available" >&2; continue; }
  name="$(model_name "$model")"
  extra=()
  [ -n "${shape:-}" ] && extra=(--input-shape "$shape")
  read -r -a more_inputs <<< "$(ort_more_inputs "$name" | tr '\n' ' ')"
  echo "== $name" >&2
  read -r -a tune_args <<< "${TUNE_ARGS:-}"
  "$collage" tune "$onnx" "${extra[@]}" "${tune_args[@]}" --backends all --threads "$threads" -q \
    -o "$work/$name.plan.json" > /dev/null
  collage_ms="$("$collage" run "$onnx" --plan "$work/$name.plan.json" \
    --input "$input_name=$input_npy" "${more_inputs[@]}" --threads "$threads" \
    --repeat "$repeat" --warmup 10 --profile "$work/$name.trace.json" |
    sed -n 's/^latency over [0-9]* runs: median \([0-9.]*\) ms.*/\1/p')"
  ort_ms="$(node "$root/scripts/ort_runner.js" "$onnx" --input "$input_name=$input_npy" \
    "${more_inputs[@]}" --threads "$threads" --repeat "$repeat" --warmup 10 \
    --modules "$modules" --profile "$work/$name.ort" 2> /dev/null |
    /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["median_ms"])')"
  /usr/bin/python3 "$root/bench/op_gaps.py" --model "$onnx" --plan "$work/$name.plan.json" \
    --collage "$work/$name.trace.json" --ort "$(ls "$work/$name.ort"_*.json | head -1)" \
    --collage-ms "$collage_ms" --ort-ms "$ort_ms" --title "$name (kept plan: $(
      /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["strategy"])' \
        "$work/$name.plan.json"))" --json "$work/$name.gaps.json" >> "$report"
  summaries+=("$work/$name.gaps.json")
done
[ ${#summaries[@]} -gt 0 ] || { echo "op_gaps: no model ran" >&2; exit 2; }
{
  echo "# Per op class: collage's kept plans against ONNX Runtime"
  echo
  echo "$(date +%Y-%m-%d), $(lscpu | sed -n 's/^Model name: *//p' | head -1), $threads threads,"
  echo "commit $(git -C "$root" rev-parse --short HEAD), $repeat traced runs per side${TUNE_ARGS:+, tuned with $TUNE_ARGS}."
  echo
  /usr/bin/python3 "$root/bench/op_gaps.py" --sum "${summaries[@]}"
  cat "$report"
} > "$work/out.md"
cat "$work/out.md"
if [ -n "${OUT:-}" ]; then cp "$work/out.md" "$OUT" && echo "written to $OUT" >&2; fi
