"""Quantizes a float32 ONNX model to 8 bits, as static post-training quantization does.

Two output forms, the two that quantized ONNX models ship in:
  qdq        QuantizeLinear/DequantizeLinear pairs around the activations of
             the quantizable ops, read through the DequantizeLinear by every
             reader; int8 weights behind DequantizeLinear (the form of ONNX
             Runtime's quantize_static QDQ, PyTorch and TensorRT), a
             ConvTranspose's with a scale per index of axis 1; a Conv,
             ConvTranspose, Gemm, MatMul or Add alone feeding a Relu or Clip
             has its pair after the activation;
  qoperator  the quantized ops themselves: QLinearConv, QLinearMatMul, and the
             com.microsoft QGemm, QLinearAdd, QLinearMul, QLinearConcat,
             QLinearGlobalAveragePool, QLinearAveragePool, QLinearSigmoid,
             QLinearLeakyRelu and QLinearSoftmax that ONNX Runtime's quantizer
             writes; MaxPool and
             the reshaping ops run on the 8-bit values; a Conv or Gemm followed
             by Relu or Clip becomes one op quantized to the activation's range (and
             an Add, as ONNX Runtime fuses them before quantizing); a
             ConvTranspose, which has no QLinear op in ONNX or ONNX Runtime,
             stays float32 between DequantizeLinear and QuantizeLinear.

A BatchNormalization that alone reads a Conv or ConvTranspose is folded into
its weights and bias first, as quantization's pre-processing does.

Activations are uint8 with a scale and zero point per tensor, from the range
each takes on calibration inputs; weights are int8, symmetric, one scale per
output channel; biases int32 at the scale x_scale * w_scale. The calibration
inputs run through collage's reference executor (`collage run --save-outputs`
on a copy of the model that outputs every calibrated tensor): random normal
data unless --input gives files.

Run with Debian's interpreter, which has onnx and numpy:
  /usr/bin/python3 scripts/quantize_model.py MODEL.onnx OUT.onnx --format qoperator
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

QDQ_OPS = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Mul", "Concat", "MaxPool",
           "AveragePool", "GlobalAveragePool", "Sigmoid", "LeakyRelu", "Softmax"}
RESHAPING_OPS = {"Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze"}
ACTIVATIONS = {"Relu", "Clip"}


def saved_name(name):
    """The file name `collage run --save-outputs` gives an output."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy"


def float_tensors(model):
    """Names of the float32 values (inputs and node outputs) of the model."""
    inferred = shape_inference.infer_shapes(model)
    types = {}
    for info in list(inferred.graph.value_info) + list(inferred.graph.input) + list(
            inferred.graph.output):
        types[info.name] = info.type.tensor_type.elem_type
    initializers = {i.name for i in model.graph.initializer}
    return {name for name, t in types.items()
            if t == onnx.TensorProto.FLOAT and name not in initializers}


def calibrate(model, tensors, collage, samples, inputs, seed, threads):
    """The [min, max] each of `tensors` takes on the calibration inputs."""
    calibration = onnx.ModelProto()
    calibration.CopyFrom(model)
    present = {o.name for o in calibration.graph.output}
    files = {}
    for name in sorted(tensors):
        if saved_name(name) in files.values():
            continue  # two names that save to one file: calibrated as the first
        files[name] = saved_name(name)
        if name not in present:
            calibration.graph.output.append(helper.ValueInfoProto(name=name))
    ranges = {}
    rng = np.random.default_rng(seed)
    graph_inputs = [i for i in model.graph.input
                    if i.name not in {init.name for init in model.graph.initializer}]
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "calibration.onnx")
        onnx.save(calibration, path)
        runs = max(1, len(inputs) and 1 or samples)
        for sample in range(runs):
            command = [collage, "run", path, "--graph-opt", "none", "--repeat", "1", "--warmup",
                       "0", "--threads", str(threads), "--save-outputs", os.path.join(work, "out")]
            if inputs:
                for spec in inputs:
                    command += ["--input", spec]
            else:
                for graph_input in graph_inputs:
                    dims = [d.dim_value if d.dim_value > 0 else 1
                            for d in graph_input.type.tensor_type.shape.dim]
                    data = rng.standard_normal(dims).astype(np.float32)
                    file = os.path.join(work, f"in{sample}_{len(command)}.npy")
                    np.save(file, data)
                    command += ["--input", f"{graph_input.name}={file}"]
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                sys.exit(f"quantize_model: calibration run failed: {result.stderr.strip()}")
            for name, file in files.items():
                values = np.load(os.path.join(work, "out", file))
                low, high = float(values.min()), float(values.max())
                if name in ranges:
                    low, high = min(low, ranges[name][0]), max(high, ranges[name][1])
                ranges[name] = (low, high)
            print(f"quantize_model: calibration sample {sample + 1}/{runs}", flush=True)
    return ranges


