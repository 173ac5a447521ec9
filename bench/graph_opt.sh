#!/usr/bin/env bash
# What the graph optimizations (--graph-opt) buy on each zoo and PaddleOCR
# model: node counts, import time, native latency and the tuned collage
# plan's latency at --graph-opt none and all, and whether the outputs still
# match the reference (PyTorch's for the zoo, ONNX Runtime's for PaddleOCR).
# The two levels run interleaved (none, all, none, all, ...) in ROUNDS
# rounds of REPEAT timed runs each; the table gives the median of the
# round medians and the ratio none/all (> 1: optimization is faster).
# Writes bench/results/graph_opt-<date>.md.
# Usage: bench/graph_opt.sh [COLLAGE_BINARY]
#   (env: THREADS, ROUNDS, REPEAT, MODELS, TUNE_FLAGS — extra `tune` flags, both levels alike)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
collage="${1:-$root/build/collage}"
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/collage"
zoo="$cache_dir/zoo"
paddle="$cache_dir/thirdparty/paddleocr"
modules="$cache_dir/npm/node_modules"
threads="${THREADS:-2}"
rounds="${ROUNDS:-3}"
repeat="${REPEAT:-20}"
read -r -a tune_flags <<< "${TUNE_FLAGS:---budget 30}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
levels="none all"

. "$root/bench/models.sh"
models="${MODELS:-$default_models}"

# The reference outputs of MODEL's input: PyTorch's for a zoo model, ONNX
# Runtime's for a PaddleOCR model; empty when there is none.
reference_npy() {
  local model=$1 onnx=$2 input_npy=$3
  case "$model" in
    ocr_*)
      [ -d "$modules/onnxruntime-node" ] || return 0
      node "$root/scripts/ort_runner.js" "$onnx" --input "x=$input_npy" --threads "$threads" \
        --repeat 0 --warmup 0 --save-outputs "$work/ort_$model" --modules "$modules" > /dev/null
      ls "$work/ort_$model"/*.npy | head -1 ;;
    *) echo "$zoo/$model/output.npy" ;;
  esac
}

# "MEDIAN MIN" of a `collage run` latency line.
latency_ms() { sed -n 's/.*median \([0-9.]*\) ms, min \([0-9.]*\) ms.*/\1 \2/p' | head -1; }

printf 'model|level|nodes|import_s|native_ms|native_min_ms|collage_ms|collage_min_ms|max_rel_error\n' > "$work/rows"
for model in $models; do
  read -r onnx input_name input_npy shape <<< "$(model_args "$model")"
  [ -n "${onnx:-}" ] || { echo "skip $model: not available (make zoo)" >&2; continue; }
  reference="$(reference_npy "$model" "$onnx" "$input_npy")"
  [ -n "$reference" ] || { echo "skip $model: no reference outputs (onnxruntime-node)" >&2; continue; }
  flags=(--threads "$threads" --input "$input_name=$input_npy")
  [ -n "${shape:-}" ] && flags+=(--input-shape "$shape")
  for level in $levels; do
    echo "== $model: tune at --graph-opt $level" >&2
    "$collage" tune "$onnx" ${shape:+--input-shape "$shape"} --graph-opt "$level" \
      --backends all --threads "$threads" -q --no-verify "${tune_flags[@]}" \
      -o "$work/$model.$level.plan.json" > /dev/null
  done
  for r in $(seq 1 "$rounds"); do
    for level in $levels; do
      start=$(date +%s.%N)
      nodes=$("$collage" info "$onnx" ${shape:+--input-shape "$shape"} --graph-opt "$level" |
        sed -n 's/^operators: \([0-9]*\) nodes.*/\1/p')
      import_s=$(awk "BEGIN { print $(date +%s.%N) - $start }")
      native=$("$collage" run "$onnx" "${flags[@]}" --graph-opt "$level" --repeat "$repeat" |
        latency_ms)
      out="$work/out.$model.$level"
      rm -rf "$out"
      plan=$("$collage" run "$onnx" "${flags[@]}" --plan "$work/$model.$level.plan.json" \
        --repeat "$repeat" --save-outputs "$out" | latency_ms)
      error=$(/usr/bin/python3 -c "
import numpy as np, glob
ref = np.load('$reference').astype(np.float64)
got = np.load(sorted(glob.glob('$out/*.npy'))[0]).astype(np.float64)
print('%.2e' % (np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)))")
      printf '%s|%s|%s|%s|%s|%s|%s\n' "$model" "$level" "$nodes" "$import_s" "${native// /|}" \
        "${plan// /|}" "$error" >> "$work/rows"
    done
  done
done

out="$root/bench/results/graph_opt-$(date +%Y-%m-%d).md"
/usr/bin/python3 - "$work/rows" "$threads" "$rounds" "$repeat" > "$out" <<'PY'
import sys, statistics, collections, platform, subprocess
rows_file, threads, rounds, repeat = sys.argv[1:]
rows = [line.rstrip('\n').split('|') for line in open(rows_file)][1:]
by = collections.defaultdict(lambda: collections.defaultdict(list))
for model, level, nodes, import_s, native, native_min, plan, plan_min, error in rows:
    by[model][level].append((int(nodes), float(import_s), float(native), float(native_min),
                             float(plan), float(plan_min), float(error)))
cpu = subprocess.run(['sh', '-c', "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"],
                     capture_output=True, text=True).stdout.strip()
print('# Graph optimizations: --graph-opt none vs all\n')
print(f'{cpu}, {threads} threads; {rounds} interleaved rounds (none, all, none, all, ...) of '
      f'{repeat} timed runs. Each cell: median of the round medians, and in brackets the '
      'fastest run of all rounds (less sensitive to a busy machine); the ratio is none / all '
      'of the medians (> 1: the optimized graph is faster).\n')
print('| model | nodes none -> all | `info` s none / all | native ms none / all (ratio) | '
      'collage plan ms none / all (ratio) | max rel. error none / all |')
print('|---|---|---|---|---|---|')
for model, levels in by.items():
    n, a = levels['none'], levels['all']
    col = lambda v, i: [x[i] for x in v]
    med = lambda v, i: statistics.median(col(v, i))
    cell = lambda v, i: f'{med(v, i):.3f} [{min(col(v, i + 1)):.3f}]'
    print(f'| {model} | {n[0][0]} -> {a[0][0]} | {med(n, 1):.2f} / {med(a, 1):.2f} | '
          f'{cell(n, 2)} / {cell(a, 2)} ({med(n, 2) / med(a, 2):.2f}x) | '
          f'{cell(n, 4)} / {cell(a, 4)} ({med(n, 4) / med(a, 4):.2f}x) | '
          f'{max(col(n, 6)):.1e} / {max(col(a, 6)):.1e} |')
PY
cat "$out"
echo "written to $out"
