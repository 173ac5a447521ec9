#!/usr/bin/env bash
# The broad benchmark set: twenty models from nineteen families that the
# search was never tuned on, timed by bench/compare_zoo.sh (collage, native,
# every single backend and greedy, all with maximal regions, interleaved;
# ONNX Runtime alternating with them), cold-tuned first.
#   torchvision 0.14, random weights (scripts/check_torchvision.py's export,
#     opset 13, 1x3x224x224): squeezenet1_0 mobilenet_v3_small
#     shufflenet_v2_x1_0 efficientnet_b0 googlenet mnasnet1_0 regnet_y_400mf
#     resnext50_32x4d
#   PyTorch exports in the wild, random weights (scripts/export_wild.py,
#     opset 17, dynamic axes): gpt_tiny yolo_tiny unet_gn audio_enc
#   real weights from outside torchvision: PaddleOCR det, rec and cls
#     (PaddlePaddle, scripts/fetch_thirdparty.sh); openWakeWord's speech
#     embedding (tf2onnx) and mel front end, BlazeFace front and back
#     (tf2onnx), M-LSD tiny (tf2onnx) (scripts/fetch_bench_models.sh)
# Usage: bench/broad_set.sh [NAME ...]   (only these models; names as above,
#   ocr_det, oww_embedding, ...)
#   env: THREADS, ROUNDS, REPEAT as for compare_zoo.sh; OUT (default
#   bench/results/<date>-broad.md); BROAD_DIR keeps the exports (default:
#   $XDG_CACHE_HOME/collage/broad-set; they are deterministic).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/collage"
dir="${BROAD_DIR:-$cache_dir/broad-set}"
npm_models="$cache_dir/thirdparty/npm-models"
mkdir -p "$dir"
bash "$root/scripts/fetch_thirdparty.sh" "$cache_dir" > /dev/null
bash "$root/scripts/fetch_bench_models.sh" "$cache_dir" >&2

torchvision=(squeezenet1_0 mobilenet_v3_small shufflenet_v2_x1_0 efficientnet_b0 googlenet
  mnasnet1_0 regnet_y_400mf resnext50_32x4d)
for name in "${torchvision[@]}"; do
  [ -f "$dir/$name.onnx" ] && continue
  echo "== export $name" >&2
  /usr/bin/python3 -c "import sys, warnings; warnings.filterwarnings('ignore'); \
sys.path.insert(0, sys.argv[1]); from check_torchvision import export; \
export(sys.argv[2], 13, sys.argv[3])" "$root/scripts" "$name" "$dir" > /dev/null
done
wild=(gpt_tiny yolo_tiny unet_gn audio_enc)
for name in "${wild[@]}"; do
  [ -f "$dir/$name.onnx" ] && continue
  echo "== export $name" >&2
  /usr/bin/python3 "$root/scripts/export_wild.py" "$dir" "$name" > /dev/null
done

# NAME MODEL (as bench/models.sh takes it).
all=()
for name in "${torchvision[@]}"; do all+=("$name $dir/$name.onnx"); done
all+=("gpt_tiny $dir/gpt_tiny.onnx:1,64" "yolo_tiny $dir/yolo_tiny.onnx:1,3,320,320"
  "unet_gn $dir/unet_gn.onnx:1,3,128,128" "audio_enc $dir/audio_enc.onnx:1,80,400"
  "ocr_det ocr_det" "ocr_rec ocr_rec" "ocr_cls ocr_cls"
  "oww_embedding $npm_models/oww_embedding.onnx:1,76,32,1"
  "oww_melspectrogram $npm_models/oww_melspectrogram.onnx:1,1280"
  "blazeface_front_128 $npm_models/blazeface_front_128.onnx"
  "blazeface_back_256 $npm_models/blazeface_back_256.onnx"
  "mlsd_tiny_320 $npm_models/mlsd_tiny_320.onnx")
models=()
for entry in "${all[@]}"; do
  read -r name model <<< "$entry"
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
  models+=("$model")
done
[ ${#models[@]} -gt 0 ] || { echo "broad_set: no model named $*" >&2; exit 2; }
# BROAD_LIST=1: print the models (bench/op_gaps.sh takes them) instead of timing them.
if [ "${BROAD_LIST:-0}" = 1 ]; then
  echo "${models[*]}"
  exit 0
fi
OUT="${OUT:-$root/bench/results/$(date +%Y-%m-%d)-broad.md}" MODELS="${models[*]}" \
  bash "$root/bench/compare_zoo.sh"
