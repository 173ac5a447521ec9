"""Shapes that change between runs, on a Transformer encoder whose sequence
length is dynamic (scripts/export_shapes.py: token ids and an attention
mask, int64 [1, seq]).

`collage tune` with a range of lengths writes one plan file with a plan per
length; `collage run` and the Python module run each length under its plan,
and a fourth length through the closest plan compiled for it, with one
warning. Every strategy serves every length. Outputs are checked against
PyTorch's.
"""
import json
import os
import sys
import warnings

import numpy as np
import pytest

import collage

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model_suite import collage_cli, exported_models  # noqa: E402

TUNED = [16, 32, 64]
UNSEEN = 40
STRATEGIES = ["native", "single:onednn", "single:xnnpack", "single:openblas", "single:halide",
              "greedy:onednn,xnnpack,openblas,native"]
QUICK = ["--threads", "2", "--refine-rounds", "0", "--no-local-moves", "--repeat", "3", "-q"]


exported = exported_models("export_shapes.py", *TUNED, UNSEEN)


def model(exported):
    return os.path.join(exported, "encoder.onnx")


def feeds(exported, length):
    return {name: np.load(os.path.join(exported, f"encoder.{length}.{name}.npy"))
            for name in ("ids", "mask")}


def expected(exported, length):
    return np.load(os.path.join(exported, f"encoder.{length}.out.npy"))


@pytest.fixture(scope="module")
def plan_file(exported):
    path = os.path.join(exported, "encoder.plan.json")
    done = collage_cli("tune", model(exported), "--input-shape", "ids=1,16..64",
                       "--input-shape", "mask=1,16..64", "--backends", "onednn,xnnpack",
                       *QUICK, "-o", path)
    assert done.returncode == 0, done.stderr
    assert "3 plans saved to" in done.stdout, done.stdout
    return path


def test_info_shows_the_dynamic_dimensions_by_name(exported):
    done = collage_cli("info", model(exported))
    assert done.returncode == 0, done.stderr
    assert "ids   i64[batch,seq]" in done.stdout, done.stdout


def test_the_plan_file_holds_one_plan_per_length(plan_file):
    with open(plan_file) as f:
        document = json.load(f)
    assert document["format"] == "collage-plan-set"
    shapes = [plan["model"]["input_shapes"] for plan in document["plans"]]
    assert shapes == [{"ids": [1, n], "mask": [1, n]} for n in TUNED]


def run_cli(exported, plan_file, length, tmp_path):
    out = tmp_path / f"out{length}"
    done = collage_cli("run", model(exported), "--plan", plan_file, "--repeat", "2",
                       "--input", f"ids={exported}/encoder.{length}.ids.npy",
                       "--input", f"mask={exported}/encoder.{length}.mask.npy",
                       "--save-outputs", str(out))
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(np.load(out / "y.npy"), expected(exported, length),
                               rtol=1e-4, atol=1e-4)
    return done


@pytest.mark.parametrize("length", TUNED)
def test_the_cli_runs_each_tuned_length_under_its_plan(exported, plan_file, length, tmp_path):
    done = run_cli(exported, plan_file, length, tmp_path)
    assert f"plan: for ids=[1,{length}] mask=[1,{length}], of 3 plans" in done.stdout
    assert "warning" not in done.stderr, done.stderr


def test_the_cli_runs_another_length_with_one_warning(exported, plan_file, tmp_path):
    done = run_cli(exported, plan_file, UNSEEN, tmp_path)
    lines = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(lines) == 1, done.stderr
    assert f"no plan for ids=[1,{UNSEEN}] mask=[1,{UNSEEN}]" in lines[0]
    assert "ran the plan for ids=[1,32] mask=[1,32] compiled for" in lines[0]
    assert " ms)" in lines[0]


def test_the_python_session_serves_every_length_from_one_plan_file(exported, plan_file):
    session = collage.Session(model(exported), plan=plan_file)
    assert session.inputs[0]["shape"] == (1, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for length in TUNED:
            y = session.run(feeds(exported, length))["y"]
            np.testing.assert_allclose(y, expected(exported, length), rtol=1e-4, atol=1e-4)
    assert session.warnings == []
    with pytest.warns(RuntimeWarning, match=rf"no plan for ids=\[1,{UNSEEN}\]"):
        y = session.run(feeds(exported, UNSEEN))["y"]
    np.testing.assert_allclose(y, expected(exported, UNSEEN), rtol=1e-4, atol=1e-4)
    # The length compiled for is kept.
    session.run(feeds(exported, UNSEEN))
    assert len(session.warnings) == 1


def test_the_session_chooses_the_plan_for_its_input_shapes(exported, plan_file):
    session = collage.Session(model(exported), plan=plan_file,
                              input_shapes={"ids": [1, 64], "mask": [1, 64]})
    assert session.inputs[0]["shape"] == (1, 64)
    assert session.warnings == []


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_serves_every_length(exported, strategy):
    session = collage.Session(model(exported), strategy=strategy, threads=2,
                              input_shapes={"ids": [1, TUNED[0]], "mask": [1, TUNED[0]]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for length in TUNED + [UNSEEN]:
            y = session.run(feeds(exported, length))["y"]
            np.testing.assert_allclose(y, expected(exported, length), rtol=1e-4, atol=1e-4,
                                       err_msg=f"{strategy} at {length}")
    assert len(session.warnings) == len(TUNED)


def test_python_tune_with_a_list_of_shapes_makes_a_plan_set(exported):
    shapes = [{"ids": [1, n], "mask": [1, n]} for n in TUNED[:2]]
    result = collage.tune(model(exported), backends=["onednn"], threads=2, input_shapes=shapes,
                          refine_rounds=0, repeat=3)
    assert [json.loads(r["plan"])["model"]["input_shapes"] for r in result["per_shape"]] == shapes
    assert json.loads(result["plan"])["format"] == "collage-plan-set"
    session = collage.Session(model(exported), plan=result["plan"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for length in TUNED[:2]:
            y = session.run(feeds(exported, length))["y"]
            np.testing.assert_allclose(y, expected(exported, length), rtol=1e-4, atol=1e-4)
    with pytest.raises(collage.Error, match="repeats entry 0"):
        collage.tune(model(exported), input_shapes=[shapes[0], shapes[0]])
