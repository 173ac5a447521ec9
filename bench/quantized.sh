#!/usr/bin/env bash
# Quantized models against their float originals and against ONNX Runtime.
# Each zoo model is quantized by scripts/quantize_model.py in both forms
# (QOperator and QDQ; calibration on random inputs) and every one of the three
# models is tuned (`collage tune`); then each round runs, one after the other,
# collage on the float model, on the QOperator and on the QDQ model (each with
# its tuned plan) and ONNX Runtime on the same three, so that a slow spell of
# the machine falls on one round of every variant alike. Medians over rounds
# of each run's median. The zoo's int8 models that PyTorch's own quantization
# made (scripts/export_zoo.py, *_int8) are tuned and timed in the same rounds,
# collage against ONNX Runtime, beside their architecture's float zoo model.
# Usage: bench/quantized.sh [COLLAGE_BINARY]   (env: MODELS, zoo names, default
#   "resnet18 mobilenet_v2 squeezenet1_1 dcgan_generator"; THREADS (2), ROUNDS (5), REPEAT (20);
#   TUNE_ARGS: more `collage tune` options; OUT: the results file, default
#   bench/results/<date>-quantized.md; PYTORCH_MODELS: the zoo's int8 models
#   made by PyTorch, default "resnet18_int8 mobilenet_v2_int8 googlenet_int8",
#   those not exported skipped)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
collage="${1:-$root/build/collage}"
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/collage"
zoo="${COLLAGE_ZOO_DIR:-$cache_dir/zoo}"
modules="$cache_dir/npm/node_modules"
threads="${THREADS:-2}"
rounds="${ROUNDS:-5}"
repeat="${REPEAT:-20}"
models="${MODELS:-resnet18 mobilenet_v2 squeezenet1_1 dcgan_generator}"
pytorch_models=()
for name in ${PYTORCH_MODELS-resnet18_int8 mobilenet_v2_int8 googlenet_int8}; do
  [ -f "$zoo/$name/model.onnx" ] && pytorch_models+=("$name")
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
forms=(float qoperator qdq)
read -r -a tune_args <<< "${TUNE_ARGS:-}"
# Tunes MODEL into PLAN with every backend and the script's tune options.
tune_plan() {  # MODEL PLAN
  "$collage" tune "$1" --backends all --threads "$threads" -q "${tune_args[@]}" \
    -o "$2" > /dev/null
}

for name in $models; do
  [ -f "$zoo/$name/model.onnx" ] || { echo "quantized: no zoo model $name (make zoo)" >&2; exit 2; }
  cp "$zoo/$name/model.onnx" "$work/$name.float.onnx"
  for form in qoperator qdq; do
    echo "== $name: quantize ($form)" >&2
    /usr/bin/python3 "$root/scripts/quantize_model.py" "$zoo/$name/model.onnx" \
      "$work/$name.$form.onnx" --format "$form" --collage "$collage" > /dev/null
  done
  for form in "${forms[@]}"; do
    echo "== $name: tune ($form)" >&2
    tune_plan "$work/$name.$form.onnx" "$work/$name.$form.plan.json"
  done
done

for name in "${pytorch_models[@]}"; do
  echo "== $name: tune" >&2
  tune_plan "$zoo/$name/model.onnx" "$work/$name.plan.json"
done

# collage's median (ms) of one run of REPEAT.
collage_ms() {
  "$collage" run "$1" --plan "$2" --input "$3" --threads "$threads" --repeat "$repeat" \
    | awk '/^latency/ { print $6 }'
}
ort_ms() {
  node "$root/scripts/ort_runner.js" "$1" --input "$2" --threads "$threads" --repeat "$repeat" \
    --modules "$modules" | /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['median_ms'])"
}

