"""torchvision's detectors with their post-processing, exported as a user
would export them (scripts/export_detectors.py): SSDlite320-MobileNet-V3,
RetinaNet-ResNet50-FPN and Keypoint R-CNN-ResNet50-FPN, random weights.

Their post-processing has shapes that the data decides (per-class boolean
indexing, TopK with a computed K, batched NonMaxSuppression behind an If,
RoiAlign over the pyramid levels, and for the keypoints a Loop over the
boxes found). Import encloses it in a runtime-shaped region; everything
before it is planned. Each detector, under every strategy and under a
tuned plan, finds PyTorch's detections: the same count, and for each of
PyTorch's detections one of ours with the same label, its box and score
(and keypoints) within tolerance. Two detections whose scores differ in
the seventh digit may come out in either order.
"""
import json
import os
import re
import sys

import numpy as np
import pytest

import collage

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model_suite import collage_cli, exported_models  # noqa: E402

DETECTORS = ["ssdlite", "retinanet", "keypointrcnn"]
OUTPUTS = {"ssdlite": ["boxes", "scores", "labels"],
           "retinanet": ["boxes", "scores", "labels"],
           "keypointrcnn": ["boxes", "labels", "scores", "keypoints", "keypoints_scores"]}
STRATEGIES = ["native", "single:onednn", "single:xnnpack", "single:openblas",
              "greedy:onednn,xnnpack,openblas,native"]
# Tuning is the slow part: a small search per detector (pruned candidates,
# no refinement, no end-to-end check against the baselines, which other
# suites cover), with the backends that pay off on each.
TUNE_BACKENDS = {"ssdlite": "onednn,xnnpack", "retinanet": "xnnpack",
                 "keypointrcnn": "xnnpack"}


exported = exported_models("export_detectors.py", timeout=1200)


def path(exported, name, suffix):
    return os.path.join(exported, f"{name}.{suffix}")


def expected(exported, name):
    return {output: np.load(path(exported, name, f"{output}.npy")) for output in OUTPUTS[name]}


def check_detections(ours, theirs, label):
    """Every one of PyTorch's detections has one of ours that matches it."""
    count = len(theirs["scores"])
    assert count > 0, label
    for output, reference in theirs.items():
        assert ours[output].shape == reference.shape, (label, output)
    unused = set(range(count))
    for i in range(count):
        found = None
        for j in sorted(unused, key=lambda j: abs(j - i)):
            if (ours["labels"][j] == theirs["labels"][i]
                    and abs(ours["scores"][j] - theirs["scores"][i]) <= 1e-4
                    and np.allclose(ours["boxes"][j], theirs["boxes"][i], rtol=1e-4, atol=1e-2)):
                found = j
                break
        assert found is not None, (f"{label}: PyTorch's detection {i} (label "
                                   f"{theirs['labels'][i]}, score {theirs['scores'][i]:.6f}, box "
                                   f"{theirs['boxes'][i]}) has no match")
        unused.discard(found)
        if "keypoints" in theirs:
            np.testing.assert_allclose(ours["keypoints"][found], theirs["keypoints"][i],
                                       rtol=1e-4, atol=1e-2, err_msg=label)
            np.testing.assert_allclose(ours["keypoints_scores"][found],
                                       theirs["keypoints_scores"][i], rtol=1e-3, atol=1e-3,
                                       err_msg=label)


def test_the_detections_are_many_and_their_scores_distinct(exported):
    for name in DETECTORS:
        scores = np.load(path(exported, name, "scores.npy"))
        # Ties are rare (a box kept for two labels can tie with itself).
        assert len(scores) >= 5 and len(np.unique(scores)) >= 0.9 * len(scores), name


@pytest.mark.parametrize("name", DETECTORS)
def test_info_shows_the_post_processing_as_a_region(exported, name):
    done = collage_cli("info", path(exported, name, "onnx"))
    assert done.returncode == 0, done.stderr
    assert re.search(r"\n  boxes +f32\[\?,4\]\n", done.stdout), done.stdout
    region = [line for line in done.stdout.splitlines()
              if line.startswith("shapes known only when the model runs:")]
    assert len(region) == 1, done.stdout
    # NonMaxSuppression is inside the If; Keypoint R-CNN keeps its TopK
    # before the region.
    for op in ["NonZero", "If"]:
        assert f"{op} " in region[0], region[0]
    if name == "keypointrcnn":
        assert "RoiAlign " in region[0] and "Loop " in region[0], region[0]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", DETECTORS)
def test_every_strategy_finds_pytorchs_detections(exported, name, strategy):
    session = collage.Session(path(exported, name, "onnx"), strategy=strategy, threads=2)
    outputs = session.run({"image": np.load(path(exported, name, "in.npy"))})
    check_detections(outputs, expected(exported, name), f"{name} {strategy}")


@pytest.mark.parametrize("name", DETECTORS)
def test_a_tuned_plan_finds_pytorchs_detections(exported, name, tmp_path):
    model = path(exported, name, "onnx")
    plan = str(tmp_path / f"{name}.plan.json")
    done = collage_cli("tune", model, "--backends", TUNE_BACKENDS[name], "--prune", "--threads",
                       "2", "--refine-rounds", "0", "--no-local-moves", "--no-verify", "-q",
                       "-o", plan)
    assert done.returncode == 0, done.stderr
    with open(plan) as f:
        partitions = json.load(f)["partitions"]
    region = [p for p in partitions if "RuntimeShapes" in p["ops"]]
    # The region is a partition of its own, on the native kernels.
    assert len(region) == 1 and region[0]["backend"] == "native", region
    assert region[0]["ops"] == ["RuntimeShapes"], region
    out = tmp_path / "out"
    done = collage_cli("run", model, "--plan", plan, "--input", path(exported, name, "in.npy"),
                       "--save-outputs", str(out), "--repeat", "1", "--warmup", "0")
    assert done.returncode == 0, done.stderr
    ours = {output: np.load(out / f"{output}.npy") for output in OUTPUTS[name]}
    check_detections(ours, expected(exported, name), f"{name} tuned")
