#!/usr/bin/python3
"""Writes a model's PyTorch GroupNorm chains as ONNX GroupNormalization ops.

PyTorch before opset 18 exports nn.GroupNorm as Reshape to [N, G, -1],
InstanceNormalization, Reshape back, Mul and Add by per-channel constants;
newer exporters write one GroupNormalization node (opset 21: scale and bias
per channel). This rewrites each such chain of MODEL into that node and
declares opset 21, so that the two imports of one network can be timed side
by side (bench/group_norm_op.sh).

Usage: /usr/bin/python3 bench/group_norm_op.py MODEL.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main(source, target):
    model = onnx.load(source)
    graph = model.graph
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    for node in graph.node:
        if node.op_type == 'Constant':
            constants[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    producer = {out: node for node in graph.node for out in node.output}
    readers = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)

    def only_reader(value, op_type):
        found = readers.get(value, [])
        return found[0] if len(found) == 1 and found[0].op_type == op_type else None

    replaced = {}
    for norm in graph.node:
        if norm.op_type != 'InstanceNormalization':
            continue
        grouping = producer.get(norm.input[0])
        ungrouping = only_reader(norm.output[0], 'Reshape')
        mul = ungrouping and only_reader(ungrouping.output[0], 'Mul')
        add = mul and only_reader(mul.output[0], 'Add')
        if grouping is None or grouping.op_type != 'Reshape' or add is None:
            continue
        groups = int(constants[grouping.input[1]].reshape(-1)[1])
        group_scale = constants[norm.input[1]].reshape(-1)
        group_bias = constants[norm.input[2]].reshape(-1)
        if not (np.all(group_scale == 1) and np.all(group_bias == 0)):
            continue
        gamma = constants[[i for i in mul.input if i in constants][0]].reshape(-1)
        beta = constants[[i for i in add.input if i in constants][0]].reshape(-1)
        scale_name, bias_name = norm.output[0] + '/gn_scale', norm.output[0] + '/gn_bias'
        graph.initializer.extend([numpy_helper.from_array(gamma.astype(np.float32), scale_name),
                                  numpy_helper.from_array(beta.astype(np.float32), bias_name)])
        epsilon = [a.f for a in norm.attribute if a.name == 'epsilon']
        fused = helper.make_node('GroupNormalization', [grouping.input[0], scale_name, bias_name],
                                 [add.output[0]], name=norm.name.replace('InstanceNormalization',
                                                                         'GroupNormalization'),
                                 num_groups=groups, epsilon=epsilon[0] if epsilon else 1e-5)
        replaced[id(add)] = fused
        for node in (grouping, norm, ungrouping, mul):
            replaced[id(node)] = None
    nodes = []
    for node in graph.node:
        if id(node) in replaced:
            if replaced[id(node)] is not None:
                nodes.append(replaced[id(node)])
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    # Shape and Constant nodes and initializers that fed only the removed
    # nodes.
    used = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
    while True:
        dead = [n for n in graph.node if n.op_type in ('Shape', 'Constant') and
                not any(out in used for out in n.output)]
        if not dead:
            break
        for node in dead:
            graph.node.remove(node)
        used = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid('', 21)])
    model.ir_version = 10
    onnx.save(model, target)
    print(f'{target}: {sum(1 for _ in filter(lambda n: n is not None, replaced.values()))} '
          f'GroupNormalization nodes, opset 21')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
