"""Small ONNX models for the Python module's tests, written with the onnx package."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv_model(path):
    """x[1,8,12,12] -> Conv 3x3 + bias -> Relu -> y; y + Sigmoid(y) -> z."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2, "w")
    b = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32) * 0.1, "b")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"]),
        helper.make_node("Sigmoid", ["y"], ["s"]),
        helper.make_node("Add", ["y", "s"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes, "conv_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 12, 12]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 16, 12, 12])],
        [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def reference(x, path):
    """The model's outputs computed with numpy."""
    model = onnx.load(str(path))
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    w, b = weights["w"], weights["b"]
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    c = np.zeros((1, 16, 12, 12), np.float64)
    for i in range(3):
        for j in range(3):
            c += np.einsum("nchw,oc->nohw", padded[:, :, i:i + 12, j:j + 12], w[:, :, i, j])
    c += b[None, :, None, None]
    y = np.maximum(c, 0)
    return y, y + 1 / (1 + np.exp(-y))


def every_backend_strategy(backends):
    """Each backend's single-backend plan ("native" for native): every backend
    runs the ops it takes, native the rest."""
    return ["native" if b["name"] == "native" else "single:" + b["name"] for b in backends]


def check_against_pytorch(collage, torch, module, x, path, opset, tolerance):
    """Exports `module` at `opset` to `path` and checks that every backend's
    plan gives its output for input `x` within `tolerance` (rtol and atol)."""
    torch.onnx.export(module, (x,), str(path), input_names=["x"], output_names=["y"],
                      opset_version=opset)
    with torch.no_grad():
        want = module(x).numpy()
    for strategy in every_backend_strategy(collage.backends()):
        got = collage.Session(str(path), strategy=strategy, threads=2).run(
            {"x": x.numpy()})["y"]
        assert got.shape == want.shape, strategy
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance, err_msg=strategy)
