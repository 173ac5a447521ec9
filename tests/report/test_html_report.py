"""The HTML report of a tuned zoo model (SqueezeNet 1.1), as a user makes it:
tune, run with --profile, compare --json, then `collage show --format html`.
The page is opened in headless Chromium (check_html_report.py): no console
message, every partition drawn and listed, a non-empty screenshot; and it
holds the strategies tune measured (or compare's with --compare) as bars,
and one run's timeline from the profile. Skipped without the zoo model or
Chromium.
"""
import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ZOO = os.environ.get("COLLAGE_ZOO_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "collage", "zoo")
BINARY = os.environ.get("COLLAGE_BINARY", os.path.join(ROOT, "build", "collage"))
sys.path.insert(0, HERE)
import check_html_report  # noqa: E402


def collage(*args):
    done = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    model = os.path.join(ZOO, "squeezenet1_1", "model.onnx")
    if not os.path.exists(model):
        pytest.skip("zoo model squeezenet1_1 not exported (scripts/export_zoo.py)")
    if check_html_report.browser() is None:
        pytest.skip("no Chromium")
    work = tmp_path_factory.mktemp("report")
    plan, trace, compared = (str(work / n) for n in ("plan.json", "trace.json", "compare.json"))
    quick = ["--backends", "onednn,xnnpack", "--threads", "2", "--refine-rounds", "0",
             "--repeat", "3", "--cache", str(work / "cache.sqlite"), "-q"]
    collage("tune", model, *quick, "--no-local-moves", "-o", plan)
    collage("run", model, "--plan", plan, "--repeat", "5", "--profile", trace)
    collage("compare", model, *quick, "--json", compared)
    return {"model": model, "plan": plan, "trace": trace, "compare": compared, "work": work}


def bars(html):
    return re.findall(r'<g class="strategy-bar"><title>(.*?): median', html)


def test_report_opens_in_a_browser_with_every_partition_drawn(tuned):
    report = str(tuned["work"] / "report.html")
    out = collage("show", tuned["plan"], "--format", "html", "--profile", tuned["trace"], "-o", report)
    assert f"wrote {report}" in out
    screenshot = str(tuned["work"] / "report.png")
    assert check_html_report.check(report, tuned["plan"], screenshot) == 0
    with open(report) as f:
        html = f.read()
    # Self-contained: nothing is fetched.
    assert not re.search(r'(src|href)="(https?:)?//', html)
    # The strategies tune ran beside the plan, one bar each.
    with open(tuned["plan"]) as f:
        plan = json.load(f)
    assert [row["strategy"] for row in plan["verification"]] == bars(html)
    # One run's timeline: a span per partition's kernel.
    assert 'id="timeline-chart"' in html
    kernels = set(re.findall(r'<rect class="span" data-partition="(\d+)"', html))
    assert len(kernels) == len(plan["partitions"])
    # The profile's in-context times and the alternatives are in the data.
    data = json.loads(re.search(r'id="plan-data">(.*?)</script>', html, re.S).group(1))
    assert all(p["in_context_ms"] is not None for p in data["partitions"])
    # A searched plan shows what each partition was weighed against (a
    # baseline kept instead was not searched).
    if plan["strategy"] == "collage":
        assert any(p["alternatives"] for p in data["partitions"])


def test_compare_results_replace_the_chart(tuned):
    report = str(tuned["work"] / "compared.html")
    collage("show", tuned["plan"], "--format", "html", "--compare", tuned["compare"], "-o", report)
    with open(tuned["compare"]) as f:
        rows = json.load(f)["strategies"]
    with open(report) as f:
        html = f.read()
    assert [r["name"] for r in rows] == bars(html)
    assert "greedy:onednn,xnnpack" in bars(html)
    # Without a profile there is no timeline, and the page says how to get one.
    assert 'id="timeline-chart"' not in html and "--profile trace.json" in html
    assert check_html_report.check(report, tuned["plan"]) == 0
