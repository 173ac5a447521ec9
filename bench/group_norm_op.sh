#!/usr/bin/env bash
# A U-Net with GroupNorm, as PyTorch exports it before opset 18 (the chain
# that fuse_group_norm folds) and as one GroupNormalization op per norm
# (opset 21, written by bench/group_norm_op.py), tuned and run by each
# collage binary given: each binary tunes each model (cold or from the
# measurement cache), then the kept plans run in alternation, ROUNDS times,
# REPEAT runs each, and the medians are printed in ms.
# Usage: bench/group_norm_op.sh BINARY...   (default: build/collage)
#   env: THREADS (2), ROUNDS (3), REPEAT (30), TUNE_ARGS ("--budget 30")
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/collage"
threads="${THREADS:-2}"
rounds="${ROUNDS:-3}"
repeat="${REPEAT:-30}"
read -r -a tune_args <<< "${TUNE_ARGS:---budget 30}"
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=("$root/build/collage")
chain="$cache_dir/broad-set/unet_gn.onnx"
[ -f "$chain" ] || { echo "group_norm_op: $chain missing (bash bench/broad_set.sh exports it)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/bench/group_norm_op.py" "$chain" "$work/unet_gn_op21.onnx" >&2
cp "$chain" "$work/unet_gn_chain17.onnx"
models=(unet_gn_chain17 unet_gn_op21)
shape=(--input-shape x=1,3,128,128)
declare -A times failed
for b in "${!binaries[@]}"; do
  for model in "${models[@]}"; do
    echo "== tune $model with ${binaries[$b]}" >&2
    if ! "${binaries[$b]}" tune "$work/$model.onnx" "${shape[@]}" --backends all \
      --threads "$threads" "${tune_args[@]}" -q -o "$work/$model.$b.plan.json" > /dev/null \
      2> "$work/tune.err"; then
      failed[$b,$model]="$(tail -1 "$work/tune.err" | cut -c1-160)"
      echo "tune failed: ${failed[$b,$model]}" >&2
    fi
  done
done
for ((r = 0; r < rounds; ++r)); do
  for b in "${!binaries[@]}"; do
    for model in "${models[@]}"; do
      [ -z "${failed[$b,$model]:-}" ] || continue
      ms="$("${binaries[$b]}" run "$work/$model.onnx" "${shape[@]}" --plan "$work/$model.$b.plan.json" \
        --threads "$threads" --repeat "$repeat" |
        sed -n 's/^latency over [0-9]* runs: median \([0-9.]*\) ms.*/\1/p')"
      times[$b,$model]="${times[$b,$model]:-} $ms"
    done
  done
done
echo "$threads threads, $rounds rounds of $repeat runs, median ms per round"
echo
echo "| binary | model | nodes run | kept plan | medians (ms) |"
echo "|---|---|---|---|---|"
for b in "${!binaries[@]}"; do
  for model in "${models[@]}"; do
    if [ -n "${failed[$b,$model]:-}" ]; then
      echo "| ${binaries[$b]} | $model | - | tune failed: ${failed[$b,$model]//|/\\|} | - |"
      continue
    fi
    plan="$work/$model.$b.plan.json"
    read -r nodes what <<< "$(/usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
nodes = sum(len(part["nodes"]) for part in p["partitions"])
backends = sorted({part["backend"] for part in p["partitions"]})
print(nodes, p["strategy"] + " (" + ", ".join(backends) + ")")' "$plan")"
    echo "| ${binaries[$b]} | $model | $nodes | $what | ${times[$b,$model]# } |"
  done
done
