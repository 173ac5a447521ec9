"""Writes small models with control flow (If, Loop, Scan) for the tests, with
their inputs and reference outputs (random weights, seeded):

- rnn_loop (PyTorch, scripted, opset 14): a recurrent cell run by a `for`
  over the sequence (a Loop whose trip count is the input's length), then an
  `if` on the sign of the state's sum (an If on a value computed at run time).
  Reference: PyTorch.
- gate_if (PyTorch, scripted, opset 14): a convolution and a pooled
  feature, then one of two linear heads chosen by the feature's sum (the If
  holds a Gemm in each branch). Reference: PyTorch.
- scan_cumsum (opset 13): a Scan over two sequences, one read backwards,
  whose body reads a weight of the main graph; a running sum as state and
  two scan outputs, one along axis 1 and one written backwards. Reference:
  the same computation in NumPy.
- loop_nested (opset 13): a Loop of 4 iterations whose body holds an If on
  the iteration's parity; both branches read the main graph's input and the
  loop's state. Reference: NumPy.
- if_per_size (opset 13): an If on a flag input whose else branch only fits
  inputs of another size (it squeezes an axis of 4 here), as models with a
  branch per input size have it: the then branch runs (flag true); taking
  the else branch is refused in one line. Reference: NumPy, flag true.

Malformed models, which import must refuse in one line:
- if_types: an If whose branches give float32 and int64.
- loop_forever: a Loop without a trip count whose condition stays true.

Usage: /usr/bin/python3 scripts/export_control_flow.py DIR
Writes DIR/NAME.onnx, and for the runnable ones DIR/NAME.in.npy (input "x")
and DIR/NAME.out.npy (output "y").
"""
import os
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

warnings.filterwarnings("ignore")


def save(directory, name, model, x=None, y=None):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(directory, name + ".onnx"))
    if x is not None:
        np.save(os.path.join(directory, name + ".in.npy"), x.astype(np.float32))
        np.save(os.path.join(directory, name + ".out.npy"), y.astype(np.float32))


def torch_models(directory):
    import torch

    torch.manual_seed(0)

    class RnnLoop(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = torch.nn.Linear(16, 16)
            self.input = torch.nn.Linear(8, 16)

        def forward(self, x):  # [1, T, 8]
            h = torch.zeros(1, 16)
            for t in range(x.size(1)):
                h = torch.tanh(self.cell(h) + self.input(x[:, t]))
            if bool(h.sum() > 0):
                out = h * 2.0
            else:
                out = -h
            return out

    class GateIf(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU())
            self.head = torch.nn.Linear(8, 4)
            self.other = torch.nn.Linear(8, 4)

        def forward(self, x):
            f = self.body(x).mean(dim=(2, 3))
            if bool(f.sum() > 1.0):
                y = torch.sigmoid(self.head(f))
            else:
                y = torch.tanh(self.other(f)) * 2.0
            return y

    for name, module, x in (("rnn_loop", RnnLoop(), torch.randn(1, 12, 8)),
                            ("gate_if", GateIf(), torch.randn(1, 3, 16, 16))):
        scripted = torch.jit.script(module.eval())
        path = os.path.join(directory, name + ".onnx")
        torch.onnx.export(scripted, (x,), path, opset_version=14, input_names=["x"],
                          output_names=["y"])
        with torch.no_grad():
            y = scripted(x)
        np.save(os.path.join(directory, name + ".in.npy"), x.numpy())
        np.save(os.path.join(directory, name + ".out.npy"), y.numpy())


def scan_cumsum(directory, rng):
    # x: [2, 5, 3] scanned along axis 1; w: [3] a weight of the main graph.
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Mul", ["forward_in", "w"], ["scaled"]),
         helper.make_node("Add", ["sum_in", "scaled"], ["sum_out"]),
         helper.make_node("Sub", ["sum_out", "backward_in"], ["diff"]),
         helper.make_node("Relu", ["diff"], ["relu"])],
        "scan_body",
        [helper.make_tensor_value_info("sum_in", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("forward_in", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("backward_in", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("diff", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("relu", TensorProto.FLOAT, [2, 3])])
    scan = helper.make_node("Scan", ["zeros", "x", "x"], ["total", "diffs", "relus"], body=body,
                            num_scan_inputs=2, scan_input_axes=[1, 1],
                            scan_input_directions=[0, 1], scan_output_axes=[1, 0],
                            scan_output_directions=[0, 1])
    graph = helper.make_graph(
        [scan, helper.make_node("ReduceSum", ["diffs", "axis1"], ["diff_sum"], keepdims=0),
         helper.make_node("ReduceSum", ["relus", "axis0"], ["relu_sum"], keepdims=0),
         helper.make_node("Add", ["total", "diff_sum"], ["partial"]),
         helper.make_node("Add", ["partial", "relu_sum"], ["y"])],
        "scan_cumsum",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.zeros((2, 3), np.float32), "zeros"),
         numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array([0], np.int64), "axis0"),
         numpy_helper.from_array(np.array([1], np.int64), "axis1")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    # Reference.
    total = np.zeros((2, 3), np.float32)
    diffs = np.zeros((2, 5, 3), np.float32)
    relus = np.zeros((5, 2, 3), np.float32)
    for t in range(5):
        total = total + x[:, t] * w
        diff = total - x[:, 4 - t]
        diffs[:, t] = diff
        relus[4 - t] = np.maximum(diff, 0)
    y = total + diffs.sum(axis=1) + relus.sum(axis=0)
    save(directory, "scan_cumsum", model, x, y)


def loop_nested(directory, rng):
    # x: [4]; state s: [4]; each iteration s = s * 0.5 + (x if i even else -x * i).
    x = rng.standard_normal(4).astype(np.float32)
    two = numpy_helper.from_array(np.array(2, np.int64), "two")
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["scaled", "x"], ["then_out"])], "even",
        [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [4])])
    else_branch = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_float"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "i_float"], ["xi"]),
         helper.make_node("Sub", ["scaled", "xi"], ["else_out"])], "odd",
        [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [4])])
    body = helper.make_graph(
        [helper.make_node("Mod", ["i", "two"], ["parity"]),
         helper.make_node("Equal", ["parity", "zero"], ["even"]),
         helper.make_node("Mul", ["s_in", "half"], ["scaled"]),
         helper.make_node("If", ["even"], ["s_out"], then_branch=then_branch,
                          else_branch=else_branch),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Neg", ["s_out"], ["trace"])],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("trace", TensorProto.FLOAT, [4])],
        [two, zero, half])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "keep_going", "start"], ["s_final", "traces"],
                          body=body),
         helper.make_node("ReduceSum", ["traces", "axis0"], ["trace_sum"], keepdims=0),
         helper.make_node("Add", ["s_final", "trace_sum"], ["y"])],
        "loop_nested",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(4, np.int64), "trips"),
         numpy_helper.from_array(np.array(True), "keep_going"),
         numpy_helper.from_array(np.ones(4, np.float32), "start"),
         numpy_helper.from_array(np.array([0], np.int64), "axis0")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    s = np.ones(4, np.float32)
    traces = []
    for i in range(4):
        scaled = s * np.float32(0.5)
        s = scaled + x if i % 2 == 0 else scaled - x * np.float32(i)
        traces.append(-s)
    y = s + np.sum(traces, axis=0)
    save(directory, "loop_nested", model, x, y)


