#!/usr/bin/env python3
"""Exports four model families that the zoo and the torchvision exports do
not cover, as PyTorch exports them in the wild: opset 17, dynamic axes,
random weights (seed 0; normalization statistics perturbed).

  gpt_tiny   GPT-style decoder: token ids, learned positions, a causal mask
             of -inf, tanh GELU, LayerNormalization (ids: int64 [1, 64])
  yolo_tiny  YOLOv5-style detector: SiLU, C3 blocks, SPPF max pools, nearest
             Resize, a decode head of Sigmoid, Pow and grid adds (1x3x320x320)
  unet_gn    U-Net with GroupNorm, ConvTranspose, bilinear Resize and a
             channel Softmax (1x3x128x128)
  audio_enc  Whisper-style encoder: Conv1d, exact GELU, pre-norm
             transformer layers (mel: 1x80x400)

Each is written to OUT/NAME.onnx with its input (NAME.in.npy) and PyTorch's
output (NAME.out.npy). Run with Debian's interpreter:
  /usr/bin/python3 scripts/export_wild.py OUT [NAME ...]
Tune one with its input's shape fixed, e.g.
  collage tune OUT/gpt_tiny.onnx --input-shape ids=1,64
"""
import math
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class GPT(nn.Module):
    def __init__(self, vocab=1000, width=192, heads=4, layers=3, context=128):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict(dict(
                norm1=nn.LayerNorm(width), qkv=nn.Linear(width, 3 * width),
                proj=nn.Linear(width, width), norm2=nn.LayerNorm(width),
                up=nn.Linear(width, 4 * width), down=nn.Linear(4 * width, width))))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.heads = heads

    def forward(self, ids):
        batch, length = ids.shape
        x = self.tokens(ids) + self.positions(torch.arange(length).unsqueeze(0))
        mask = torch.triu(torch.ones(length, length, dtype=torch.bool), 1)
        size = x.shape[-1] // self.heads

        def split_heads(t):
            return t.view(batch, length, self.heads, size).transpose(1, 2)

        for block in self.blocks:
            q, k, v = block['qkv'](block['norm1'](x)).split(x.shape[-1], dim=2)
            scores = split_heads(q) @ split_heads(k).transpose(-2, -1) / math.sqrt(size)
            weights = scores.masked_fill(mask, float('-inf')).softmax(-1)
            y = (weights @ split_heads(v)).transpose(1, 2).reshape(batch, length, -1)
            x = x + block['proj'](y)
            x = x + block['down'](F.gelu(block['up'](block['norm2'](x)), approximate='tanh'))
        return self.head(self.norm(x))


