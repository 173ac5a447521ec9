#!/usr/bin/env python3
"""Exports a small detector whose post-processing has shapes that depend on
the data, as torchvision's detectors export it: a convolutional head on a
1x3x64x64 image predicts a box and a score per position (1024 of them);
the scores above a threshold are kept (boolean indexing: NonZero), the best
of them by TopK with K = min(100, how many were kept) computed in the
graph, then non-maximum suppression (torchvision.ops.nms:
NonMaxSuppression) and the boxes it keeps, flattened with a Reshape of a
computed size. Opset 13, random weights (seed 0).

Written to OUT/detector.onnx, with its input (detector.in.npy) and PyTorch's
outputs (detector.boxes.npy, detector.scores.npy, detector.flat.npy), for
two images whose detections differ in number (suffix .2 for the second).
Run with Debian's interpreter:
  /usr/bin/python3 scripts/export_runtime_shapes.py OUT
"""
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(16, 5, 1))

    def predict(self, x):
        """A box and a score for each of the 1024 positions."""
        head = self.body(x).flatten(2)[0].t()  # [positions, 5]
        spread = (head - head.mean(0)) / head.std(0)
        centers = torch.sigmoid(spread[:, :2] * 2) * 64
        sizes = torch.sigmoid(spread[:, 2:4]) * 16
        boxes = torch.cat([centers - sizes / 2, centers + sizes / 2], 1)
        return boxes, torch.sigmoid(spread[:, 4] * 2)

    def forward(self, x):
        boxes, scores = self.predict(x)
        keep = scores > 0.5
        boxes, scores = boxes[keep], scores[keep]
        kept = torch._shape_as_tensor(scores)[:1]
        k = torch.min(torch.cat([torch.tensor([100]), kept]))
        scores, order = scores.topk(k)
        boxes = boxes[order]
        chosen = torchvision.ops.nms(boxes, scores, 0.3)
        boxes, scores = boxes[chosen], scores[chosen]
        return boxes, scores, torch.cat([boxes, scores[:, None]], 1).reshape(-1)


# How far an image's decisions are from a tie, below which another
# backend's rounding of the head (a few ulps) could change the detections:
# a score against the threshold, two kept scores against each other (their
# order is the outputs' order, and decides which of two overlapping boxes NMS
# keeps), an overlap against NMS's IoU threshold.
SCORE_MARGIN = 2e-5
IOU_MARGIN = 2e-4


def clear_of_ties(module, image):
    """Whether the image keeps more than ten boxes, each decision clear of
    a tie."""
    with torch.no_grad():
        boxes, scores = module.predict(image)
    if (scores - 0.5).abs().min() < SCORE_MARGIN:
        return False
    keep = scores > 0.5
    ranked, order = scores[keep].sort(descending=True)
    if ranked.numel() <= 10:
        return False
    top = ranked[:101]
    if (top[:-1] - top[1:]).min() < SCORE_MARGIN:
        return False
    best = boxes[keep][order[:100]]
    overlaps = torchvision.ops.box_iou(best, best)
    overlaps.fill_diagonal_(0)
    return bool((overlaps - 0.3).abs().min() >= IOU_MARGIN)


def detections(module, image):
    with torch.no_grad():
        return module(image)[0].shape[0]


def draw_image(module, scale, unlike=None):
    """The first uniform image (times SCALE) whose detections are clear of
    ties, so that every backend must find exactly PyTorch's boxes, and
    whose number of detections is not UNLIKE's."""
    taken = None if unlike is None else detections(module, unlike)
    for _ in range(200):
        image = torch.rand(1, 3, 64, 64) * scale
        if clear_of_ties(module, image) and detections(module, image) != taken:
            return image
    sys.exit(f'no image clear of ties at scale {scale}')


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    torch.manual_seed(0)
    module = Detector().eval()
    first = draw_image(module, 1.0)
    images = [first, draw_image(module, 0.5, unlike=first)]
    torch.onnx.export(module, images[0], f'{out}/detector.onnx', opset_version=13,
                      input_names=['image'], output_names=['boxes', 'scores', 'flat'])
    for i, image in enumerate(images):
        suffix = '' if i == 0 else f'.{i + 1}'
        with torch.no_grad():
            boxes, scores, flat = module(image)
        np.save(f'{out}/detector{suffix}.in.npy', image.numpy())
        np.save(f'{out}/detector{suffix}.boxes.npy', boxes.numpy())
        np.save(f'{out}/detector{suffix}.scores.npy', scores.numpy())
        np.save(f'{out}/detector{suffix}.flat.npy', flat.numpy())
        print('detector', suffix or '.1', '->', tuple(boxes.shape), 'boxes')


if __name__ == '__main__':
    main()