def if_per_size(directory, rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    then_branch = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["fits"])], "this_size", [],
        [helper.make_tensor_value_info("fits", TensorProto.FLOAT, [4, 3])])
    else_branch = helper.make_graph(
        [helper.make_node("Squeeze", ["x", "axis0"], ["other"])], "other_size", [],
        [helper.make_tensor_value_info("other", TensorProto.FLOAT, [3])])
    graph = helper.make_graph(
        [helper.make_node("If", ["flag"], ["chosen"], then_branch=then_branch,
                          else_branch=else_branch),
         helper.make_node("Mul", ["chosen", "two"], ["y"])],
        "if_per_size",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
        [numpy_helper.from_array(np.array([0], np.int64), "axis0"),
         numpy_helper.from_array(np.array(2, np.float32), "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    save(directory, "if_per_size", model, x, np.maximum(x, 0) * 2)


def if_types(directory):
    then_branch = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"])], "then", [],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [4])])
    else_branch = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["b"], to=TensorProto.INT64)], "else", [],
        [helper.make_tensor_value_info("b", TensorProto.INT64, [4])])
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
         helper.make_node("Greater", ["total", "zero"], ["positive"]),
         helper.make_node("If", ["positive"], ["y"], then_branch=then_branch,
                          else_branch=else_branch)],
        "if_types", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(0, np.float32), "zero")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, os.path.join(directory, "if_types.onnx"))


def loop_forever(directory):
    body = helper.make_graph(
        [helper.make_node("Constant", [], ["always"], value=helper.make_tensor(
            "always", TensorProto.BOOL, [], [True])),
         helper.make_node("Add", ["s_in", "s_in"], ["s_out"])],
        "forever",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("always", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [4])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["", "", "x"], ["y"], body=body)], "loop_forever",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, os.path.join(directory, "loop_forever.onnx"))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(7)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is missing: rnn_loop and gate_if are not written", file=sys.stderr)
    else:
        torch_models(directory)
    scan_cumsum(directory, rng)
    loop_nested(directory, rng)
    if_per_size(directory, rng)
    if_types(directory)
    loop_forever(directory)


if __name__ == "__main__":
    main()
