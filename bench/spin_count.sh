#!/usr/bin/env bash
# libgomp's spin before a worker sleeps, side by side: each model under each
# strategy, `collage run` with GOMP_SPINCOUNT=1000 and with libgomp's default
# (300000, about 3 ms), in turn (A B A B ...), ROUNDS times; prints per
# cell the median of the runs' medians, their range, and default/short.
#   bench/spin_count.sh [MODEL.onnx ...]   (default: the zoo's models)
#   env: COLLAGE (default build/collage), ROUNDS (default 3), REPEAT (runs
#   per `collage run`, default 40), THREADS (default 2), STRATEGIES
#   (default "single:onednn greedy:xnnpack,onednn,native")
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
collage=$(realpath "${COLLAGE:-$root/build/collage}")
source "$root/bench/models.sh"
rounds=${ROUNDS:-3}
repeat=${REPEAT:-40}
threads=${THREADS:-2}
read -r -a strategies <<< "${STRATEGIES:-single:onednn greedy:xnnpack,onednn,native}"
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  for name in squeezenet1_1 resnet18 mobilenet_v2 dcgan_generator bert_encoder resnet50; do
    models+=("$zoo/$name/model.onnx")
  done
fi
raw="$work/runs"
echo "load before: $(uptime)"
for model in "${models[@]}"; do
  name=$(basename "$(dirname "$model")")
  for strategy in "${strategies[@]}"; do
    for ((round = 1; round <= rounds; round++)); do
      for spin in 1000 default; do
        env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT \
          $([ "$spin" = default ] || echo "GOMP_SPINCOUNT=$spin") \
          "$collage" run "$model" --strategy "$strategy" --threads "$threads" --repeat "$repeat" \
          | sed -n "s/^latency over [0-9]* runs: median \([0-9.]*\) ms.*/$name $strategy $spin \1/p" \
          >> "$raw"
      done
    done
  done
done
echo "load after: $(uptime)"
echo "| model | strategy | GOMP_SPINCOUNT=1000 ms (range) | default ms (range) | default/1000 |"
echo "|---|---|---|---|---|"
/usr/bin/python3 - "$raw" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    model, strategy, spin, ms = line.split()
    if (model, strategy) not in order:
        order.append((model, strategy))
    runs[(model, strategy, spin)].append(float(ms))
for model, strategy in order:
    short, default = runs[(model, strategy, "1000")], runs[(model, strategy, "default")]
    if not short or not default:
        continue
    a, b = statistics.median(short), statistics.median(default)
    print(f"| {model} | {strategy} | {a:.3f} ({min(short):.3f}-{max(short):.3f}) "
          f"| {b:.3f} ({min(default):.3f}-{max(default):.3f}) | {b / a:.3f} |")
PY
