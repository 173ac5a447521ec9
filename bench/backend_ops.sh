#!/usr/bin/env bash
# Times every registered backend on the resnet50, mobilenet_v2 and BERT op
# shapes (bench_backend_ops) and writes bench/results/backend_ops.md: median
# time and GFLOP/s per op and backend, with the machine and thread count
# (the raw Google Benchmark JSON stays in BUILD_DIR/backend_ops.json).
#
#   bench/backend_ops.sh [BUILD_DIR]      (default: build)
# Environment: THREADS (default 2), REPETITIONS (default 5),
# MIN_TIME (seconds per repetition, default 0.1), FILTER (benchmark regex).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${1:-$root/build}"
binary="$build/bench_backend_ops"
threads="${THREADS:-2}"
if [[ ! -x "$binary" ]]; then
  echo "backend_ops.sh: $binary not found; build the bench_backend_ops target first" >&2
  exit 2
fi

mkdir -p "$here/results"
json="$build/backend_ops.json"
"$binary" --threads="$threads" \
  --benchmark_repetitions="${REPETITIONS:-5}" \
  --benchmark_min_time="${MIN_TIME:-0.1}" \
  --benchmark_report_aggregates_only=true \
  --benchmark_filter="${FILTER:-.}" \
  --benchmark_out="$json" --benchmark_out_format=json >&2

cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
python3 - "$json" "$cpu" "$(nproc)" > "$here/results/backend_ops.md" <<'PY'
import json
import sys

path, cpu, cores = sys.argv[1], sys.argv[2], sys.argv[3]
with open(path) as f:
    report = json.load(f)
context = report["context"]

ops = []          # (model, op) in run order
shape = {}        # (model, op) -> label
gflop = {}        # (model, op) -> GFLOP
cells = {}        # (model, op, backend) -> (median ms, ok)
backends = []
for run in report["benchmarks"]:
    if run.get("aggregate_name") != "median":
        continue
    name = run["run_name"].removesuffix("/real_time")
    model, rest = name.split("/", 1)
    op, backend = rest.rsplit("/", 1)
    key = (model, op)
    if key not in shape:
        ops.append(key)
        shape[key] = run.get("label", "")
        gflop[key] = run["GFLOP"]
    if backend not in backends:
        backends.append(backend)
    unit = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[run["time_unit"]]
    cells[(model, op, backend)] = (run["real_time"] * unit, run["matches_reference"] >= 0.5)

print("# Backend op benchmarks")
print()
print(f"- Machine: {cpu} ({cores} logical CPUs visible)")
print(f"- Threads per backend: {context.get('threads', '?')}")
print(f"- Date: {context.get('date', '?')}")
for backend in backends:
    print(f"- {backend}: {context.get('backend.' + backend, '?')}")
print()
print("Single-op partitions, compiled once; the time is the median of the repetitions of "
      "Kernel::run (wall clock), GFLOP/s = 2 x multiply-adds / time. The fastest backend "
      "of each row is in bold; x marks a result that differs from the reference executor; "
      "an empty cell means the backend does not support the op.")
print()
print("| model | op | shape | GFLOP | " + " | ".join(backends) + " |")
print("|---|---|---|---:|" + "---:|" * len(backends))
for model, op in ops:
    times = {b: cells[(model, op, b)] for b in backends if (model, op, b) in cells}
    valid = [t for t, ok in times.values() if ok]
    best = min(valid) if valid else None
    row = [model, op, shape[(model, op)], f"{gflop[(model, op)]:.3f}"]
    for b in backends:
        if b not in times:
            row.append("")
            continue
        ms, ok = times[b]
        rate = gflop[(model, op)] / (ms * 1e-3) if ms > 0 else 0.0
        cell = f"{ms:.3f} ms ({rate:.1f})"
        if not ok:
            cell += " x"
        elif ms == best:
            cell = f"**{cell}**"
        row.append(cell)
    print("| " + " | ".join(row) + " |")
PY
echo "wrote $here/results/backend_ops.md" >&2
