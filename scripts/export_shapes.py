#!/usr/bin/env python3
"""Exports a Transformer encoder whose sequence length is dynamic, as a
text classifier or embedder ships it: token ids and an attention mask
(int64 [batch, seq], 1 for a token, 0 for padding), learned positions, two
torch.nn.TransformerEncoderLayer blocks (pre-norm, GELU) and mean pooling
over the tokens the mask keeps. Opset 17, random weights (seed 0).

Written to OUT/encoder.onnx, with inputs and PyTorch's outputs for each
length in LENGTHS: OUT/encoder.<length>.ids.npy, .mask.npy and .out.npy
(the last quarter of each sequence is padding). Run with Debian's
interpreter:
  /usr/bin/python3 scripts/export_shapes.py OUT [LENGTH ...]
(default lengths: 16 32 64 40). Tune one plan per length with
  collage tune OUT/encoder.onnx --input-shape ids=1,16..64 --input-shape mask=1,16..64
"""
import sys

import numpy as np
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab=1000, width=128, heads=4, layers=2, context=128):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                           activation='gelu', batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)

    def forward(self, ids, mask):
        length = ids.shape[1]
        x = self.tokens(ids) + self.positions(torch.arange(length).unsqueeze(0))
        x = self.norm(self.encoder(x, src_key_padding_mask=mask == 0))
        keep = mask.unsqueeze(-1).to(x.dtype)
        return (x * keep).sum(1) / keep.sum(1)


def inputs(length, generator):
    ids = torch.randint(0, 1000, (1, length), generator=generator)
    mask = torch.ones(1, length, dtype=torch.int64)
    mask[:, length - length // 4:] = 0
    return ids, mask


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    lengths = [int(n) for n in sys.argv[2:]] or [16, 32, 64, 40]
    torch.manual_seed(0)
    module = Encoder()
    module.eval()
    generator = torch.Generator().manual_seed(1)
    ids, mask = inputs(lengths[0], generator)
    # Exported with gradients on: PyTorch's fused inference path for
    # transformer layers has no ONNX form.
    torch.onnx.export(module, (ids, mask), f'{out}/encoder.onnx', opset_version=17,
                      input_names=['ids', 'mask'], output_names=['y'],
                      dynamic_axes={'ids': {0: 'batch', 1: 'seq'},
                                    'mask': {0: 'batch', 1: 'seq'}, 'y': {0: 'batch'}})
    for length in lengths:
        ids, mask = inputs(length, generator)
        with torch.no_grad():
            y = module(ids, mask)
        np.save(f'{out}/encoder.{length}.ids.npy', ids.numpy())
        np.save(f'{out}/encoder.{length}.mask.npy', mask.numpy())
        np.save(f'{out}/encoder.{length}.out.npy', y.numpy())
        print('encoder', length, '->', tuple(y.shape))


if __name__ == '__main__':
    main()
