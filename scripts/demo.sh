#!/usr/bin/env bash
# `make demo`: tune real models with every backend, compare every strategy
# side by side (and ONNX Runtime, when npm could install it), draw the plan and
# write its HTML report.
# Usage: scripts/demo.sh COLLAGE_BINARY ZOO_DIR
set -euo pipefail
collage="$1"
zoo="$2"
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/collage"
out="$cache_dir/demo"
threads="${THREADS:-$(nproc)}"
mkdir -p "$out"
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/fetch_thirdparty.sh" "$cache_dir"

for model in resnet50 mobilenet_v2; do
  onnx="$zoo/$model/model.onnx"
  echo
  echo "=== $model: tuning with all backends at $threads threads"
  "$collage" tune "$onnx" --backends all --threads "$threads" -o "$out/$model.plan.json"
  echo
  echo "=== $model: every strategy side by side"
  "$collage" compare "$onnx" --backends all --threads "$threads" --repeat 20 \
    --json "$out/$model.compare.json" -q
  if [ -d "$cache_dir/npm/node_modules/onnxruntime-node" ]; then
    ort="$(node "$here/ort_runner.js" "$onnx" --input "input=$zoo/$model/input.npy" \
      --threads "$threads" --repeat 20 --modules "$cache_dir/npm/node_modules")"
    median="$(echo "$ort" | sed 's/.*"median_ms":\([0-9.]*\).*/\1/')"
    printf 'onnxruntime (CPU, %s threads): median %.3f ms\n' "$threads" "$median"
  fi
  "$collage" show "$out/$model.plan.json" --format svg -o "$out/$model.plan.svg" > /dev/null
  # The report: the graph by backend, each partition's details, the
  # strategies compare measured and one run's timeline, in one HTML file.
  "$collage" run "$onnx" --plan "$out/$model.plan.json" --input "input=$zoo/$model/input.npy" \
    --threads "$threads" --repeat 10 --profile "$out/$model.trace.json" > /dev/null
  "$collage" show "$out/$model.plan.json" --format html --profile "$out/$model.trace.json" \
    --compare "$out/$model.compare.json" -o "$out/$model.report.html" > /dev/null
  echo "plan: $out/$model.plan.json   drawing: $out/$model.plan.svg"
  echo "report: $out/$model.report.html  (open it in a browser: select a partition for its details)"
  echo "      (collage show $out/$model.plan.json  lists partitions, costs and alternatives)"
done

# A quantized model: ResNet-18 quantized to int8 (QOperator form, calibrated
# on random inputs), tuned, and run against its float original.
echo
echo "=== resnet18 int8 (scripts/quantize_model.py): tuning, then int8 against float32"
/usr/bin/python3 "$here/quantize_model.py" "$zoo/resnet18/model.onnx" "$out/resnet18_int8.onnx" \
  --format qoperator --collage "$collage" --threads "$threads"
for variant in resnet18_int8 resnet18; do
  onnx="$out/$variant.onnx"
  [ "$variant" = resnet18 ] && onnx="$zoo/resnet18/model.onnx"
  "$collage" tune "$onnx" --backends all --threads "$threads" -q -o "$out/$variant.plan.json"
  printf '%-14s ' "$variant"
  "$collage" run "$onnx" --plan "$out/$variant.plan.json" --input "input=$zoo/resnet18/input.npy" \
    --threads "$threads" --repeat 20 | grep '^latency'
done
echo "plan: $out/resnet18_int8.plan.json  (collage show lists it with its int8 partitions counted per backend)"
