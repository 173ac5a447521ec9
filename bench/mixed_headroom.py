#!/usr/bin/env python3
"""How much faster than its kept plan a model could run by moving work off
its dense convolutions' backend: per model, the time the kept plan spends in
dense convolutions (not depthwise; with the post-ops fused into them) against
its whole run, from a bench/op_gaps.sh report of the same plans.

If no backend runs a dense convolution faster than the kept plan does, a
plan can at best make everything else free: its run can fall to the dense
convolutions' time and no lower, so the kept plan's speed-up over the best
single backend can at most grow by end to end / dense convolutions. With a
bench/broad_set.sh report (--broad), that ceiling is multiplied by the speed-up
each model's kept plan already had over the best single backend there, and
the geometric mean of the ceilings is the most the broad set's "collage vs
best single" could reach without faster convolutions.

Usage: mixed_headroom.py --gaps OP_GAPS.md [--broad BROAD.md]
"""
import argparse
import math
import re
import sys


def parse_gaps(path):
    """Model -> (kept plan, {op class: collage ms}, end to end ms)."""
    models = {}
    name = None
    with open(path) as f:
        for line in f:
            heading = re.match(r"^### (\S+) \(kept plan: (.*)\)", line)
            if heading:
                name = heading.group(1)
                models[name] = [heading.group(2), {}, None]
                continue
            if line.startswith("### "):
                name = None
                continue
            if name is None or not line.startswith("| "):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or cells[0] == "op class" or cells[1].startswith("-"):
                continue
            try:
                ms = float(cells[1])
            except ValueError:
                continue
            if cells[0] == "end to end, untraced median":
                models[name][2] = ms
            elif not cells[0].startswith("**") and not cells[0].startswith("outside"):
                models[name][1][cells[0]] = ms
    return {k: tuple(v) for k, v in models.items() if v[2]}


def parse_broad(path):
    """Model -> the kept plan's speed-up over the best single backend."""
    speedups = {}
    with open(path) as f:
        header = None
        for line in f:
            if not line.startswith("| "):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] == "model":
                header = cells if "kept vs best single" in cells else None
                continue
            if header is None or len(cells) != len(header) or cells[0].startswith("-"):
                continue
            column = header.index("kept vs best single")
            speedups[cells[0]] = float(cells[column].rstrip("x"))
    return speedups


def dense_conv(op_class):
    return re.match(r"^Conv(Transpose)?( |$)", op_class) is not None and " dw " not in op_class


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gaps", required=True, help="a bench/op_gaps.sh report")
    parser.add_argument("--broad", help="a bench/broad_set.sh report of the same plans")
    args = parser.parse_args()
    try:
        models = parse_gaps(args.gaps)
        speedups = parse_broad(args.broad) if args.broad else {}
    except (OSError, ValueError) as e:
        print(f"mixed_headroom: {e}", file=sys.stderr)
        return 2
    if not models:
        print(f"mixed_headroom: no model's table in {args.gaps}", file=sys.stderr)
        return 2
    columns = ["model", "kept plan", "end to end ms", "dense convolutions ms",
               "their share", "the rest ms", "end to end / dense convolutions"]
    if speedups:
        columns += ["kept vs best single", "ceiling vs best single"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    ceilings = []
    for name, (kept, classes, e2e) in models.items():
        conv = sum(ms for cls, ms in classes.items() if dense_conv(cls))
        bound = e2e / conv if conv > 0 else math.inf
        row = [name, kept, f"{e2e:.3f}", f"{conv:.3f}", f"{conv / e2e:.0%}",
               f"{e2e - conv:.3f}", f"{bound:.2f}x" if conv > 0 else "-"]
        if speedups:
            if name in speedups and conv > 0:
                ceiling = speedups[name] * bound
                ceilings.append(ceiling)
                row += [f"{speedups[name]:.2f}x", f"{ceiling:.2f}x"]
            else:
                row += ["-", "-"]
        print("| " + " | ".join(row) + " |")
    if ceilings:
        geomean = math.exp(sum(math.log(c) for c in ceilings) / len(ceilings))
        print(f"\n- geometric mean of the ceilings over the best single backend "
              f"({len(ceilings)} models): {geomean:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
