#!/usr/bin/env python3
"""Where a plan loses to ONNX Runtime, per op class: the time collage's
kernels and ONNX Runtime's kernels spend on each class of op (Conv 1x1,
depthwise Conv 3x3, MaxPool, Concat, elementwise chains, layout
conversions, ...), from `collage run --profile` and ONNX Runtime's profiler
(scripts/ort_runner.js --profile) on the same model and input.

Each kernel's time is its median over the traced runs; a class's time is
the sum of its kernels' medians. oneDNN partitions trace each primitive (an
op or a fused chain such as Conv+Relu) on its own; another backend's
partition counts whole toward the class of its heaviest op (a native
partition of Sigmoid+Mul is elementwise, an XNNPACK region with
convolutions is Conv). ONNX Runtime's fused nodes count toward their first
op (FusedConv is Conv), its NCHWc reorders toward layout conversion, as do
collage's reorders inside kernels. Both profilers add time around kernels,
so each side's kernel total is shown beside its untraced end-to-end median;
the difference is the time outside kernels (executor, thread wake-ups).

Usage: op_gaps.py --model M.onnx --collage TRACE.json --plan PLAN.json --ort ORT_TRACE.json
         [--collage-ms X --ort-ms Y] [--json OUT.json]
       op_gaps.py --sum A.json B.json ...   (the per-class totals of several models)
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict

import onnx

# Op types by class, heaviest first: a partition counts toward its first class here.
ELEMENTWISE = {
    "Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "Max", "Min",
    "HardSigmoid", "HardSwish", "Swish", "Silu", "Elu", "Selu", "PRelu", "Pow", "Sqrt", "Exp",
    "Log", "Abs", "Neg", "Erf", "Gelu", "FastGelu", "BiasGelu", "QuickGelu", "Softplus", "Mish",
    "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos", "Where", "Equal", "Less", "Greater",
    "Not", "And", "Or", "Cast", "Identity", "BatchNormalization", "Affine",
}
POOLS = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool"}
NORMS = {"LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization",
         "GroupNormalization", "InstanceNormalization", "LpNormalization"}
REDUCTIONS = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
              "ArgMax", "ArgMin", "TopK"}
HEAVY = ["Conv", "ConvTranspose", "MatMul", "Gemm", "LSTM", "GRU", "RNN", "Attention"]
FUSED = {"FusedConv": "Conv", "FusedMatMul": "MatMul", "FusedGemm": "Gemm",
         "NhwcConv": "Conv", "NhwcFusedConv": "Conv", "QuickGelu": "Gelu", "BiasGelu": "Gelu",
         "FastGelu": "Gelu", "SkipLayerNormalization": "LayerNormalization"}
LAYOUT = "layout conversion"


def op_rank(op):
    if op in HEAVY:
        return HEAVY.index(op)
    for rank, group in enumerate([POOLS, NORMS, {"Softmax"}, {"Resize"}, {"Concat"}, REDUCTIONS],
                                 start=len(HEAVY)):
        if op in group:
            return rank
    return 100 if op in ELEMENTWISE else 200


def conv_class(op, weight_dims):
    """'Conv 1x1', 'Conv dw 3x3', 'Conv 3x3', 'Conv1d k5', from the weight's dims."""
    if not weight_dims or len(weight_dims) < 3:
        return op
    kernel = weight_dims[2:]
    depthwise = weight_dims[1] == 1 and weight_dims[0] > 1
    if len(kernel) == 1:
        size = f"1d k{kernel[0]}"
    else:
        size = "x".join(str(k) for k in kernel)
    if all(k == 1 for k in kernel):
        return f"{op} {size}"
    return f"{op} {'dw ' if depthwise else ''}{size}"


def op_class(op, weight_dims=None):
    op = FUSED.get(op, op)
    if op in ("Conv", "ConvTranspose"):
        return conv_class(op, weight_dims)
    if op in ELEMENTWISE:
        return "elementwise"
    if op in NORMS:
        return "LayerNorm/GroupNorm"
    if op in REDUCTIONS:
        return "reduction"
    if op in POOLS or op in HEAVY or op in ("Softmax", "Resize", "Concat"):
        return op
    return "data movement"


class Model:
    """Node name -> (op type, weight dims) of an ONNX model."""

    def __init__(self, path):
        model = onnx.load(path, load_external_data=False)
        dims = {i.name: list(i.dims) for i in model.graph.initializer}
        self.nodes = {}
        for node in model.graph.node:
            weight = dims.get(node.input[1]) if len(node.input) > 1 else None
            self.nodes[node.name] = (node.op_type, weight)

    def weight(self, name):
        return self.nodes.get(name, (None, None))[1]


def medians(samples):
    return {key: statistics.median(values) for key, values in samples.items()}


