#!/usr/bin/env bash
# Runs `collage compare` on every zoo model and, where npm's onnxruntime-node
# is installed, ONNX Runtime on the same model and input at the same thread
# count. Collage's strategies run interleaved inside `compare`; ONNX Runtime
# runs in rounds alternating with them (collage, ORT, collage, ORT, ...).
# Every model is tuned first; then each round times every model in turn, so
# that a slow spell of the machine (a minute or two) falls on one round of a
# model, not on all of them, and the median over rounds leaves it out.
# Writes bench/results/<date>.md with the machine, threads and the table.
# Models: the zoo and the three PaddleOCR models (scripts/fetch_thirdparty.sh),
# or MODELS="a.onnx b.onnx:1,3,224,224 resnet18 ..." (see bench/models.sh).
# Usage: bench/compare_zoo.sh [COLLAGE_BINARY] [ZOO_DIR]
#   (env: THREADS, ROUNDS, REPEAT, MODELS, OUT: the results file; TUNE_ARGS:
#   more options for the first tune, e.g. "--budget 30")
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
collage="${1:-$root/build/collage}"
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/collage"
zoo="${2:-$cache_dir/zoo}"
threads="${THREADS:-2}"
rounds="${ROUNDS:-3}"
repeat="${REPEAT:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bash "$root/scripts/fetch_thirdparty.sh" "$cache_dir" > /dev/null
modules="$cache_dir/npm/node_modules"
paddle="$cache_dir/thirdparty/paddleocr"

. "$root/bench/models.sh"
models="${MODELS:-$default_models}"

# "NAME ONNX INPUT_NAME INPUT_NPY [SHAPE]" per available model.
available=()
for model in $models; do
  read -r onnx input_name input_npy shape <<< "$(model_args "$model")"
  [ -n "${onnx:-}" ] || { echo "skip $model: not available (make zoo)"; continue; }
  available+=("$(model_name "$model") $onnx $input_name $input_npy ${shape:-}")
done

for entry in "${available[@]}"; do
  read -r name onnx input_name input_npy shape <<< "$entry"
  extra=()
  [ -n "${shape:-}" ] && extra=(--input-shape "$shape")
  # Tune once, as a user does (fills the cache, so the timed rounds measure
  # plans, not tuning): its plan file holds what tune keeps after timing the
  # searched plan beside the single backends, each in its compute layouts.
  echo "== $name tune"
  start=$(date +%s.%N)
  read -r -a tune_args <<< "${TUNE_ARGS:-}"
  "$collage" tune "$onnx" "${extra[@]}" --backends all --threads "$threads" -q \
    "${tune_args[@]}" -o "$work/$name.plan.json" > /dev/null
  echo "$name $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')" >> "$work/tune_seconds.txt"
done

for r in $(seq 1 "$rounds"); do
  for entry in "${available[@]}"; do
    read -r name onnx input_name input_npy shape <<< "$entry"
    extra=()
    [ -n "${shape:-}" ] && extra=(--input-shape "$shape")
    echo "== $name round $r/$rounds"
    "$collage" compare "$onnx" "${extra[@]}" --backends all --threads "$threads" --repeat "$repeat" \
      -q --json "$work/$name.collage.$r.json" > /dev/null
    if [ -d "$modules/onnxruntime-node" ]; then
      read -r -a more_inputs <<< "$(ort_more_inputs "$name" | tr '\n' ' ')"
      node "$root/scripts/ort_runner.js" "$onnx" --input "$input_name=$input_npy" "${more_inputs[@]}" \
        --threads "$threads" --repeat "$repeat" --modules "$modules" > "$work/$name.ort.$r.json"
    fi
  done
done

out="${OUT:-$root/bench/results/$(date +%Y-%m-%d).md}"
{
  /usr/bin/python3 "$root/bench/summarize_compare.py" "$work" "$threads" "$rounds" "$repeat"
  # Cold when the measurement cache held nothing of these models, warm otherwise.
  echo
  echo "Tune times (\`collage tune --backends all --threads $threads${TUNE_ARGS:+ $TUNE_ARGS}\`, seconds):"
  echo
  echo "| model | tune s |"
  echo "|---|---|"
  while read -r name seconds; do printf '| %s | %.0f |\n' "$name" "$seconds"; done \
    < "$work/tune_seconds.txt"
} > "$out"
cat "$out"
echo "written to $out"
