#!/usr/bin/env bash
# Times every backend on the regions the halide backend takes in the zoo
# and PaddleOCR models (bench_halide_regions) and writes
# bench/results/halide_regions-<date>.md.
#
#   bench/halide_regions.sh [BUILD_DIR]      (default: build)
# Environment: THREADS (default 2), ROUNDS (default 3), COLLAGE_ZOO_DIR,
# SCHEDULES=1 (also time halide under each of Halide's autoschedulers).
# Run on an idle machine (check `uptime`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${1:-$root/build}"
binary="$build/bench_halide_regions"
threads="${THREADS:-2}"
rounds="${ROUNDS:-3}"
extra=()
[ "${SCHEDULES:-0}" = 1 ] && extra+=(--schedules)
. "$here/models.sh"
if [[ ! -x "$binary" ]]; then
  echo "halide_regions.sh: $binary not found; build the bench_halide_regions target first" >&2
  exit 2
fi
out="$here/results/halide_regions-$(date +%F).md"
mkdir -p "$here/results"
{
  echo "# Every backend on the halide backend's regions"
  echo
  echo "\`bench/halide_regions.sh\` on $(date +%F), $threads threads, $rounds rounds (median of round medians, ms)."
  echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  models=()
  for m in mobilenet_v2 squeezenet1_1 bert_encoder resnet18 dcgan_generator; do
    read -r onnx _ <<< "$(model_args "$m")"
    [ -n "${onnx:-}" ] && models+=("$onnx")
  done
  "$binary" --threads "$threads" --rounds "$rounds" "${extra[@]}" "${models[@]}"
  read -r onnx _ _ shape <<< "$(model_args ocr_cls)"
  if [ -n "${onnx:-}" ]; then
    echo
    "$binary" --threads "$threads" --rounds "$rounds" "${extra[@]}" --input-shape "$shape" "$onnx"
  fi
} > "$out"
echo "wrote $out"
