"""Opens a plan's HTML report (`collage show PLAN --format html`) in headless
Chromium and checks it as a user would see it:
  - the page's script ran to the end (it marks <body data-ready="1">) and the
    browser logged no console message (an exception, a failed load);
  - every partition of the plan is drawn (an element with the id
    "partition_<i>" in the graph) and listed;
  - a screenshot is not empty: it has many distinct colours, and the
    backends' colours among them.
Usage: check_html_report.py REPORT.html PLAN.json [SCREENSHOT.png]
Exits 0 when the report passes, 1 with the reason otherwise, 77 without Chromium.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
                 "--no-first-run", "--hide-scrollbars"]


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_browser(binary, profile_dir, *args):
    return subprocess.run([binary, *BROWSER_FLAGS, f"--user-data-dir={profile_dir}", *args],
                          capture_output=True, text=True, timeout=120)


def png_pixels(path):
    """The RGB pixels of an 8-bit RGB or RGBA PNG, as a set of (r, g, b)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError(f"unexpected PNG format (depth {depth}, colour type {colour})")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else up_left
                line[i] = (line[i] + pred) & 0xFF
        if row % 4 == 0:
            for x in range(0, width, 2):
                colours.add(tuple(line[x * channels:x * channels + 3]))
        previous = line
    return colours


def check(report, plan_path, screenshot=None):
    binary = browser()
    if binary is None:
        print("SKIP: no Chromium (apt-get install chromium)")
        return 77
    with open(plan_path) as f:
        plan = json.load(f)
    partitions = len(plan["partitions"])
    url = "file://" + os.path.abspath(report)
    with tempfile.TemporaryDirectory() as profile_dir:
        dom = run_browser(binary, profile_dir, "--enable-logging=stderr", "--v=0", "--dump-dom", url)
        if dom.returncode != 0:
            return fail(f"chromium exited {dom.returncode}: {dom.stderr[-500:]}")
        console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
        if console:
            return fail("the page logged to the console: " + " | ".join(console)[:800])
        body = re.search(r"<body([^>]*)>", dom.stdout)
        attributes = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1) if body else ""))
        if attributes.get("ready") != "1":
            return fail("the page's script did not finish (no data-ready on <body>)")
        if attributes.get("partitions") != str(partitions):
            return fail(f"the page has {attributes.get('partitions')} partitions, the plan {partitions}")
        drawn = set(re.findall(r'id="partition_(\d+)"', dom.stdout))
        if attributes.get("partitions-drawn") != str(partitions) or len(drawn) != partitions:
            return fail(f"{len(drawn)} of {partitions} partitions drawn in the graph")
        listed = set(re.findall(r'<tr data-partition="(\d+)"', dom.stdout))
        if len(listed) != partitions:
            return fail(f"{len(listed)} of {partitions} partitions listed")
        shot = screenshot or os.path.join(profile_dir, "report.png")
        taken = run_browser(binary, profile_dir, "--window-size=1400,1100",
                            f"--screenshot={os.path.abspath(shot)}", url)
        if taken.returncode != 0 or not os.path.exists(shot):
            return fail(f"no screenshot: {taken.stderr[-500:]}")
        colours = png_pixels(shot)
    if len(colours) < 16:
        return fail(f"the screenshot is nearly empty ({len(colours)} distinct colours)")
    with open(report) as f:
        data = re.search(r'<script type="application/json" id="plan-data">(.*?)</script>', f.read(),
                         re.S)
    for backend, colour in json.loads(data.group(1))["colors"].items():
        rgb = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
        if rgb not in colours:
            return fail(f"{backend}'s colour {colour} is not on the screen")
    print(f"PASS {report}: {partitions} partitions drawn and listed, no console message, "
          f"screenshot with {len(colours)} distinct colours")
    return 0


def fail(reason):
    print("FAIL " + reason)
    return 1


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        sys.exit(2)
    sys.exit(check(*sys.argv[1:]))