def collage_classes(trace_path, plan_path, model):
    """Class -> ms (sum of per-kernel medians) and the traced runs' count."""
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    plan_nodes = []
    if plan_path:
        with open(plan_path) as f:
            plan_nodes = [p.get("nodes", []) for p in json.load(f)["partitions"]]
    spans = defaultdict(list)  # (run, partition) -> events
    for e in events:
        args = e.get("args", {})
        if "partition" in args:
            spans[(args.get("run", 0), args["partition"])].append(e)
    samples = defaultdict(list)  # (partition, key) -> durations (ms), one per run
    classes = {}
    for (run, partition), group in spans.items():
        whole = [e for e in group if e["cat"] == "partition"]
        if not whole:
            continue
        ops = [e for e in group if e["cat"] == "op"]
        layout = sum(e["dur"] for e in group if e["cat"] == "layout")
        samples[(partition, LAYOUT)].append(layout / 1e3)
        classes[(partition, LAYOUT)] = LAYOUT
        for k, e in enumerate(ops):
            node = e["args"].get("node", "")
            first = e["name"].split("+")[0]
            samples[(partition, k)].append(e["dur"] / 1e3)
            classes[(partition, k)] = op_class(first, model.weight(node))
        rest = whole[0]["dur"] - layout - sum(e["dur"] for e in ops)
        if ops:
            # The kernel's own time between its primitives.
            samples[(partition, "rest")].append(max(rest, 0) / 1e3)
            classes[(partition, "rest")] = "between primitives"
            continue
        types = whole[0]["args"].get("ops", "").split()
        names = plan_nodes[partition] if partition < len(plan_nodes) else []
        anchor = min(types, key=op_rank) if types else "?"
        weight = next((model.weight(n) for n in names if model.nodes.get(n, ("",))[0] == anchor),
                      None)
        samples[(partition, "all")].append(max(rest, 0) / 1e3)
        classes[(partition, "all")] = op_class(anchor, weight)
    totals = defaultdict(float)
    for key, ms in medians(samples).items():
        totals[classes[key]] += ms
    return totals


def ort_classes(trace_path):
    with open(trace_path) as f:
        events = json.load(f)
    samples = defaultdict(list)
    classes = {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        args = e.get("args", {})
        op = args.get("op_name", "?")
        shapes = [next(iter(s.values())) for s in args.get("input_type_shape", [])]
        if op in ("ReorderInput", "ReorderOutput"):
            cls = LAYOUT
        else:
            cls = op_class(op, shapes[1] if len(shapes) > 1 else None)
        samples[e["name"]].append(e["dur"] / 1e3)
        classes[e["name"]] = cls
    totals = defaultdict(float)
    for key, ms in medians(samples).items():
        totals[classes[key]] += ms
    return totals


def print_table(title, collage, ort, collage_ms=None, ort_ms=None):
    print(f"### {title}\n")
    print("| op class | collage ms | ONNX Runtime ms | collage - ORT ms | collage / ORT |")
    print("|---|---|---|---|---|")
    rows = sorted(set(collage) | set(ort), key=lambda c: -(collage.get(c, 0) - ort.get(c, 0)))
    for cls in rows:
        c, o = collage.get(cls, 0.0), ort.get(cls, 0.0)
        ratio = f"{c / o:.2f}" if o > 0.0005 else "-"
        print(f"| {cls} | {c:.3f} | {o:.3f} | {c - o:+.3f} | {ratio} |")
    ck, ok = sum(collage.values()), sum(ort.values())
    print(f"| **kernels, total** | {ck:.3f} | {ok:.3f} | {ck - ok:+.3f} | "
          f"{ck / ok if ok else 0:.2f} |")
    if collage_ms is not None and ort_ms is not None:
        print(f"| end to end, untraced median | {collage_ms:.3f} | {ort_ms:.3f} | "
              f"{collage_ms - ort_ms:+.3f} | {collage_ms / ort_ms:.2f} |")
        print(f"| outside kernels (end to end - kernels) | {collage_ms - ck:+.3f} | "
              f"{ort_ms - ok:+.3f} | | |")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model")
    parser.add_argument("--collage")
    parser.add_argument("--plan")
    parser.add_argument("--ort")
    parser.add_argument("--collage-ms", type=float)
    parser.add_argument("--ort-ms", type=float)
    parser.add_argument("--title", default="")
    parser.add_argument("--json", help="also write the per-class totals here")
    parser.add_argument("--sum", nargs="+", help="sum the --json files of several models")
    args = parser.parse_args()
    if args.sum:
        collage, ort = defaultdict(float), defaultdict(float)
        collage_ms = ort_ms = 0.0
        for path in args.sum:
            with open(path) as f:
                data = json.load(f)
            for k, v in data["collage"].items():
                collage[k] += v
            for k, v in data["ort"].items():
                ort[k] += v
            collage_ms += data.get("collage_ms") or 0.0
            ort_ms += data.get("ort_ms") or 0.0
        print_table(args.title or f"all {len(args.sum)} models, summed", collage, ort,
                    collage_ms, ort_ms)
        return 0
    if not (args.model and args.collage and args.ort):
        parser.error("--model, --collage and --ort are needed (or --sum)")
    try:
        model = Model(args.model)
        collage = collage_classes(args.collage, args.plan, model)
        ort = ort_classes(args.ort)
    except (OSError, ValueError, KeyError) as e:
        print(f"op_gaps: {e}", file=sys.stderr)
        return 2
    print_table(args.title or args.model, collage, ort, args.collage_ms, args.ort_ms)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"collage": collage, "ort": ort, "collage_ms": args.collage_ms,
                       "ort_ms": args.ort_ms}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