def activation_params(low, high):
    """uint8 scale and zero point that cover [min(0, low), max(0, high)]."""
    low, high = min(0.0, low), max(0.0, high)
    scale = (high - low) / 255.0 if high > low else 1.0
    zero_point = int(np.clip(np.round(-low / scale), 0, 255))
    return np.float32(scale), np.uint8(zero_point)


def weight_params(weights, axis):
    """Symmetric int8 weights with one scale per index of `axis`."""
    moved = np.moveaxis(weights, axis, 0).reshape(weights.shape[axis], -1)
    scale = np.abs(moved).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    shape = [1] * weights.ndim
    shape[axis] = -1
    q = np.clip(np.round(weights / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def fold_batch_norms(model):
    """Folds each inference BatchNormalization that alone reads a Conv's or
    ConvTranspose's output into that op's weights and bias, as quantization's
    pre-processing does, so that the BatchNormalization is not left in
    float32 between a DequantizeLinear and a QuantizeLinear. Returns the
    count."""
    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    readers = consumers(model)
    producer = {out: node for node in graph.node for out in node.output}
    outputs = {o.name for o in graph.output}
    folded = []
    for bn in graph.node:
        if bn.op_type != "BatchNormalization" or len(bn.output) != 1:
            continue
        op = producer.get(bn.input[0])
        if op is None or op.op_type not in ("Conv", "ConvTranspose") or op.output[0] in outputs \
                or len(readers.get(op.output[0], [])) != 1 or op.input[1] not in weights \
                or any(name not in weights for name in bn.input[1:5]) \
                or (len(op.input) > 2 and op.input[2] and op.input[2] not in weights):
            continue
        gamma, beta, mean, var = (numpy_helper.to_array(weights[n]).astype(np.float64)
                                  for n in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        scale = gamma / np.sqrt(var + eps)
        w = numpy_helper.to_array(weights[op.input[1]]).astype(np.float64)
        if op.op_type == "Conv":
            w = w * scale.reshape((-1,) + (1,) * (w.ndim - 1))
        else:
            # [C, M/group, k...]: output channel g * M/group + o is w[g's rows, o].
            group = next((a.i for a in op.attribute if a.name == "group"), 1)
            per_group = w.shape[1]
            blocks = w.reshape((group, w.shape[0] // group) + w.shape[1:])
            blocks = blocks * scale.reshape((group, 1, per_group) + (1,) * (w.ndim - 2))
            w = blocks.reshape(w.shape)
        bias = (numpy_helper.to_array(weights[op.input[2]]).astype(np.float64)
                if len(op.input) > 2 and op.input[2] else np.zeros_like(mean))
        new_bias = (bias - mean) * scale + beta
        w_name, b_name = op.input[1] + "_bn_folded", bn.output[0] + "_bias_bn_folded"
        graph.initializer.append(numpy_helper.from_array(w.astype(np.float32), w_name))
        graph.initializer.append(numpy_helper.from_array(new_bias.astype(np.float32), b_name))
        data = op.input[0]
        del op.input[:]
        op.input.extend([data, w_name, b_name])
        # The op writes the BatchNormalization's output; the BatchNormalization goes.
        op.output[0] = bn.output[0]
        folded.append(bn)
    for bn in folded:
        graph.node.remove(bn)
    return len(folded)


class Writer:
    """The quantized graph, built node by node."""

    def __init__(self, model, ranges):
        self.model = model
        self.ranges = ranges
        self.nodes = []
        self.initializers = list(model.graph.initializer)
        self.constants = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        # Exporters share a parameter through an Identity of its initializer,
        # and give Clip's bounds as Constant nodes.
        for node in model.graph.node:
            if node.op_type == "Identity" and node.input[0] in self.constants:
                self.constants[node.output[0]] = self.constants[node.input[0]]
            if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
                self.constants[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
        self.params = {}
        self.count = 0
        self.microsoft = False

    def unique(self, base):
        self.count += 1
        return f"{base}_q{self.count}"

    def constant(self, base, array):
        name = self.unique(base)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def activation(self, tensor):
        """(scale name, zero point name) of a calibrated activation."""
        if tensor not in self.params:
            scale, zero_point = activation_params(*self.ranges[tensor])
            self.params[tensor] = (self.constant(tensor + "_scale", scale),
                                   self.constant(tensor + "_zero_point", zero_point))
        return self.params[tensor]

    def node(self, op, inputs, outputs, domain="", **attributes):
        if domain:
            self.microsoft = True
        self.nodes.append(helper.make_node(op, inputs, outputs, name=self.unique(op),
                                           domain=domain, **attributes))

    def quantized_weights(self, tensor, axis):
        q, scale = weight_params(self.constants[tensor], axis)
        return (self.constant(tensor + "_int8", q), self.constant(tensor + "_scale", scale),
                self.constant(tensor + "_zero_point", np.zeros(scale.shape, np.int8)), scale)


def consumers(model):
    result = {}
    for node in model.graph.node:
        for name in node.input:
            result.setdefault(name, []).append(node)
    return result


def clip_bounds(node, constants):
    """Clip's (min, max), from attributes (opset < 11) or constant inputs."""
    low, high = -np.inf, np.inf
    for a in node.attribute:
        if a.name == "min":
            low = a.f
        if a.name == "max":
            high = a.f
    if len(node.input) > 1 and node.input[1]:
        low = float(constants[node.input[1]]) if node.input[1] in constants else None
    if len(node.input) > 2 and node.input[2]:
        high = float(constants[node.input[2]]) if node.input[2] in constants else None
    return low, high


def write_qdq(model, ranges, calibrated):
    w = Writer(model, ranges)
    rename = {}
    readers = consumers(model)
    outputs = {o.name for o in model.graph.output}
    # Outputs of a Relu or Clip that alone reads a quantized op's output: the
    # pair goes after the activation, as ONNX Runtime's quantizer places it
    # once it has fused the two (the activation then folds into the unit).
    quantize_after = set()

    def activation_after(node):
        out = node.output[0]
        after = readers.get(out, [])
        if node.op_type not in ("Conv", "ConvTranspose", "Gemm", "MatMul", "Add") \
                or out in outputs \
                or len(after) != 1 or after[0].op_type not in ACTIVATIONS:
            return None
        if after[0].op_type == "Clip":
            low, high = clip_bounds(after[0], w.constants)
            if low is None or high is None or low > 0:
                return None
        return after[0].output[0]

    def qdq(tensor):
        if tensor not in calibrated or tensor in w.constants:
            return tensor
        if tensor not in rename:
            scale, zero_point = w.activation(tensor)
            rename[tensor] = w.unique(tensor + "_dq")
            quantized = w.unique(tensor + "_quantized")
            w.node("QuantizeLinear", [tensor, scale, zero_point], [quantized])
            w.node("DequantizeLinear", [quantized, scale, zero_point], [rename[tensor]])
        return rename[tensor]

    for node in model.graph.node:
        # A quantized value is read through its DequantizeLinear by every
        # reader, as ONNX Runtime's quantizer rewires them all.
        inputs = [rename.get(name, name) for name in node.input]
        if node.op_type in QDQ_OPS:
            for i, name in enumerate(inputs):
                if name and name not in w.constants:
                    inputs[i] = qdq(name)
        # A ConvTranspose's weights [C, M/group, k...] have their output
        # channels on axis 1.
        weight_axis = {"Conv": 0, "ConvTranspose": 1, "MatMul": 1}.get(node.op_type)
        if node.op_type == "Gemm":
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            weight_axis = 0 if trans_b else 1
        if weight_axis is not None and len(inputs) > 1 and node.input[1] in w.constants \
                and w.constants[node.input[1]].ndim >= 2 and node.input[0] in ranges:
            q, scale, zero_point, scales = w.quantized_weights(node.input[1], weight_axis)
            inputs[1] = w.unique(node.input[1] + "_dq")
            w.node("DequantizeLinear", [q, scale, zero_point], [inputs[1]],
                   axis=weight_axis)
            bias = node.input[2] if len(node.input) > 2 else ""
            if bias and bias in w.constants and w.constants[bias].ndim == 1:
                x_scale = float(activation_params(*ranges[node.input[0]])[0])
                # One scale per output channel: a grouped ConvTranspose's
                # repeat for every group.
                channels = w.constants[bias].shape[0]
                bias_scale = (x_scale * np.resize(scales, channels)).astype(np.float32)
                bias_q = np.round(w.constants[bias] / bias_scale).astype(np.int32)
                inputs[2] = w.unique(bias + "_dq")
                w.node("DequantizeLinear",
                       [w.constant(bias + "_int32", bias_q), w.constant(bias + "_scale", bias_scale),
                        w.constant(bias + "_zero_point", np.zeros(bias_q.shape, np.int32))],
                       [inputs[2]], axis=0)
        w.nodes.append(helper.make_node(node.op_type, inputs, list(node.output), name=node.name,
                                        domain=node.domain,
                                        **{a.name: helper.get_attribute_value(a)
                                           for a in node.attribute}))
        # The output of a quantized op is quantized for whoever reads it.
        if node.op_type in QDQ_OPS:
            fused = activation_after(node)
            if fused is not None and fused in calibrated:
                quantize_after.add(fused)
                continue
            for output in node.output:
                if output in calibrated:
                    qdq(output)
        for output in node.output:
            if output in quantize_after:
                qdq(output)
    return w


def write_qoperator(model, ranges):
    w = Writer(model, ranges)
    readers = consumers(model)
    outputs = {o.name for o in model.graph.output}
    quantized = {}  # float name -> uint8 name (its parameters are w.activation(float name))
    available = {i.name for i in model.graph.input} | set(w.constants)
    skipped = set()

    def to_quantized(tensor):
        if tensor not in quantized:
            scale, zero_point = w.activation(tensor)
            quantized[tensor] = w.unique(tensor + "_quantized")
            w.node("QuantizeLinear", [tensor, scale, zero_point], [quantized[tensor]])
        return quantized[tensor]

    def to_float(tensor):
        if tensor and tensor not in available and tensor in quantized:
            scale, zero_point = w.activation(tensor)
            w.node("DequantizeLinear", [quantized[tensor], scale, zero_point], [tensor])
            available.add(tensor)
        return tensor

    def fused_output(node):
        """The output a Conv, Gemm or Add writes: its own, or that of a Relu/Clip it alone feeds."""
        out = node.output[0]
        after = readers.get(out, [])
        if out in outputs or len(after) != 1 or after[0].op_type not in ACTIVATIONS:
            return out
        activation = after[0]
        if activation.op_type == "Clip":
            low, high = clip_bounds(activation, w.constants)
            if low is None or high is None or low > 0:
                return out
        skipped.add(id(activation))
        return activation.output[0]

    def q_of(tensor):
        return [to_quantized(tensor), *w.activation(tensor)]

    for node in model.graph.node:
        if id(node) in skipped:
            continue
        op = node.op_type
        data = [name for name in node.input if name and name not in w.constants]
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        all_calibrated = all(name in ranges for name in data) and all(
            o in ranges for o in node.output)
        if op == "Conv" and node.input[1] in w.constants and node.input[0] in ranges:
            out = fused_output(node)
            wq, ws, wz, scales = w.quantized_weights(node.input[1], 0)
            inputs = q_of(node.input[0]) + [wq, ws, wz] + list(w.activation(out))
            if len(node.input) > 2 and node.input[2]:
                x_scale = float(activation_params(*ranges[node.input[0]])[0])
                bias = np.round(w.constants[node.input[2]] / (x_scale * scales)).astype(np.int32)
                inputs.append(w.constant(node.input[2] + "_int32", bias))
            quantized[out] = w.unique(out + "_quantized")
            w.node("QLinearConv", inputs, [quantized[out]], **attributes)
            continue
        if op == "Gemm" and node.input[1] in w.constants and node.input[0] in ranges \
                and attributes.get("beta", 1.0) == 1.0 and not attributes.get("transA", 0):
            out = fused_output(node)
            trans_b = attributes.get("transB", 0)
            wq, ws, wz, scales = w.quantized_weights(node.input[1], 0 if trans_b else 1)
            inputs = q_of(node.input[0]) + [wq, ws, wz]
            if len(node.input) > 2 and node.input[2]:
                x_scale = float(activation_params(*ranges[node.input[0]])[0])
                alpha = attributes.get("alpha", 1.0)
                bias = np.round(w.constants[node.input[2]] / (alpha * x_scale * scales))
                inputs.append(w.constant(node.input[2] + "_int32", bias.astype(np.int32)))
            else:
                inputs.append("")
            inputs += list(w.activation(out))
            quantized[out] = w.unique(out + "_quantized")
            # QGemm has no beta (the bias is at the sums' scale).
            w.node("QGemm", inputs, [quantized[out]], domain="com.microsoft",
                   **{k: v for k, v in attributes.items() if k != "beta"})
            continue
        if op == "MatMul" and node.input[1] in w.constants and node.input[0] in ranges \
                and w.constants[node.input[1]].ndim == 2:
            out = node.output[0]
            wq, ws, wz, _ = w.quantized_weights(node.input[1], 1)
            inputs = q_of(node.input[0]) + [wq, ws, wz] + list(w.activation(out))
            quantized[out] = w.unique(out + "_quantized")
            w.node("QLinearMatMul", inputs, [quantized[out]])
            continue
        microsoft = {"Add": "QLinearAdd", "Mul": "QLinearMul", "Sigmoid": "QLinearSigmoid",
                     "LeakyRelu": "QLinearLeakyRelu",
                     "GlobalAveragePool": "QLinearGlobalAveragePool",
                     "AveragePool": "QLinearAveragePool", "Softmax": "QLinearSoftmax"}
        if op in microsoft and all_calibrated and len(data) == len(node.input):
            out = fused_output(node) if op == "Add" else node.output[0]
            inputs = []
            for name in node.input:
                inputs += q_of(name)
            inputs += list(w.activation(out))
            quantized[out] = w.unique(out + "_quantized")
            if op == "Softmax":
                # What the axis means depends on the Softmax's opset.
                attributes["opset"] = next(o.version for o in model.opset_import
                                           if o.domain in ("", "ai.onnx"))
            w.node(microsoft[op], inputs, [quantized[out]], domain="com.microsoft", **attributes)
            continue
        if op == "Concat" and all_calibrated and len(data) == len(node.input):
            out = node.output[0]
            inputs = list(w.activation(out))
            for name in node.input:
                inputs += q_of(name)
            quantized[out] = w.unique(out + "_quantized")
            w.node("QLinearConcat", inputs, [quantized[out]], domain="com.microsoft", **attributes)
            continue
        if (op == "MaxPool" and len(node.output) == 1 or op in RESHAPING_OPS) \
                and node.input[0] in quantized:
            # The values move; their scale and zero point stay those of the input.
            out = node.output[0]
            quantized[out] = w.unique(out + "_quantized")
            w.params[out] = w.activation(node.input[0])
            w.node(op, [quantized[node.input[0]]] + list(node.input[1:]), [quantized[out]],
                   **attributes)
            continue
        for name in node.input:
            to_float(name)
        w.nodes.append(helper.make_node(op, list(node.input), list(node.output), name=node.name,
                                        domain=node.domain, **attributes))
        available.update(node.output)
    for output in model.graph.output:
        to_float(output.name)
    return w


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--format", choices=["qdq", "qoperator"], default="qdq")
    parser.add_argument("--samples", type=int, default=8, help="random calibration inputs")
    parser.add_argument("--input", action="append", default=[],
                        help="calibration input NAME=FILE.npy (repeatable; replaces the random "
                             "samples)")
    parser.add_argument("--collage", default=os.path.join(os.path.dirname(__file__), "..",
                                                          "build", "collage"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    model = onnx.load(args.model)
    folded = fold_batch_norms(model)
    if folded:
        print(f"quantize_model: folded {folded} BatchNormalization into the weights before them",
              flush=True)
    calibrated = float_tensors(model)
    ranges = calibrate(model, calibrated, args.collage, args.samples, args.input, args.seed,
                       args.threads)
    if args.format == "qdq":
        w = write_qdq(model, ranges, calibrated)
    else:
        w = write_qoperator(model, ranges)
    # The float weights the quantized ones replace are left out.
    used = {name for node in w.nodes for name in node.input}
    initializers = [i for i in w.initializers if i.name in used]
    inputs = [i for i in model.graph.input if i.name in used or i.name not in w.constants]
    graph = helper.make_graph(w.nodes, model.graph.name, inputs, list(model.graph.output),
                              initializers)
    out = helper.make_model(graph, producer_name="collage quantize_model.py",
                            opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    if w.microsoft:
        out.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(out, args.out)
    ops = {}
    for node in out.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    print(f"quantize_model: wrote {args.out} ({args.format}): " +
          ", ".join(f"{op} {n}" for op, n in sorted(ops.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
