#!/usr/bin/env bash
# What the Python binding adds per Session.run call over the C++ call, on
# models small enough that the call's own cost shows: C++ and Python loops
# alternate (A B A B ...) for ROUNDS rounds of RUNS calls each, at THREADS
# threads, and the medians of the round medians are compared.
#   bench/binding_overhead.sh [BUILD_DIR]     (ROUNDS=5 RUNS=2000 THREADS=1)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-5}
runs=${RUNS:-2000}
threads=${THREADS:-1}
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Two models: one Add of [1,16] (the call alone), and a 1x1 Conv + Relu on
# [1,64,28,28] with 4 outputs' worth of data (inputs and outputs that are
# not tiny, so copies would show).
"$python" - "$tmp" <<'PY'
import sys, numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
tmp = sys.argv[1]
def save(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]); m.ir_version = 8
    onnx.save(m, f"{tmp}/{name}.onnx")
save("add", [helper.make_node("Add", ["x", "x"], ["y"])],
     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
np.save(f"{tmp}/add.npy", np.ones((1, 16), np.float32))
w = numpy_helper.from_array(np.full((64, 64, 1, 1), 0.01, np.float32), "w")
save("conv", [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Relu", ["c"], ["y"])],
     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 28, 28])],
     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 28, 28])], [w])
np.save(f"{tmp}/conv.npy", np.ones((1, 64, 28, 28), np.float32))
PY

echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Threads: $threads. $rounds rounds x $runs calls, C++ and Python alternating; median of round medians (us), [min-max of round medians]."
echo
echo "| model | C++ Session::run | Python Session.run | Python - C++ | Python / C++ |"
echo "|---|---|---|---|---|"
for model in add conv; do
  : > "$tmp/$model.cpp"
  : > "$tmp/$model.py"
  for ((r = 0; r < rounds; r++)); do
    "$build/bench_session_run" "$tmp/$model.onnx" x "$tmp/$model.npy" "$runs" "$threads" >> "$tmp/$model.cpp"
    PYTHONPATH="$build/python" "$python" "$here/binding_overhead.py" "$tmp/$model.onnx" x \
      "$tmp/$model.npy" "$runs" "$threads" >> "$tmp/$model.py"
  done
  "$python" - "$model" "$tmp/$model.cpp" "$tmp/$model.py" <<'PY'
import statistics, sys
model, cpp_file, py_file = sys.argv[1:]
cpp = [float(line.split()[1]) for line in open(cpp_file)]
py = [float(line.split()[1]) for line in open(py_file)]
c, p = statistics.median(cpp), statistics.median(py)
print(f"| {model} | {c:.2f} [{min(cpp):.2f}-{max(cpp):.2f}] | {p:.2f} [{min(py):.2f}-{max(py):.2f}] "
      f"| {p - c:+.2f} | {p / c:.2f}x |")
PY
done
