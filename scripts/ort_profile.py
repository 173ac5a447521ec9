#!/usr/bin/env python3
"""Summarizes ONNX Runtime's profile (ort_runner.js --profile): per node, the
median of its kernel time over the traced runs (the warm-up runs among them),
in execution order, with the sum of those medians and the median run.

Usage: ort_profile.py TRACE.json [--top N]
"""
import argparse
import json
import statistics
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--top", type=int, default=0, help="only the N slowest nodes")
    args = parser.parse_args()
    try:
        with open(args.trace) as f:
            events = json.load(f)
    except (OSError, ValueError) as e:
        print(f"ort_profile: cannot read {args.trace}: {e}", file=sys.stderr)
        return 2
    times, ops, order = {}, {}, []
    runs = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        name = e["name"][: -len("_kernel_time")]
        if name not in times:
            times[name] = []
            order.append(name)
            ops[name] = e.get("args", {}).get("op_name", "?")
        times[name].append(e["dur"] / 1000.0)
    rows = [(name, ops[name], statistics.median(times[name])) for name in order]
    total = sum(r[2] for r in rows)
    run_median = statistics.median(e["dur"] / 1000.0 for e in runs) if runs else float("nan")
    print(f"{len(rows)} nodes, {len(runs)} runs: kernels {total:.3f} ms, "
          f"run {run_median:.3f} ms (medians)")
    shown = sorted(rows, key=lambda r: -r[2])[: args.top] if args.top else rows
    for name, op, ms in shown:
        print(f"  {ms:8.3f}  {op:<20} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
