#!/usr/bin/env python3
"""Exports the model zoo the tests and the demo run on.

Each model is built by PyTorch with a fixed seed (no weight downloads, so it
works offline), exported to ONNX at batch 1, opset 13, in eval mode, and saved
as DIR/<name>/ with:
  model.onnx   the exported graph
  input.npy    a fixed pseudo-random input
  output.npy   PyTorch's output for that input (the reference the zoo test
               compares against)
  meta.json    input/output names and shapes, opset, torch version

A *_fp16 model is its float32 namesake converted to float16 weights, input
and output (the way float16 conversion tools write one); its reference is
PyTorch computing in float32 from those float16 weights and input, rounded
to float16.

A *_int8 model is quantized by PyTorch's own post-training flow
(torchvision's quantizable architecture, its modules fused, observers
calibrated on random inputs, converted to PyTorch's int8 modules on the
quantized engine this PyTorch has) and exported as PyTorch writes it
(QuantizeLinear/DequantizeLinear around float ops, int8 weights per output
channel). Its BatchNorm statistics are set from random batches first, as
training leaves them, so that every layer's activations have a trained
network's spread and the quantization is not degenerate. Its reference is
PyTorch's int8 model's output.

Random-init BatchNorm layers have running mean 0 and variance 1, which makes
them identities that a wrong BatchNorm kernel would still pass; their running
statistics and affine parameters are perturbed (with the same seed) so the
checks exercise them.

Idempotent: a model whose files all exist is skipped unless --force.
Run with Debian's interpreter: /usr/bin/python3 scripts/export_zoo.py.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision

SEED = 20220402
OPSET = 13
FILES = ("model.onnx", "input.npy", "output.npy", "meta.json")


def dcgan_generator(nz=100, ngf=64, nc=3):
    """The DCGAN generator of Radford et al.: 1x1 noise -> 64x64 image."""
    return nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),
        nn.BatchNorm2d(ngf * 8),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
        nn.BatchNorm2d(ngf * 4),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
        nn.BatchNorm2d(ngf * 2),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
        nn.BatchNorm2d(ngf),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
        nn.Tanh(),
    )


def bert_like_encoder():
    """A BERT-base-shaped encoder, scaled down: 4 layers, d_model 256, 4 heads."""
    layer = nn.TransformerEncoderLayer(
        d_model=256, nhead=4, dim_feedforward=1024, dropout=0.1, batch_first=True)
    # The nested-tensor fast path is an inference shortcut that tracing would
    # either bake in or trip over; the plain path exports standard ONNX ops.
    encoder = nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)
    # TransformerEncoder deep-copies one layer, so every layer would start
    # with the same weights (and the exporter would store them once).
    # Initialize each parameter on its own, as nn.Transformer does for
    # matrices; vectors (biases, LayerNorm affine) get small random values so
    # that they are exercised too.
    for name, parameter in encoder.named_parameters():
        with torch.no_grad():
            if parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)
            elif name.endswith("weight"):
                parameter.uniform_(0.8, 1.2)
            else:
                parameter.uniform_(-0.1, 0.1)
    return encoder


# name -> (constructor, input shape)
MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), (1, 3, 224, 224)),
    "bert_encoder": (bert_like_encoder, (1, 128, 256)),
    "dcgan_generator": (dcgan_generator, (1, 100, 1, 1)),
    # float16 weights, input and output (see to_float16); SqueezeNet has no
    # BatchNorm for the export to fold, so the ONNX weights are PyTorch's own.
    "squeezenet1_1_fp16": (lambda: torchvision.models.squeezenet1_1(weights=None),
                           (1, 3, 224, 224)),
}
FLOAT16 = {"squeezenet1_1_fp16"}

# name -> torchvision.models.quantization constructor: int8 by PyTorch's flow.
INT8 = {
    "resnet18_int8": "resnet18",
    "mobilenet_v2_int8": "mobilenet_v2",
    "googlenet_int8": "googlenet",
}
for _name, _architecture in INT8.items():
    MODELS[_name] = (
        lambda a=_architecture: torchvision.models.quantization.__dict__[a](
            weights=None, quantize=False), (1, 3, 224, 224))


def quantize_with_pytorch(model, input_shape, generator):
    """PyTorch's eager post-training quantization of a quantizable
    torchvision model (see the module's docstring)."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            module.momentum = None  # a plain average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(8, *input_shape[1:], generator=generator))
    model.eval()
    model.fuse_model()
    engine = next(e for e in ("fbgemm", "onednn", "x86", "qnnpack")
                  if e in torch.backends.quantized.supported_engines)
    torch.backends.quantized.engine = engine
    model.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    torch.ao.quantization.prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(8):
            model(torch.randn(*input_shape, generator=generator))
    torch.ao.quantization.convert(model, inplace=True)
    return engine


def to_float16(proto):
    """The model with float16 weights, Constants, Casts and interface, as
    float16 conversion tools write it."""
    from onnx import numpy_helper
    float16 = onnx.TensorProto.FLOAT16
    graph = proto.graph
    for initializer in graph.initializer:
        if initializer.data_type == onnx.TensorProto.FLOAT:
            array = numpy_helper.to_array(initializer).astype(np.float16)
            initializer.CopyFrom(numpy_helper.from_array(array, initializer.name))
    for node in graph.node:
        for attribute in node.attribute:
            if node.op_type == "Constant" and attribute.name == "value" and \
                    attribute.t.data_type == onnx.TensorProto.FLOAT:
                array = numpy_helper.to_array(attribute.t).astype(np.float16)
                attribute.t.CopyFrom(numpy_helper.from_array(array))
            if node.op_type == "Cast" and attribute.name == "to" and \
                    attribute.i == onnx.TensorProto.FLOAT:
                attribute.i = float16
    for value in list(graph.input) + list(graph.output):
        if value.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            value.type.tensor_type.elem_type = float16
    del graph.value_info[:]
    return proto


def perturb_batch_norms(model, generator):
    for module in model.modules():
        if not isinstance(module, nn.modules.batchnorm._BatchNorm):
            continue
        n = module.num_features
        with torch.no_grad():
            module.running_mean.copy_((torch.rand(n, generator=generator) - 0.5) * 0.2)
            module.running_var.copy_(0.8 + 0.4 * torch.rand(n, generator=generator))
            module.weight.copy_(0.8 + 0.4 * torch.rand(n, generator=generator))
            module.bias.copy_((torch.rand(n, generator=generator) - 0.5) * 0.2)


def is_complete(directory):
    return all(os.path.isfile(os.path.join(directory, f)) for f in FILES)


def export_one(name, out_dir):
    build, input_shape = MODELS[name]
    torch.manual_seed(SEED)
    model = build().eval()
    generator = torch.Generator().manual_seed(SEED + 1)
    engine = None
    if name in INT8:
        engine = quantize_with_pytorch(model, input_shape, generator)
    else:
        perturb_batch_norms(model, generator)
    example = torch.randn(*input_shape, generator=generator)
    half = name in FLOAT16
    if half:
        # The reference computes in float32 from the float16 weights and
        # input the model holds, as collage does; its output is rounded to
        # float16 like the model's.
        model = model.half().float()
        example = example.half().float()

    # Grad stays enabled on purpose: in eval mode without grad, PyTorch
    # routes TransformerEncoderLayer through a fused kernel
    # (_transformer_encoder_layer_fwd) that has no ONNX export. With grad on,
    # both the reference output and the trace take the plain path.
    expected = model(example).detach()

    final_dir = os.path.join(out_dir, name)
    # Written next to the final place and renamed, so an interrupted export
    # never leaves a directory that looks complete.
    staging = tempfile.mkdtemp(prefix=f".{name}-", dir=out_dir)
    try:
        model_path = os.path.join(staging, "model.onnx")
        torch.onnx.export(model, (example,), model_path, opset_version=OPSET,
                          input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
        proto = onnx.load(model_path)
        if half:
            proto = to_float16(proto)
            onnx.save(proto, model_path)
        onnx.checker.check_model(proto)
        dtype = np.float16 if half else np.float32
        np.save(os.path.join(staging, "input.npy"), example.numpy().astype(dtype))
        np.save(os.path.join(staging, "output.npy"), expected.numpy().astype(dtype))
        ops = sorted({node.op_type for node in proto.graph.node})
        meta = {
            "name": name,
            "input_name": "input",
            "input_shape": list(input_shape),
            "output_name": "output",
            "output_shape": list(expected.shape),
            "dtype": "float16" if half else "float32",
            "opset": OPSET,
            "seed": SEED,
            "torch_version": torch.__version__,
            "ops": ops,
        }
        if engine:
            meta["quantized"] = f"PyTorch post-training quantization, engine {engine}"
        with open(os.path.join(staging, "meta.json"), "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
        os.chmod(staging, 0o755)
        if os.path.isdir(final_dir):
            shutil.rmtree(final_dir)
        os.rename(staging, final_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ops


def main():
    default_out = os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "collage", "zoo")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=default_out, help=f"zoo directory (default {default_out})")
    parser.add_argument("--force", action="store_true", help="re-export models that exist")
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help="models to export (default: all)")
    args = parser.parse_args()

    torch.set_num_threads(2)
    os.makedirs(args.out, exist_ok=True)
    unknown = [name for name in args.models if name not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    names = args.models or list(MODELS)
    for name in names:
        directory = os.path.join(args.out, name)
        if is_complete(directory) and not args.force:
            print(f"zoo: {name}: up to date", flush=True)
            continue
        start = time.monotonic()
        print(f"zoo: {name}: exporting...", flush=True)
        ops = export_one(name, args.out)
        print(f"zoo: {name}: done in {time.monotonic() - start:.1f}s ({', '.join(ops)})",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
