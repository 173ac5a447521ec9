"""The Python module `collage` (python/collage_module.cc) against numpy."""
import json
import threading

import numpy as np
import pytest

import collage
import models


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return models.conv_model(tmp_path_factory.mktemp("models") / "conv.onnx")


def random_input(seed):
    return np.random.default_rng(seed).standard_normal((1, 8, 12, 12)).astype(np.float32)


def test_session_describes_inputs_and_outputs(model):
    session = collage.Session(model, threads=1)
    assert [i["name"] for i in session.inputs] == ["x"]
    assert session.inputs[0]["dtype"] == np.float32
    assert session.inputs[0]["shape"] == (1, 8, 12, 12)
    assert [o["name"] for o in session.outputs] == ["y", "z"]
    assert session.strategy == "native"
    assert session.threads == 1


def test_an_open_dimension_is_set_to_one_with_a_warning_and_other_sizes_compile_on_first_use(tmp_path, model):
    import onnx
    proto = onnx.load(str(model))
    for value in list(proto.graph.input) + list(proto.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "batch"
    path = tmp_path / "dynamic.onnx"
    onnx.save(proto, str(path))
    session = collage.Session(str(path), threads=1)
    assert session.inputs[0]["shape"] == (1, 8, 12, 12)
    assert len(session.warnings) == 1 and "'x' dimension 0 ('batch')" in session.warnings[0]
    x = np.concatenate([random_input(1), random_input(2)])
    y, _ = models.reference(x[:1], model)
    with pytest.warns(RuntimeWarning, match=r"no plan for x=\[2,8,12,12\]"):
        np.testing.assert_allclose(session.run({"x": x})["y"][:1], y, rtol=1e-4, atol=1e-4)
    assert len(session.warnings) == 2
    # The size compiled for is kept: a second run at it says nothing more.
    session.run({"x": x})
    assert len(session.warnings) == 2
    # A size in a dimension the model fixes is still refused.
    with pytest.raises(collage.Error, match="the model needs"):
        session.run({"x": np.zeros((1, 8, 12, 13), np.float32)})
    sized = collage.Session(str(path), threads=1, input_shapes={"x": [2, 8, 12, 12]})
    assert sized.warnings == []
    np.testing.assert_allclose(sized.run({"x": x})["y"][:1], y, rtol=1e-4, atol=1e-4)


def test_run_matches_numpy_on_every_backend(model):
    x = random_input(1)
    y, z = models.reference(x, model)
    for strategy in models.every_backend_strategy(collage.backends()):
        outputs = collage.Session(model, strategy=strategy, threads=1).run({"x": x})
        assert outputs["y"].dtype == np.float32 and outputs["y"].shape == (1, 16, 12, 12)
        np.testing.assert_allclose(outputs["y"], y, rtol=1e-4, atol=1e-4, err_msg=strategy)
        np.testing.assert_allclose(outputs["z"], z, rtol=1e-4, atol=1e-4, err_msg=strategy)


def test_outputs_are_numpy_arrays_over_the_sessions_buffers(model):
    session = collage.Session(model, threads=1)
    out = session.run({"x": random_input(2)})["z"]
    assert not out.flags["OWNDATA"]
    assert out.flags["C_CONTIGUOUS"] and out.flags["WRITEABLE"]
    # The buffer stays valid after the session is gone.
    del session
    assert np.isfinite(out).all()


def test_a_non_contiguous_input_is_accepted(model):
    session = collage.Session(model, threads=1)
    x = random_input(3)
    strided = np.asfortranarray(x)
    np.testing.assert_array_equal(session.run({"x": strided})["z"], session.run({"x": x})["z"])


def test_errors_are_collage_errors_with_the_cli_message(model, tmp_path):
    session = collage.Session(model, threads=1)
    with pytest.raises(collage.Error, match="input 'x'.*f32\\[1,8,12,12\\]"):
        session.run({"x": random_input(0).astype(np.float64)})
    with pytest.raises(collage.Error, match="the model has no input 'nope'"):
        session.run({"x": random_input(0), "nope": random_input(0)})
    with pytest.raises(collage.Error, match="missing.onnx"):
        collage.Session(str(tmp_path / "missing.onnx"))
    with pytest.raises(collage.Error, match="--threads"):
        collage.Session(model, threads=100000)
    with pytest.raises(collage.Error, match="unknown backend"):
        collage.tune(model, backends=["nosuch"])


def test_a_key_that_is_not_a_string_is_a_type_error_naming_its_type(model):
    session = collage.Session(model, threads=1)
    with pytest.raises(TypeError, match="input names are str; got a key of type int"):
        session.run({1: random_input(0)})


def test_a_huge_broadcast_view_is_refused_by_its_shape_before_any_copy(model):
    session = collage.Session(model, threads=1)
    # 630 GB as a contiguous array: refused by its shape, never copied.
    huge = np.broadcast_to(np.float32(1), (1 << 20, 8, 12, 12))
    with pytest.raises(collage.Error,
                       match=r"input 'x': has shape \(1048576, 8, 12, 12\), but the model needs "
                             r"\(1, 8, 12, 12\)"):
        session.run({"x": huge})
    strided = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (1 << 40, 8), (0, 0))
    with pytest.raises(collage.Error, match="has shape"):
        session.run({"x": strided})
    # A zero-stride view of the right shape is the input it broadcasts.
    view = np.broadcast_to(np.float32(0.5), (1, 8, 12, 12))
    np.testing.assert_array_equal(session.run({"x": view})["z"],
                                  session.run({"x": np.full((1, 8, 12, 12), 0.5, np.float32)})["z"])