def conv_bn_silu(inputs, outputs, kernel=1, stride=1):
    return nn.Sequential(nn.Conv2d(inputs, outputs, kernel, stride, (kernel - 1) // 2, bias=False),
                         nn.BatchNorm2d(outputs), nn.SiLU())


class C3(nn.Module):
    """Two branches, one through n bottlenecks with residuals, concatenated."""

    def __init__(self, inputs, outputs, n=1):
        super().__init__()
        half = outputs // 2
        self.a = conv_bn_silu(inputs, half)
        self.b = conv_bn_silu(inputs, half)
        self.m = nn.Sequential(*[nn.Sequential(conv_bn_silu(half, half), conv_bn_silu(half, half, 3))
                                 for _ in range(n)])
        self.c = conv_bn_silu(2 * half, outputs)

    def forward(self, x):
        a = self.a(x)
        return self.c(torch.cat([a + self.m(a), self.b(x)], 1))


class SPPF(nn.Module):
    """Three chained 5x5 max pools, concatenated with their input."""

    def __init__(self, inputs, outputs):
        super().__init__()
        self.a = conv_bn_silu(inputs, inputs // 2)
        self.b = conv_bn_silu(inputs * 2, outputs)
        self.pool = nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        x = self.a(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        return self.b(torch.cat([x, y1, y2, self.pool(y2)], 1))


class YOLO(nn.Module):
    def __init__(self, classes=20, anchors=3):
        super().__init__()
        self.stem = nn.Sequential(conv_bn_silu(3, 16, 6, 2), conv_bn_silu(16, 32, 3, 2), C3(32, 32),
                                  conv_bn_silu(32, 64, 3, 2), C3(64, 64, 2))
        self.down4 = nn.Sequential(conv_bn_silu(64, 128, 3, 2), C3(128, 128, 2))
        self.down5 = nn.Sequential(conv_bn_silu(128, 256, 3, 2), C3(256, 256), SPPF(256, 256))
        self.lateral5 = conv_bn_silu(256, 128)
        self.up4 = C3(256, 128)
        self.lateral4 = conv_bn_silu(128, 64)
        self.up3 = C3(128, 64)
        self.reduce3 = conv_bn_silu(64, 64, 3, 2)
        self.path4 = C3(128, 128)
        self.reduce4 = conv_bn_silu(128, 128, 3, 2)
        self.path5 = C3(256, 256)
        self.fields = classes + 5
        self.anchors = anchors
        self.heads = nn.ModuleList([nn.Conv2d(c, anchors * self.fields, 1) for c in (64, 128, 256)])

    def forward(self, x):
        p3 = self.stem(x)
        p4 = self.down4(p3)
        p5 = self.down5(p4)
        t5 = self.lateral5(p5)
        x4 = self.up4(torch.cat([F.interpolate(t5, scale_factor=2., mode='nearest'), p4], 1))
        t4 = self.lateral4(x4)
        o3 = self.up3(torch.cat([F.interpolate(t4, scale_factor=2., mode='nearest'), p3], 1))
        o4 = self.path4(torch.cat([self.reduce3(o3), t4], 1))
        o5 = self.path5(torch.cat([self.reduce4(o4), t5], 1))
        outs = []
        for i, (features, stride) in enumerate(zip((o3, o4, o5), (8, 16, 32))):
            batch, _, h, w = features.shape
            y = self.heads[i](features).view(batch, self.anchors, self.fields, h, w)
            y = y.permute(0, 1, 3, 4, 2).sigmoid()
            gy, gx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
            grid = torch.stack((gx, gy), 2).view(1, 1, h, w, 2).float()
            xy = (y[..., :2] * 2 - 0.5 + grid) * stride
            wh = (y[..., 2:4] * 2) ** 2 * 16.
            outs.append(torch.cat((xy, wh, y[..., 4:]), -1).view(batch, -1, self.fields))
        return torch.cat(outs, 1)


def conv_gn_silu_twice(inputs, outputs):
    return nn.Sequential(nn.Conv2d(inputs, outputs, 3, 1, 1), nn.GroupNorm(8, outputs), nn.SiLU(),
                         nn.Conv2d(outputs, outputs, 3, 1, 1), nn.GroupNorm(8, outputs), nn.SiLU())


class UNet(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        self.e1 = conv_gn_silu_twice(3, c)
        self.e2 = conv_gn_silu_twice(c, 2 * c)
        self.e3 = conv_gn_silu_twice(2 * c, 4 * c)
        self.mid = conv_gn_silu_twice(4 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, 2)
        self.d2 = conv_gn_silu_twice(4 * c, 2 * c)
        self.d1 = conv_gn_silu_twice(3 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(F.max_pool2d(a, 2))
        m = self.mid(self.e3(F.avg_pool2d(b, 2)))
        d2 = self.d2(torch.cat([self.up2(m), b], 1))
        up = F.interpolate(d2, scale_factor=2., mode='bilinear', align_corners=False)
        d1 = self.d1(torch.cat([up, a], 1))
        return torch.softmax(self.out(d1), 1)


class AudioEncoder(nn.Module):
    def __init__(self, mels=80, width=256, layers=2):
        super().__init__()
        self.c1 = nn.Conv1d(mels, width, 3, padding=1)
        self.c2 = nn.Conv1d(width, width, 3, 2, 1)
        layer = nn.TransformerEncoderLayer(width, 4, 4 * width, 0.0, activation='gelu',
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.positions = nn.Parameter(torch.randn(1, 500, width) * 0.02)

    def forward(self, mel):
        x = F.gelu(self.c2(F.gelu(self.c1(mel)))).permute(0, 2, 1)
        x = x + self.positions[:, :x.shape[1]]
        return self.norm(self.encoder(x))


def perturb_normalizations(module):
    """Random-init normalizations are near identities that a wrong kernel
    would still pass; their statistics and affine parameters are perturbed."""
    for m in module.modules():
        if not isinstance(m, (nn.BatchNorm2d, nn.GroupNorm, nn.LayerNorm)):
            continue
        with torch.no_grad():
            if getattr(m, 'running_mean', None) is not None:
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
            if m.weight is not None:
                m.weight.uniform_(0.8, 1.2)
                m.bias.uniform_(-0.1, 0.1)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    torch.manual_seed(0)
    models = {  # name: (module, input, dynamic axes, input name)
        'gpt_tiny': (GPT(), torch.randint(0, 1000, (1, 64)), {0: 'batch', 1: 'seq'}, 'ids'),
        'yolo_tiny': (YOLO(), torch.rand(1, 3, 320, 320), {0: 'batch'}, 'images'),
        'unet_gn': (UNet(), torch.rand(1, 3, 128, 128), {0: 'batch', 2: 'h', 3: 'w'}, 'x'),
        'audio_enc': (AudioEncoder(), torch.randn(1, 80, 400), {0: 'batch', 2: 'frames'}, 'mel'),
    }
    for name, (module, x, axes, input_name) in models.items():
        if len(sys.argv) > 2 and name not in sys.argv[2:]:
            continue
        perturb_normalizations(module)
        module.eval()
        with torch.no_grad():
            y = module(x)
        # Exported with gradients on: PyTorch's fused inference path for
        # transformer layers has no ONNX form.
        torch.onnx.export(module, x, f'{out}/{name}.onnx', opset_version=17,
                          input_names=[input_name], output_names=['y'],
                          dynamic_axes={input_name: axes, 'y': {0: 'batch'}})
        np.save(f'{out}/{name}.in.npy', x.numpy())
        np.save(f'{out}/{name}.out.npy', y.numpy())
        print(name, tuple(x.shape), '->', tuple(y.shape))


if __name__ == '__main__':
    main()
