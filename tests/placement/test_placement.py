"""Placement constraints on a real model (the zoo's SqueezeNet 1.1): pins and
avoids given to the command line and to the Python module produce plans
that honour them, record them, and compute what native computes; a pin the
backend cannot honour is refused before anything is measured.

Every MaxPool is pinned to XNNPACK, the first convolution to native, and
oneDNN is kept off the Concats: in an unconstrained tune oneDNN takes the
convolutions and the Concats, so each constraint changes the plan.
Skipped when the zoo (scripts/export_zoo.py) lacks the model.
"""
import json
import os
import subprocess

import numpy as np
import pytest

import collage

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZOO = os.environ.get("COLLAGE_ZOO_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "collage", "zoo")
BINARY = os.environ.get("COLLAGE_BINARY", os.path.join(ROOT, "build", "collage"))

FIRST_CONV = "/features/features.0/Conv"
PLACE = ["op:MaxPool=xnnpack", FIRST_CONV + "=native"]
AVOID = ["onednn:op:Concat"]
# Quick tunes: the constraints, not the search's refinement, are under test.
QUICK = ["--threads", "2", "--refine-rounds", "0", "--no-local-moves", "--repeat", "3"]


@pytest.fixture(scope="module")
def model():
    path = os.path.join(ZOO, "squeezenet1_1", "model.onnx")
    if not os.path.exists(path):
        pytest.skip("zoo model squeezenet1_1 not exported (scripts/export_zoo.py)")
    return path


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    # One measurement cache for the module: the second tune measures little.
    return str(tmp_path_factory.mktemp("placement") / "measurements.sqlite")


def check_honoured(plan):
    """Every constraint holds in `plan` (a dict), and the plan records them."""
    assert plan["placement"] == ["place " + p for p in PLACE] + ["avoid " + a for a in AVOID]
    where = {}
    for partition in plan["partitions"]:
        for node, op in zip(partition["nodes"], partition["ops"]):
            where[node] = (partition["backend"], op)
    assert where[FIRST_CONV][0] == "native"
    pools = [b for b, op in where.values() if op == "MaxPool"]
    assert pools and all(b == "xnnpack" for b in pools), pools
    concats = [b for b, op in where.values() if op == "Concat"]
    assert concats and all(b != "onednn" for b in concats), concats
    # The constraints leave the rest to the search: which backend runs the
    # other convolutions is measured (under load, the kept plan may be
    # XNNPACK's), so it is only checked that each runs on one that may.
    assert all(b in ("onednn", "xnnpack", "native") for b, op in where.values() if op == "Conv")


def outputs_of(session, model):
    x = np.load(os.path.join(os.path.dirname(model), "input.npy"))
    return list(session.run({session.inputs[0]["name"]: x}).values())[0]


def test_command_line_pins_and_avoids_are_honoured(model, cache, tmp_path):
    plan_path = str(tmp_path / "squeezenet.plan.json")
    args = [BINARY, "tune", model, "--backends", "onednn,xnnpack", "--cache", cache, "-q",
            "-o", plan_path] + QUICK
    for p in PLACE:
        args += ["--place", p]
    for a in AVOID:
        args += ["--avoid", a]
    done = subprocess.run(args, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    with open(plan_path) as f:
        plan = json.load(f)
    check_honoured(plan)
    # Every baseline tune ran beside the search honoured the pins as well:
    # none is listed with an output mismatch.
    assert "differ" not in done.stdout, done.stdout
    shown = subprocess.run([BINARY, "show", plan_path], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "xnnpack*" in shown.stdout and "native*" in shown.stdout, shown.stdout
    # The constrained plan computes what the model computes.
    reference = outputs_of(collage.Session(model, strategy="native"), model)
    constrained = outputs_of(collage.Session(model, plan=plan_path), model)
    np.testing.assert_allclose(constrained, reference, rtol=1e-3, atol=1e-3)


def test_python_pins_and_avoids_are_honoured(model, cache):
    result = collage.tune(model, backends=["onednn", "xnnpack"], threads=2, cache=cache,
                          refine_rounds=0, repeat=3, place=PLACE, avoid=AVOID)
    check_honoured(json.loads(result["plan"]))
    # Each plan measured end to end honours them (the searched one is kept
    # or a constrained baseline is): the kept plan was checked above; every
    # row's outputs matched native's.
    assert all(not row["mismatch"] for row in result["measured"]), result["measured"]


def test_an_impossible_pin_is_refused_before_measuring(model, tmp_path):
    cache = str(tmp_path / "untouched.sqlite")
    done = subprocess.run([BINARY, "tune", model, "--backends", "openblas", "--cache", cache,
                           "--place", "op:MaxPool=openblas"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "cannot be pinned to openblas" in done.stderr and "MaxPool" in done.stderr
    assert not os.path.exists(cache)
    with pytest.raises(collage.Error, match="cannot be pinned to openblas"):
        collage.tune(model, backends=["openblas"], cache=str(tmp_path / "py.sqlite"),
                     place=["op:MaxPool=openblas"])