def test_a_big_endian_array_is_refused_by_name(model):
    session = collage.Session(model, threads=1)
    with pytest.raises(collage.Error, match="input 'x': .*big-endian"):
        session.run({"x": random_input(0).astype(">f4")})


def test_a_plan_text_that_is_no_json_is_a_short_error(model, tmp_path):
    for text in ["x" * 200_000, "[1,\n2]"]:
        with pytest.raises(collage.Error,
                           match="plan: is neither JSON text .* nor the path of a plan file"):
            collage.Session(model, plan=text)
    # A long path that may be one is cut in the message.
    with pytest.raises(collage.Error, match=r"cannot open|no such file") as raised:
        collage.Session(model, plan=str(tmp_path / ("p" * 3000)))
    assert len(str(raised.value)) < 300


def test_concurrent_runs_on_one_session_match_sequential_runs(model):
    session = collage.Session(model, strategy="greedy:onednn,xnnpack", threads=2)
    inputs = [random_input(seed) for seed in range(4)]
    expected = [session.run({"x": x})["z"] for x in inputs]
    failures = []

    def worker(index):
        for _ in range(20):
            out = session.run({"x": inputs[index]})["z"]
            if not np.array_equal(out, expected[index]):
                failures.append(index)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_tune_returns_plain_data_and_a_plan_a_session_runs(model):
    reports = []
    result = collage.tune(model, threads=1, cache="none", refine_rounds=0, repeat=2,
                          progress=reports.append)
    counted = [r for r in reports if r["stage"] not in ("compile", "layout")]
    assert counted and counted[0]["stage"] == "candidates"
    assert all(r["message"] for r in reports if r["stage"] == "compile")
    assert any(r["stage"] == "candidates" and r["finished"] for r in reports)
    assert result["search"]["candidates"] > 0
    assert result["measured"][0]["strategy"] == "native"
    # The searched plans last: "collage", or one per layout searched in
    # ("collage@own", "collage@blocked-16 [onednn:blocked-16]").
    assert result["measured"][-1]["strategy"].startswith("collage")
    assert all(m["outputs_match"] for m in result["measured"])
    assert json.loads(result["plan"])["strategy"] == result["kept_strategy"]
    session = collage.Session(model, plan=result["plan"])
    assert session.strategy == result["kept_strategy"]
    x = random_input(5)
    np.testing.assert_allclose(session.run({"x": x})["z"], models.reference(x, model)[1],
                               rtol=1e-4, atol=1e-4)


def test_remote_workers_need_a_postgresql_cache(model):
    with pytest.raises(collage.Error, match="PostgreSQL"):
        collage.tune(model, threads=1, cache="none", workers="remote")
    with pytest.raises(collage.Error, match="workers"):
        collage.tune(model, threads=1, cache="none", workers="elsewhere")
    with pytest.raises(collage.Error, match="PostgreSQL"):
        collage.compare(model, threads=1, cache="none", workers="remote")


def test_compare_lists_every_strategy(model):
    result = collage.compare(model, threads=1, cache="none", isolate=False, refine_rounds=0,
                             repeat=2)
    names = [s["strategy"] for s in result["strategies"]]
    assert names[0] == "native" and names[-1].startswith("collage")
    assert result["best_single"] in names
    # The kept plan's strategy; the names are labels, which add where it was
    # searched and the layouts it computes in ("collage@own [onednn:blocked-16]").
    assert result["kept_strategy"] in [n.split(" [")[0].split("@")[0] for n in names]
    assert all(s["median_ms"] > 0 for s in result["strategies"])


def test_backends_lists_native_first():
    listed = collage.backends()
    assert listed[0]["name"] == "native"
    assert all(b["version"] and b["support"] for b in listed)
    assert collage.__version__ == "0.1.0"
