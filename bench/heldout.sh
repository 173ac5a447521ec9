#!/usr/bin/env bash
# Runs bench/compare_zoo.sh on torchvision architectures outside the zoo:
# each is exported to ONNX as scripts/check_torchvision.py exports it (random
# weights, seeded; opset 13; input x of 1x3x224x224), then tuned cold and timed
# against its baselines and ONNX Runtime like the zoo models.
# Usage: bench/heldout.sh [MODEL ...]   (torchvision.models constructor names;
#   default: squeezenet1_0 mobilenet_v3_small shufflenet_v2_x1_0
#   efficientnet_b0 googlenet mnasnet1_0 regnet_y_400mf)
#   env: THREADS, ROUNDS, REPEAT, OUT as for compare_zoo.sh; HELDOUT_DIR keeps
#   the exports (default: a scratch directory removed on exit).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(squeezenet1_0 mobilenet_v3_small shufflenet_v2_x1_0
  efficientnet_b0 googlenet mnasnet1_0 regnet_y_400mf)
dir="${HELDOUT_DIR:-}"
if [ -z "$dir" ]; then
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
models=()
for name in "${names[@]}"; do
  if [ ! -f "$dir/$name.onnx" ]; then
    echo "== export $name"
    /usr/bin/python3 -c "import sys, warnings; warnings.filterwarnings('ignore'); \
sys.path.insert(0, sys.argv[1]); from check_torchvision import export; \
export(sys.argv[2], 13, sys.argv[3])" "$root/scripts" "$name" "$dir" > /dev/null
  fi
  models+=("$dir/$name.onnx")
done
OUT="${OUT:-$root/bench/results/$(date +%Y-%m-%d)-heldout.md}" MODELS="${models[*]}" \
  bash "$root/bench/compare_zoo.sh"
