"""Models with control flow (scripts/export_control_flow.py): a runtime If, a
Loop over a sequence, a Scan in both directions and an If nested in a Loop,
each run under native, every single backend, greedy and a tuned plan, and
checked against its reference (PyTorch's outputs, or NumPy's for the models
built with onnx.helper). Two malformed models are refused at import with
one line naming the node and exit code 2.

Silero's voice-activity detector as users get it (npm @ricky0123/vad-web,
fetched by scripts/fetch_thirdparty.sh): an If on the sample-rate input
whose branches (88 nodes each) hold Ifs on shapes and LSTMs, run at both
rates under native, greedy and a tuned plan against ONNX Runtime; and its
v5, whose branches are each made for their own input length (512 samples
at 16 kHz, 256 at 8 kHz, the other branch failing on them), run the same
way with one plan file for both lengths. Skipped when the models or ONNX
Runtime were not fetched.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import collage

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model_suite import BINARY, CACHE, ROOT, exported_models  # noqa: E402

SILERO = os.path.join(CACHE, "thirdparty", "silero", "silero_vad_legacy.onnx")
SILERO_V5 = os.path.join(CACHE, "thirdparty", "silero", "silero_vad_v5.onnx")
NODE_MODULES = os.path.join(CACHE, "npm", "node_modules")
MODELS = ["rnn_loop", "gate_if", "scan_cumsum", "loop_nested"]
STRATEGIES = ["native", "single:onednn", "single:xnnpack", "single:openblas", "single:halide",
              "greedy:onednn,xnnpack,openblas,native"]
QUICK = ["--threads", "2", "--refine-rounds", "0", "--no-local-moves", "--repeat", "3", "-q"]


# Without PyTorch the script still writes the models it builds with
# onnx.helper; model_files skips the others.
models = exported_models("export_control_flow.py", needs_torch=False)


def model_files(models, name):
    path = os.path.join(models, name + ".onnx")
    if not os.path.exists(path):
        pytest.skip(name + " not exported (PyTorch missing)")
    return path, np.load(os.path.join(models, name + ".in.npy")), np.load(
        os.path.join(models, name + ".out.npy"))


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_matches_the_reference(models, name, strategy):
    path, x, expected = model_files(models, name)
    session = collage.Session(path, strategy=strategy, threads=2)
    y = session.run({"x": x})["y"]
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def check_plan_run(path, plan, x, expected, tmp_path):
    """`collage run --plan` on input x gives the reference output."""
    np.save(tmp_path / "x.npy", x)
    done = subprocess.run([BINARY, "run", path, "--plan", plan, "--input",
                           "x=" + str(tmp_path / "x.npy"), "--save-outputs",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out" / "y.npy"), expected, rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("name", MODELS)
def test_a_tuned_plan_matches_the_reference(models, name, tmp_path):
    path, x, expected = model_files(models, name)
    plan = str(tmp_path / (name + ".plan.json"))
    done = subprocess.run([BINARY, "tune", path, "--cache", str(tmp_path / "cache.sqlite"),
                           "-o", plan] + QUICK, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    with open(plan) as f:
        ops = [op for p in json.load(f)["partitions"] for op in p["ops"]]
    # The control-flow node is in the plan, on a backend that runs it.
    assert {"If", "Loop", "Scan"} & set(ops), ops
    check_plan_run(path, plan, x, expected, tmp_path)
    # `show` lists what the bodies hold under their node's partition, and
    # draws each body as a cluster inside its node's.
    done = subprocess.run([BINARY, "show", plan], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    op = {"rnn_loop": "Loop", "gate_if": "If", "scan_cumsum": "Scan", "loop_nested": "Loop"}[name]
    assert f" of {op} " in done.stdout, done.stdout
    done = subprocess.run([BINARY, "show", plan, "--format", "dot"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "_b0 {" in done.stdout and 'style="dashed"' in done.stdout, done.stdout


@pytest.mark.parametrize("name,op", [("gate_if", "Gemm"), ("rnn_loop", "Gemm")])
def test_a_single_backend_runs_what_it_can_of_the_bodies(models, name, op):
    path, x, expected = model_files(models, name)
    session = collage.Session(path, strategy="single:onednn", threads=2)
    np.testing.assert_allclose(session.run({"x": x})["y"], expected, rtol=1e-4, atol=1e-5)
    plan = json.loads(session.plan)
    assert plan["bodies"], plan
    on_onednn = [o for body in plan["bodies"] for p in body["plan"]["partitions"]
                 if p["backend"] == "onednn" for o in p["ops"]]
    assert op in on_onednn, plan["bodies"]


def test_a_tuned_plan_plans_both_branches_and_checks_them(models, tmp_path):
    # gate_if's sample input takes one branch; tune plans both, each run
    # beside its baselines on random inputs before it is kept.
    path, x, expected = model_files(models, "gate_if")
    plan = str(tmp_path / "gate_if.plan.json")
    done = subprocess.run([BINARY, "tune", path, "--cache", str(tmp_path / "cache.sqlite"),
                           "-o", plan, "--backends", "onednn,xnnpack"] +
                          [a for a in QUICK if a != "-q"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    for branch in ("then_branch", "else_branch"):
        assert f"body: planning {branch} of If" in done.stderr, done.stderr
        assert re.search(rf"body: {branch} of If \S+ (planned: |stays native)", done.stderr), \
            done.stderr
    with open(plan) as f:
        bodies = json.load(f).get("bodies", [])
    for body in bodies:
        assert body["name"] in ("then_branch", "else_branch") and body["plan"]["partitions"]
    check_plan_run(path, plan, x, expected, tmp_path)


def test_a_branch_that_fits_other_sizes_is_refused_only_when_taken(models, tmp_path):
    path, x, expected = model_files(models, "if_per_size")
    session = collage.Session(path, threads=2)
    np.testing.assert_allclose(session.run({"x": x, "flag": np.array(True)})["y"], expected)
    with pytest.raises(Exception, match="else branch was taken"):
        session.run({"x": x, "flag": np.array(False)})
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "flag.npy", np.array(False))
    done = subprocess.run([BINARY, "run", path, "--input", "x=" + str(tmp_path / "x.npy"),
                           "--input", "flag=" + str(tmp_path / "flag.npy")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "node 'If_0'" in lines[0] and "else branch" in lines[0], done.stderr


@pytest.mark.parametrize("name,message", [
    ("if_types", "both branches of an If must give the same element type"),
    ("loop_forever", "the loop never ends"),
])
def test_malformed_control_flow_is_refused_in_one_line(models, name, message):
    done = subprocess.run([BINARY, "info", os.path.join(models, name + ".onnx")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "node '" in lines[0], done.stderr


def onnx_runtime_cases(model, directory, cases, outputs):
    """{rate: (inputs, the CLI's --input arguments, ONNX Runtime's outputs)}
    for `cases` ({rate: inputs}), the inputs saved under `directory`."""
    if not os.path.exists(model):
        pytest.skip("%s not fetched (scripts/fetch_thirdparty.sh)" % os.path.basename(model))
    if not os.path.isdir(os.path.join(NODE_MODULES, "onnxruntime-node")):
        pytest.skip("onnxruntime-node not installed (scripts/fetch_thirdparty.sh)")
    result = {}
    for rate, case in cases.items():
        args = []
        for name, value in case.items():
            path = str(directory / ("%s_%d.npy" % (name, rate)))
            np.save(path, value)
            args += ["--input", "%s=%s" % (name, path)]
        out = str(directory / ("ort_%d" % rate))
        done = subprocess.run(["node", os.path.join(ROOT, "scripts", "ort_runner.js"), model]
                              + args + ["--modules", NODE_MODULES, "--repeat", "1",
                                        "--save-outputs", out],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        expected = {n: np.load(os.path.join(out, n + ".npy")) for n in outputs}
        result[rate] = (case, args, expected)
    return result


@pytest.fixture(scope="module")
def silero(tmp_path_factory):
    directory = tmp_path_factory.mktemp("silero")
    rng = np.random.default_rng(3)
    inputs = {"input": (rng.standard_normal((1, 512)) * 0.3).astype(np.float32),
              "h": (rng.standard_normal((2, 1, 64)) * 0.1).astype(np.float32),
              "c": (rng.standard_normal((2, 1, 64)) * 0.1).astype(np.float32)}
    cases = {rate: dict(inputs, sr=np.array(rate, np.int64)) for rate in (16000, 8000)}
    return directory, onnx_runtime_cases(SILERO, directory, cases, ("output", "hn", "cn"))


# Silero v5 takes 512 samples at 16 kHz and 256 at 8 kHz.
V5_SAMPLES = {16000: 512, 8000: 256}


@pytest.fixture(scope="module")
def silero_v5(tmp_path_factory):
    directory = tmp_path_factory.mktemp("silero_v5")
    rng = np.random.default_rng(5)
    cases = {rate: {"input": (rng.standard_normal((1, samples)) * 0.3).astype(np.float32),
                    "state": (rng.standard_normal((2, 1, 128)) * 0.1).astype(np.float32),
                    "sr": np.array(rate, np.int64)}
             for rate, samples in V5_SAMPLES.items()}
    return directory, onnx_runtime_cases(SILERO_V5, directory, cases, ("output", "stateN"))


SHAPES = ["--input-shape", "input=1,512", "--input-shape", "h=2,1,64", "--input-shape",
          "c=2,1,64"]


@pytest.mark.parametrize("strategy", ["native", "greedy:onednn,xnnpack,openblas,native"])
def test_silero_vad_matches_onnx_runtime_at_both_rates(silero, strategy):
    _, cases = silero
    session = collage.Session(SILERO, strategy=strategy, threads=2,
                              input_shapes={"input": [1, 512], "h": [2, 1, 64], "c": [2, 1, 64]})
    for rate, (case, _, expected) in cases.items():
        outputs = session.run(case)
        for name, value in expected.items():
            np.testing.assert_allclose(outputs[name], value, rtol=1e-4, atol=1e-5,
                                       err_msg="%s at %d Hz" % (name, rate))


def test_silero_vad_tuned_plan_matches_onnx_runtime(silero, tmp_path):
    directory, cases = silero
    plan = str(tmp_path / "silero.plan.json")
    # The branches' LSTMs and matrix products are oneDNN's and XNNPACK's to
    # take; each branch is tuned like a model (pruned candidates, so that a
    # cold cache costs seconds).
    done = subprocess.run([BINARY, "tune", SILERO, "--cache", str(tmp_path / "cache.sqlite"),
                           "-o", plan, "--backends", "onednn,xnnpack", "--prune"] + SHAPES +
                          QUICK, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    for rate, (_, args, expected) in cases.items():
        out = str(tmp_path / ("collage_%d" % rate))
        done = subprocess.run([BINARY, "run", SILERO, "--plan", plan, "--save-outputs", out]
                              + args, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        for name, value in expected.items():
            np.testing.assert_allclose(np.load(os.path.join(out, name + ".npy")), value,
                                       rtol=1e-4, atol=1e-5, err_msg="%s at %d Hz" % (name, rate))


@pytest.mark.parametrize("strategy", ["native", "greedy:onednn,xnnpack,openblas,native"])
def test_silero_vad_v5_matches_onnx_runtime_at_both_rates(silero_v5, strategy):
    _, cases = silero_v5
    for rate, (case, _, expected) in cases.items():
        session = collage.Session(SILERO_V5, strategy=strategy, threads=2,
                                  input_shapes={"input": [1, V5_SAMPLES[rate]],
                                                "state": [2, 1, 128]})
        outputs = session.run(case)
        for name, value in expected.items():
            np.testing.assert_allclose(outputs[name], value, rtol=1e-4, atol=1e-5,
                                       err_msg="%s at %d Hz" % (name, rate))


def test_silero_vad_v5_one_plan_file_serves_both_rates(silero_v5, tmp_path):
    """Random inputs would take the branch of the other rate, which cannot run
    for a length: tune's measurements draw the sample rate that the length's
    branch takes."""
    _, cases = silero_v5
    plan = str(tmp_path / "silero_v5.plan.json")
    shapes = ["--input-shape", "state=2,1,128"]
    for samples in V5_SAMPLES.values():
        shapes += ["--input-shape", "input=1,%d" % samples]
    done = subprocess.run([BINARY, "tune", SILERO_V5, "--cache", str(tmp_path / "cache.sqlite"),
                           "-o", plan, "--backends", "onednn,xnnpack", "--prune"] + shapes +
                          QUICK, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    with open(plan) as f:
        assert len(json.load(f)["plans"]) == 2
    for rate, (_, args, expected) in cases.items():
        out = str(tmp_path / ("collage_%d" % rate))
        done = subprocess.run([BINARY, "run", SILERO_V5, "--plan", plan, "--save-outputs", out]
                              + args, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "warning" not in done.stderr, done.stderr
        for name, value in expected.items():
            np.testing.assert_allclose(np.load(os.path.join(out, name + ".npy")), value,
                                       rtol=1e-4, atol=1e-5, err_msg="%s at %d Hz" % (name, rate))
