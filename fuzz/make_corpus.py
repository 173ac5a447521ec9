#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (fuzz/corpus/*): a few small valid ONNX
models, .npy arrays and plans. Run with /usr/bin/python3 (needs onnx, numpy)."""
import io
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

here = os.path.dirname(os.path.abspath(__file__))


def out(kind, name, data):
    path = os.path.join(here, "corpus", kind, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def model(name, nodes, inputs, outputs, initializers=(), kind="import"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    out(kind, name + ".onnx", m.SerializeToString())


def info(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


F, I64 = TensorProto.FLOAT, TensorProto.INT64
model("relu", [helper.make_node("Relu", ["x"], ["y"])], [info("x", F, [2, 3])], [info("y", F, None)])
model("conv_pool",
      [helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1]),
       helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
      [info("x", F, [1, 3, 8, 8])], [info("y", F, None)],
      [helper.make_tensor("w", F, [4, 3, 3, 3], np.ones(108, np.float32).tolist())])
model("shape_chain",
      [helper.make_node("Shape", ["x"], ["s"]),
       helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
       helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
       helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
       helper.make_node("Reshape", ["x", "shape"], ["y"])],
      [info("x", F, [2, 3, 4])], [info("y", F, None)],
      [helper.make_tensor("zero", I64, [], [0]), helper.make_tensor("axes", I64, [1], [0]),
       helper.make_tensor("minus1", I64, [1], [-1])])
model("int_div",
      [helper.make_node("Div", ["a", "b"], ["q"]), helper.make_node("Add", ["q", "a"], ["y"])],
      [info("a", I64, [2])], [info("y", I64, None)],
      [helper.make_tensor("b", I64, [2], [-1, 3])])
model("tile_expand",
      [helper.make_node("Tile", ["x", "r"], ["t"]), helper.make_node("Expand", ["t", "s"], ["y"])],
      [info("x", F, [1, 2])], [info("y", F, None)],
      [helper.make_tensor("r", I64, [2], [1, 2]), helper.make_tensor("s", I64, [2], [3, 4])])

# The graph passes: chains that each optimization level rewrites (a MatMul
# with a bias Add, a BatchNormalization after a Conv, cancelling Transposes,
# a Gelu and a LayerNormalization spelled out op by op).
def const(name, shape, value=0.5):
    return helper.make_tensor(name, F, shape, np.full(int(np.prod(shape)), value, np.float32).tolist())


model("matmul_add_gelu",
      [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
       helper.make_node("Div", ["a", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
       helper.make_node("Add", ["e", "one"], ["e1"]), helper.make_node("Mul", ["a", "e1"], ["g"]),
       helper.make_node("Mul", ["g", "half"], ["y"])],
      [info("x", F, [2, 4])], [info("y", F, None)],
      [const("w", [4, 4]), const("b", [4]), const("sqrt2", [], 1.4142135),
       const("one", [], 1.0), const("half", [], 0.5)], kind="graph_passes")
model("conv_bn_transposes",
      [helper.make_node("Conv", ["x", "w"], ["c"]),
       helper.make_node("BatchNormalization", ["c", "s", "bias", "mean", "var"], ["n"]),
       helper.make_node("Transpose", ["n"], ["t"], perm=[0, 2, 3, 1]),
       helper.make_node("Transpose", ["t"], ["u"], perm=[0, 3, 1, 2]),
       helper.make_node("Cast", ["u"], ["v"], to=F), helper.make_node("Relu", ["v"], ["y"])],
      [info("x", F, [1, 2, 4, 4])], [info("y", F, None)],
      [const("w", [3, 2, 1, 1]), const("s", [3], 2.0), const("bias", [3]), const("mean", [3]),
       const("var", [3], 1.0)], kind="graph_passes")
model("layer_norm",
      [helper.make_node("ReduceMean", ["x"], ["mu"], axes=[-1]),
       helper.make_node("Sub", ["x", "mu"], ["d"]), helper.make_node("Mul", ["d", "d"], ["sq"]),
       helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
       helper.make_node("Add", ["var", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["sd"]),
       helper.make_node("Div", ["d", "sd"], ["n"]), helper.make_node("Mul", ["n", "gamma"], ["g"]),
       helper.make_node("Add", ["g", "beta"], ["y"])],
      [info("x", F, [2, 3, 8])], [info("y", F, None)],
      [const("eps", [], 1e-5), const("gamma", [8], 1.0), const("beta", [8], 0.0)],
      kind="graph_passes")

# The Python input check (array_input_fuzzer's byte layout): expected type,
# rank and dims; then kind, item size, byte order, rank, the short-strides
# byte and (size, stride) pairs.
def array_seed(name, expected_type, expected_dims, kind, itemsize, byteorder, shape, strides):
    data = bytes([expected_type, len(expected_dims)] + list(expected_dims))
    data += kind.encode() + np.int64(itemsize).tobytes() + byteorder.encode()
    data += bytes([len(shape), 0])
    for size, stride in zip(shape, strides):
        data += np.int64(size).tobytes() + np.int64(stride).tobytes()
    out("array_input", name, data)


array_seed("matching", 0, [1, 3, 2, 2], "f", 4, "=", [1, 3, 2, 2], [48, 16, 8, 4])
array_seed("broadcast", 0, [1, 3, 2, 2], "f", 4, "=", [1 << 20, 3, 224, 224], [0, 0, 0, 0])
array_seed("big_endian", 0, [2], "f", 4, ">", [2], [4])

for name, array in [("f32", np.arange(6, dtype=np.float32).reshape(2, 3)),
                    ("i64", np.array([1, -2, 3], dtype=np.int64)),
                    ("bool", np.array([True, False])),
                    ("scalar", np.float64(2.5))]:
    buffer = io.BytesIO()
    np.save(buffer, array)
    out("npy", name + ".npy", buffer.getvalue())

plan = {
    "format": "collage-plan", "version": 1, "strategy": "collage",
    "model": {"path": "m.onnx", "hash": "3f1c", "input_shapes": {"x": [1, 3, 8, 8]}},
    "machine": "cpu|avx2|t2", "threads": 2,
    "backends": {"native": "collage-native 0.1", "onednn": "oneDNN 2.6.3"},
    "estimated_ms": 1.5, "measured_ms": None,
    "search": {"candidates": 10, "measured": 8, "cache_hits": 2, "invalid": 1,
               "states_expanded": 5, "seconds": 0.4},
    "partitions": [
        {"backend": "onednn", "rule": "onednn.conv_bias_add_activation", "nodes": ["conv", "relu"],
         "ops": ["Conv", "Relu"], "inputs": ["x"], "outputs": ["r"], "estimated_ms": 1.0,
         "measured_ms": None,
         "alternatives": [{"backend": "native", "rule": "op", "node_count": 1,
                           "estimated_ms": 2.0, "reason": ""}]},
        {"backend": "native", "nodes": ["pool"], "estimated_ms": 0.5}],
}
out("plan_json", "plan.json", json.dumps(plan, indent=1).encode())
wider = json.loads(json.dumps(plan))
wider["model"]["input_shapes"] = {"x": [1, 3, 16, 16]}
out("plan_json", "plan_set.json", json.dumps(
    {"format": "collage-plan-set", "version": 1, "plans": [plan, wider]}, indent=1).encode())
out("plan_json", "minimal.json", json.dumps(
    {"format": "collage-plan", "version": 1, "strategy": "native", "model": {},
     "partitions": [{"backend": "native", "nodes": ["a"]}]}).encode())
