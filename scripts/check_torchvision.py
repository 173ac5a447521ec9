#!/usr/bin/python3
"""Exports torchvision models (random weights, seeded) to ONNX and checks
`collage run` on the native backend against PyTorch's outputs at each
--graph-opt level: the rewrites must not change what a model computes.

Usage: /usr/bin/python3 scripts/check_torchvision.py [--collage build/collage]
           [--opset 13] [--work DIR] MODEL...
MODEL is a torchvision.models constructor name (efficientnet_b0, swin_t,
convnext_tiny, mobilenet_v3_small, shufflenet_v2_x1_0, ...), or one of its
video or segmentation modules' (video.r3d_18,
segmentation.lraspp_mobilenet_v3_large). Prints, per model
and level, the node count, the native median latency and the largest error
relative to the output's largest magnitude; exits 1 if one exceeds 1e-4.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchvision

TOLERANCE = 1e-4


class SegmentationOutput(torch.nn.Module):
    """A segmentation model's 'out' tensor, not its dict of outputs."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)['out']


# Models outside torchvision.models' own namespace go by their module:
# video.r3d_18, segmentation.lraspp_mobilenet_v3_large.
def construct(name):
    module = torchvision.models
    *modules, function = name.split('.')
    for part in modules:
        module = getattr(module, part)
    if modules == ['segmentation']:
        # No pretrained backbone: its weights would be downloaded.
        return SegmentationOutput(getattr(module, function)(weights_backbone=None))
    return getattr(module, function)()


def export(name, opset, work):
    torch.manual_seed(0)
    model = construct(name).eval()
    # Parameters initialized to zeros (ViT's classifier, many biases) would
    # make whatever feeds them unchecked: they get small random values.
    with torch.no_grad():
        for parameter in model.parameters():
            if not parameter.any():
                parameter.normal_(0.0, 0.02)
    # Video models take 8 frames of 112x112.
    x = torch.rand(1, 3, 8, 112, 112) if name.startswith('video.') else torch.rand(1, 3, 224, 224)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(work, name + '.onnx')
    torch.onnx.export(model, x, path, opset_version=opset, input_names=['x'], output_names=['y'])
    np.save(os.path.join(work, name + '.in.npy'), x.numpy())
    return path, y.numpy()


def check(collage, path, reference, level, work):
    out = os.path.join(work, 'out_' + level)
    run = subprocess.run([collage, 'run', path, '--input', 'x=' + path[:-5] + '.in.npy',
                          '--graph-opt', level, '--threads', '2', '--repeat', '5',
                          '--save-outputs', out], capture_output=True, text=True)
    if run.returncode != 0:
        return None, None, run.stderr.strip()
    info = subprocess.run([collage, 'info', path, '--graph-opt', level], capture_output=True,
                          text=True).stdout
    nodes = re.search(r'^operators: (\d+) nodes', info, re.M).group(1)
    median = re.search(r'median ([0-9.]+) ms', run.stdout).group(1)
    got = np.load(os.path.join(out, 'y.npy')).astype(np.float64)
    error = np.abs(got - reference).max() / max(np.abs(reference).max(), 1e-30)
    return nodes, median, error


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('models', nargs='+')
    parser.add_argument('--collage', default=os.path.join(os.path.dirname(__file__), '..',
                                                          'build', 'collage'))
    parser.add_argument('--opset', type=int, default=13)
    parser.add_argument('--work', default=None)
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix='collage-torchvision-')
    failed = False
    for name in args.models:
        path, reference = export(name, args.opset, work)
        for level in ('none', 'basic', 'all'):
            nodes, median, error = check(args.collage, path, reference.astype(np.float64), level,
                                         work)
            if nodes is None:
                print(f'{name:24} {level:5}  FAILED: {error}')
                failed = True
                continue
            verdict = 'ok' if error <= TOLERANCE else 'MISMATCH'
            failed |= error > TOLERANCE
            print(f'{name:24} {level:5}  {nodes:>5} nodes  native {median:>9} ms  '
                  f'max rel. error {error:.1e}  {verdict}', flush=True)
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
