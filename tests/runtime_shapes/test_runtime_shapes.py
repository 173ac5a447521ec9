"""Shapes known only when the model runs, on a small detector whose
post-processing is what torchvision's detectors export
(scripts/export_runtime_shapes.py): boolean indexing (NonZero), TopK with a
K computed in the graph, NonMaxSuppression and a Reshape of a computed size.

Import encloses that part in a runtime-shaped region, which native runs
node by node at the shapes of each run, while the convolutional head is
planned and compiled ahead of time. Every strategy and a tuned plan match
PyTorch on two images that keep different numbers of boxes; a size the
data chooses beyond --max-memory is one line and exit code 2.
"""
import json
import os
import sys

import numpy as np
import pytest

import collage

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model_suite import collage_cli, exported_models  # noqa: E402

STRATEGIES = ["native", "single:onednn", "single:xnnpack", "single:openblas", "single:halide",
              "greedy:onednn,xnnpack,openblas,native"]
OUTPUTS = ["boxes", "scores", "flat"]
IMAGES = ["", ".2"]


exported = exported_models("export_runtime_shapes.py")


def model(exported):
    return os.path.join(exported, "detector.onnx")


def image(exported, suffix):
    return os.path.join(exported, f"detector{suffix}.in.npy")


def check_outputs(outputs, exported, suffix, label):
    for name in OUTPUTS:
        expected = np.load(os.path.join(exported, f"detector{suffix}.{name}.npy"))
        assert outputs[name].shape == expected.shape, (label, name)
        # Coordinates near 64 after a standardization: float32 rounding.
        np.testing.assert_allclose(outputs[name], expected, rtol=1e-3, atol=2e-3,
                                   err_msg=f"{label} {name}")


def test_the_images_keep_different_numbers_of_boxes(exported):
    counts = {np.load(os.path.join(exported, f"detector{s}.boxes.npy")).shape[0] for s in IMAGES}
    assert len(counts) == 2 and min(counts) > 10, counts


def test_info_shows_the_region_and_the_outputs_known_at_run_time(exported):
    done = collage_cli("info", model(exported))
    assert done.returncode == 0, done.stderr
    assert "boxes   f32[?,4]" in done.stdout, done.stdout
    assert "shapes known only when the model runs:" in done.stdout
    assert "NonMaxSuppression 1" in done.stdout and "NonZero 1" in done.stdout


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_matches_pytorch_on_both_images(exported, strategy):
    session = collage.Session(model(exported), strategy=strategy, threads=2)
    for suffix in IMAGES:
        outputs = session.run({"image": np.load(image(exported, suffix))})
        check_outputs(outputs, exported, suffix, strategy)


def test_a_tuned_plan_runs_the_region_natively_and_matches_pytorch(exported, tmp_path):
    plan = str(tmp_path / "detector.plan.json")
    done = collage_cli("tune", model(exported), "--backends", "onednn,xnnpack", "--threads", "2",
                       "--refine-rounds", "0", "--no-local-moves", "--repeat", "3", "-q",
                       "-o", plan)
    assert done.returncode == 0, done.stderr
    with open(plan) as f:
        partitions = json.load(f)["partitions"]
    region = [p for p in partitions if "RuntimeShapes" in p["ops"]]
    assert len(region) == 1 and region[0]["backend"] == "native"
    assert any(p["backend"] != "native" for p in partitions)
    for suffix in IMAGES:
        out = tmp_path / f"out{suffix}"
        done = collage_cli("run", model(exported), "--plan", plan, "--input",
                           image(exported, suffix), "--save-outputs", str(out), "--repeat", "2")
        assert done.returncode == 0, done.stderr
        check_outputs({name: np.load(out / f"{name}.npy") for name in OUTPUTS}, exported,
                      suffix, "tuned plan")


def test_a_size_the_data_chooses_beyond_max_memory_is_one_line_and_exit_code_2(tmp_path):
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Greater", ["x", "t"], ["m"]), helper.make_node("NonZero", ["m"], ["y"])],
        "nonzero", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10000])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
        [helper.make_tensor("t", TensorProto.FLOAT, [], [-1.0])])
    path = str(tmp_path / "nonzero.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    # The static tensors fit in 60 KiB; NonZero's 10000 int64 indices do not.
    done = collage_cli("run", path, "--max-memory", "60K", "--repeat", "1", "--warmup", "0")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "more than the memory budget" in lines[0], done.stderr
    assert "NonZero" in lines[0]
    done = collage_cli("run", path, "--repeat", "1", "--warmup", "0")
    assert done.returncode == 0, done.stderr
    assert "output y  i64[1,10000]" in done.stdout, done.stdout


def test_an_if_on_a_count_the_data_decides_runs_the_branch_taken(tmp_path):
    # As torchvision's scripted helpers export "no boxes left": an If on
    # the number of indices NonZero found, whose branches read them.
    import onnx
    from onnx import TensorProto, helper
    empty = helper.make_tensor("none", TensorProto.INT64, [0], [])
    then_branch = helper.make_graph(
        [helper.make_node("Constant", [], ["empty"], value=empty)], "then", [],
        [helper.make_tensor_value_info("empty", TensorProto.INT64, [None])])
    else_branch = helper.make_graph(
        [helper.make_node("ReduceMax", ["found"], ["last"], keepdims=0),
         helper.make_node("Add", ["flat", "last"], ["shifted"])], "else", [],
        [helper.make_tensor_value_info("shifted", TensorProto.INT64, [None])])
    graph = helper.make_graph(
        [helper.make_node("Greater", ["x", "t"], ["m"]),
         helper.make_node("NonZero", ["m"], ["found"]),
         helper.make_node("Reshape", ["found", "minus_one"], ["flat"]),
         helper.make_node("Size", ["found"], ["count"]),
         helper.make_node("Equal", ["count", "zero"], ["nothing"]),
         helper.make_node("If", ["nothing"], ["y"], then_branch=then_branch,
                          else_branch=else_branch)],
        "if_on_count", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [None])],
        [helper.make_tensor("t", TensorProto.FLOAT, [], [0.5]),
         helper.make_tensor("minus_one", TensorProto.INT64, [1], [-1]),
         helper.make_tensor("zero", TensorProto.INT64, [], [0])])
    path = str(tmp_path / "if_on_count.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    session = collage.Session(path, threads=1)
    x = np.array([0.1, 0.9, 0.2, 0.7, 0.0, 0.6], np.float32)
    np.testing.assert_array_equal(session.run({"x": x})["y"], [1 + 5, 3 + 5, 5 + 5])
    assert session.run({"x": np.zeros(6, np.float32)})["y"].shape == (0,)
