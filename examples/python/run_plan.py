"""run_plan.py: runs a tuned Collage plan from Python.

    python3 run_plan.py MODEL.onnx PLAN.json INPUT.npy OUT_DIR

Loads the model under the plan (as `collage run --plan` does), runs it on the
input (one-input model; NAME=FILE.npy for several), and writes each output to
OUT_DIR/<name>.npy with the file names `collage run --save-outputs` uses.
"""
import os
import re
import sys

import numpy as np

import collage


def main(argv):
    if len(argv) < 5:
        print(f"usage: {argv[0]} MODEL.onnx PLAN.json [NAME=]INPUT.npy... OUT_DIR", file=sys.stderr)
        return 2
    try:
        session = collage.Session(argv[1], plan=argv[2])
        inputs = {}
        for arg in argv[3:-1]:
            name, _, path = arg.partition("=") if "=" in arg else (session.inputs[0]["name"], "", arg)
            inputs[name] = np.load(path)
        outputs = session.run(inputs)
    except collage.Error as error:
        print(f"run_plan: error: {error}", file=sys.stderr)
        return 2
    os.makedirs(argv[-1], exist_ok=True)
    for name, array in outputs.items():
        np.save(os.path.join(argv[-1], re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy"), array)
        print(name, array.dtype, list(array.shape))
    print(f"strategy {session.strategy}, {session.threads} threads")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
