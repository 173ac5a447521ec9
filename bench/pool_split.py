#!/usr/bin/python3
"""Plans that split a model at its MaxPools, for `collage run --plan`.

A PyTorch export names its nodes by module path (/inception3a/branch1/...).
This writes plans whose partitions are: each top-level module's nodes but
its MaxPools on oneDNN, each MaxPool alone on `--pool-backend`, Flatten on
native; partitions listed in an order they run in (a pool that reads a
module's input goes before the module). With --pool-backend onednn the
split is the same, so the two plans differ only in who pools. The model
hash and machine come from a plan `collage tune -o` wrote for the model.

  /usr/bin/python3 bench/pool_split.py MODEL.onnx TUNED_PLAN.json OUT_PREFIX

writes OUT_PREFIX_{native,onednn}_{own,blocked-16}.json; then
  collage run MODEL.onnx --plan TUNED_PLAN.json --plan OUT_PREFIX_... --repeat 60
"""
import json
import sys

import onnx


def module_of(node):
    return node.name.split("/")[1] if node.name.startswith("/") else node.name


def split_plan(model, tuned, pool_backend, layout):
    parts = []
    current = None
    for node in model.graph.node:
        if node.op_type == "MaxPool":
            pool = {"backend": pool_backend, "nodes": [node.name], "module": None}
            if current is not None and current["module"] == module_of(node):
                parts.insert(parts.index(current), pool)
            else:
                parts.append(pool)
                current = None
            continue
        if node.op_type == "Flatten":
            parts.append({"backend": "native", "nodes": [node.name], "module": None})
            current = None
            continue
        if current is None or current["module"] != module_of(node):
            current = {"backend": "onednn", "nodes": [], "module": module_of(node)}
            parts.append(current)
        current["nodes"].append(node.name)
    plan = {k: v for k, v in tuned.items() if k not in ("estimated_ms", "measured_ms")}
    plan["strategy"] = "collage"
    plan["compute_layouts"] = {"onednn": layout} if layout else {}
    plan["partitions"] = [{"backend": p["backend"], "nodes": p["nodes"]} for p in parts]
    return plan


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    with open(sys.argv[2]) as f:
        tuned = json.load(f)
    for pool_backend in ("native", "onednn"):
        for layout in (None, "blocked-16"):
            path = f"{sys.argv[3]}_{pool_backend}_{layout or 'own'}.json"
            with open(path, "w") as f:
                json.dump(split_plan(model, tuned, pool_backend, layout), f)
            print(path)


if __name__ == "__main__":
    main()
