"""How far each plan's output of an int8 model lies from native's, in
quantization steps of the output.

For a model whose output is a DequantizeLinear (through reshapes) with a
constant scale, runs native (the exact reference) and each plan on the same
random inputs and prints, per plan, the largest and the mean |difference| /
output scale over all outputs and inputs. oneDNN and XNNPACK requantize in
float32 where native multiplies in double, so one step can appear in any
layer; this shows how far it travels to the output.

Usage (Debian's interpreter, with the built module on PYTHONPATH):
  PYTHONPATH=build/python /usr/bin/python3 bench/int8_steps.py MODEL.onnx \
      [--inputs 20] [--plan FILE.json] [--strategy single:onednn ...]
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import numpy_helper

import collage

KEEP_GRID = ("Flatten", "Reshape", "Squeeze", "Unsqueeze", "Identity")


def output_step(model):
    """The scale of the DequantizeLinear writing the first output, or None."""
    constants = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.attribute:
            constants[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    producer = {out: node for node in model.graph.node for out in node.output}
    node = producer.get(model.graph.output[0].name)
    while node is not None and node.op_type in KEEP_GRID:
        node = producer.get(node.input[0])
    if node is None or node.op_type != "DequantizeLinear" or node.input[1] not in constants:
        return None
    scale = constants[node.input[1]]
    return float(scale) if scale.size == 1 else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--inputs", type=int, default=20)
    parser.add_argument("--plan", action="append", default=[], help="a tuned plan file")
    parser.add_argument("--strategy", action="append", default=[],
                        help="a strategy (default: single:onednn and single:xnnpack)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    step = output_step(onnx.load(args.model))
    if step is None:
        sys.exit(f"int8_steps: the output of {args.model} is not a DequantizeLinear of one "
                 "constant scale")
    plans = {"native": collage.Session(args.model, strategy="native", threads=args.threads)}
    for strategy in args.strategy or ["single:onednn", "single:xnnpack"]:
        plans[strategy] = collage.Session(args.model, strategy=strategy, threads=args.threads)
    for path in args.plan:
        plans[f"plan {path}"] = collage.Session(args.model, plan=path, threads=args.threads)
    spec = plans["native"].inputs[0]
    shape = [d if isinstance(d, int) and d > 0 else 1 for d in spec["shape"]]
    rng = np.random.default_rng(0)
    largest = {name: 0.0 for name in plans if name != "native"}
    means = {name: [] for name in largest}
    for _ in range(args.inputs):
        x = rng.standard_normal(shape).astype(np.float32)
        want = list(plans["native"].run({spec["name"]: x}).values())[0]
        for name in largest:
            got = list(plans[name].run({spec["name"]: x}).values())[0]
            steps = np.abs(got.astype(np.float64) - want) / step
            largest[name] = max(largest[name], float(steps.max()))
            means[name].append(float(steps.mean()))
    print(f"{args.model}: output step {step:.6g}, {args.inputs} random inputs, "
          f"{args.threads} threads")
    print("| plan | largest difference (steps) | mean difference (steps) |")
    print("|---|---|---|")
    for name in largest:
        print(f"| {name} | {largest[name]:.2f} | {np.mean(means[name]):.3f} |")


if __name__ == "__main__":
    main()
