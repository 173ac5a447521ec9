#!/usr/bin/env bash
# Runs bench/compare_zoo.sh on torchvision architectures outside the zoo:
# each is exported to ONNX (random weights, seeded; opset 13; input x of
# 1x3x224x224) with Debian's python3-torchvision, then tuned cold and timed
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
    /usr/bin/python3 - "$name" "$dir/$name.onnx" <<'PY'
import sys
import warnings

import torch
import torchvision

warnings.filterwarnings("ignore")
name, path = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
extra = {"aux_logits": False, "init_weights": True} if name in ("googlenet", "inception_v3") else {}
model = getattr(torchvision.models, name)(**extra).eval()
torch.onnx.export(model, torch.rand(1, 3, 224, 224), path, opset_version=13,
                  input_names=["x"], output_names=["y"])
PY
  fi
  models+=("$dir/$name.onnx")
done
OUT="${OUT:-$root/bench/results/$(date +%Y-%m-%d)-heldout.md}" MODELS="${models[*]}" \
  bash "$root/bench/compare_zoo.sh"
