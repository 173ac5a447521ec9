#!/usr/bin/env bash
# Runs `collage compare` on every zoo model and, where npm's onnxruntime-node
# is installed, ONNX Runtime on the same model and input at the same thread
# count. Collage's strategies run interleaved inside `compare`; ONNX Runtime
# runs in rounds alternating with them (collage, ORT, collage, ORT, ...).
# Writes bench/results/<date>.md with the machine, threads and the table.
# Models: the zoo and the three PaddleOCR models (scripts/fetch_thirdparty.sh).
# Usage: bench/compare_zoo.sh [COLLAGE_BINARY] [ZOO_DIR]   (env: THREADS, ROUNDS, REPEAT)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
collage="${1:-$root/build/collage}"
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/collage"
zoo="${2:-$cache_dir/zoo}"
threads="${THREADS:-2}"
rounds="${ROUNDS:-3}"
repeat="${REPEAT:-20}"
models="${MODELS:-resnet18 resnet50 mobilenet_v2 squeezenet1_1 bert_encoder dcgan_generator ocr_det ocr_rec ocr_cls}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bash "$root/scripts/fetch_thirdparty.sh" "$cache_dir" > /dev/null
modules="$cache_dir/npm/node_modules"
paddle="$cache_dir/thirdparty/paddleocr"

# MODEL -> "ONNX_FILE INPUT_NAME INPUT_NPY [--input-shape NAME=DIMS]"; empty when missing.
model_args() {
  case "$1" in
    ocr_det|ocr_rec|ocr_cls)
      local file shape
      case "$1" in
        ocr_det) file=ch_PP-OCRv4_det_infer; shape=1,3,320,320 ;;
        ocr_rec) file=ch_PP-OCRv4_rec_infer; shape=1,3,48,320 ;;
        ocr_cls) file=ch_ppocr_mobile_v2.0_cls_infer; shape=1,3,48,192 ;;
      esac
      [ -f "$paddle/$file.onnx" ] || return 0
      /usr/bin/python3 -c "
import numpy as np
np.save('$work/$1.npy', np.random.RandomState(0).rand(*[int(d) for d in '$shape'.split(',')]).astype(np.float32))"
      echo "$paddle/$file.onnx x $work/$1.npy --input-shape x=$shape" ;;
    *)
      local dir="$zoo/$1"
      [ -f "$dir/model.onnx" ] || return 0
      local input_name
      input_name="$(/usr/bin/python3 -c "import json;print(json.load(open('$dir/meta.json'))['input_name'])")"
      echo "$dir/model.onnx $input_name $dir/input.npy" ;;
  esac
}

for model in $models; do
  read -r onnx input_name input_npy shape_flags <<< "$(model_args "$model")"
  [ -n "${onnx:-}" ] || { echo "skip $model: not available (make zoo)"; continue; }
  extra=()
  [ -n "${shape_flags:-}" ] && extra=(--input-shape "${shape_flags#--input-shape }")
  # Tune once (fills the cache) so the timed rounds measure plans, not tuning.
  "$collage" tune "$onnx" "${extra[@]}" --backends all --threads "$threads" -q --no-verify \
    -o "$work/$model.plan.json" > /dev/null
  for r in $(seq 1 "$rounds"); do
    echo "== $model round $r/$rounds"
    "$collage" compare "$onnx" "${extra[@]}" --backends all --threads "$threads" --repeat "$repeat" \
      -q --json "$work/$model.collage.$r.json" > /dev/null
    if [ -d "$modules/onnxruntime-node" ]; then
      node "$root/scripts/ort_runner.js" "$onnx" --input "$input_name=$input_npy" \
        --threads "$threads" --repeat "$repeat" --modules "$modules" > "$work/$model.ort.$r.json"
    fi
  done
done

out="$root/bench/results/$(date +%Y-%m-%d).md"
/usr/bin/python3 "$root/bench/summarize_compare.py" "$work" "$threads" "$rounds" "$repeat" > "$out"
cat "$out"
echo "written to $out"