for r in $(seq 1 "$rounds"); do
  for name in $models; do
    echo "== $name round $r/$rounds" >&2
    input="input=$zoo/$name/input.npy"
    for form in "${forms[@]}"; do
      collage_ms "$work/$name.$form.onnx" "$work/$name.$form.plan.json" "$input" \
        >> "$work/$name.$form.collage"
      if [ -d "$modules/onnxruntime-node" ]; then
        ort_ms "$work/$name.$form.onnx" "$input" >> "$work/$name.$form.ort"
      fi
    done
  done
  for name in "${pytorch_models[@]}"; do
    echo "== $name round $r/$rounds" >&2
    input="input=$zoo/$name/input.npy"
    collage_ms "$zoo/$name/model.onnx" "$work/$name.plan.json" "$input" >> "$work/$name.collage"
    if [ -d "$modules/onnxruntime-node" ]; then
      ort_ms "$zoo/$name/model.onnx" "$input" >> "$work/$name.ort"
    fi
  done
done

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.2f-%.2f", lo, hi }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

out="${OUT:-$root/bench/results/$(date +%Y-%m-%d)-quantized.md}"
{
  echo "# Quantized models: collage int8 vs collage float32 vs ONNX Runtime"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ); machine: $(lscpu | awk -F: '/Model name/ { gsub(/^ +/, "", $2); print $2 }'); flags: $(grep -o -w 'avx512f\|avx512_vnni\|avx2\|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "- threads: $threads; rounds: $rounds of $repeat runs each (median of the round medians; spread: min-max of the round medians)"
  echo "- models: the zoo's (torchvision and DCGAN's generator, random weights), quantized by scripts/quantize_model.py (uint8 activations per tensor, int8 weights per channel, calibration on 8 random inputs; a ConvTranspose, which has no QLinear op, stays float32 in the QOperator form)"
  echo "- command: \`THREADS=$threads ROUNDS=$rounds REPEAT=$repeat MODELS=\"$models\" bash bench/quantized.sh\`"
  echo
  echo "| model | collage f32 ms | collage int8 QOperator ms | collage int8 QDQ ms | ORT f32 ms | ORT int8 QOperator ms | ORT int8 QDQ ms | collage f32 / int8 (QOp, QDQ) | collage / ORT int8 (QOp, QDQ) |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for name in $models; do
    declare -A c o
    for form in "${forms[@]}"; do
      c[$form]=$(median "$work/$name.$form.collage")
      o[$form]=$( [ -f "$work/$name.$form.ort" ] && median "$work/$name.$form.ort" || echo -)
    done
    echo "| $name | ${c[float]} ($(spread "$work/$name.float.collage")) | ${c[qoperator]} ($(spread "$work/$name.qoperator.collage")) | ${c[qdq]} ($(spread "$work/$name.qdq.collage")) | ${o[float]} | ${o[qoperator]} | ${o[qdq]} | $(ratio "${c[float]}" "${c[qoperator]}"), $(ratio "${c[float]}" "${c[qdq]}") | $(ratio "${c[qoperator]}" "${o[qoperator]}"), $(ratio "${c[qdq]}" "${o[qdq]}") |"
  done
  if [ ${#pytorch_models[@]} -gt 0 ]; then
    echo
    echo "The zoo's int8 models made by PyTorch's post-training quantization (scripts/export_zoo.py), as PyTorch exports them (QDQ), beside the float zoo model of the same architecture where the runs above timed it:"
    echo
    echo "| model | collage int8 ms | ORT int8 ms | collage / ORT | collage f32 ms (zoo) | collage f32 / int8 |"
    echo "|---|---|---|---|---|---|"
    for name in "${pytorch_models[@]}"; do
      ci=$(median "$work/$name.collage")
      oi=$( [ -f "$work/$name.ort" ] && median "$work/$name.ort" || echo -)
      float_runs="$work/${name%_int8}.float.collage"
      cf=$( [ -f "$float_runs" ] && median "$float_runs" || echo -)
      echo "| $name | $ci ($(spread "$work/$name.collage")) | $oi | $(ratio "$ci" "$oi") | $cf | $(ratio "$cf" "$ci") |"
    done
  fi
} > "$out"
cat "$out"
