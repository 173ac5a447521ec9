#!/usr/bin/env python3
"""Exports torchvision's detectors with their post-processing, as a user
would export them (torch.onnx.export of the model in eval mode, a list of
one image, opset 13): SSDlite320-MobileNet-V3, RetinaNet-ResNet50-FPN and
Keypoint R-CNN-ResNet50-FPN. Their post-processing is what the ONNX export
of torchvision makes of it: per-class boolean indexing (NonZero), TopK
with a computed K, batched NonMaxSuppression behind an If on "no boxes
left", RoiAlign over the levels of the feature pyramid, and for the
keypoints a Loop over the boxes found.

The weights are random (seed 0) but made to behave like trained ones, so
that the detections are many and their scores distinct: the batch norms
take the statistics of random images (as after training), the feature
pyramid's convolutions are scaled to keep its outputs near unit size, and
RetinaNet's class logits start without their prior. RetinaNet and
Keypoint R-CNN are made for 192x192 images, and Keypoint R-CNN keeps 100
proposals and 5 detections (its keypoint head costs 7 GFLOPs a box),
which keeps them quick.

Written to OUT/<name>.onnx, with an image (<name>.in.npy) and PyTorch's
detections for it (<name>.<output>.npy, the outputs in the order of the
model's: boxes, scores, labels, and for Keypoint R-CNN keypoints and
keypoint scores). Run with Debian's interpreter:
  /usr/bin/python3 scripts/export_detectors.py OUT [NAME ...]
NAME: ssdlite, retinanet, keypointrcnn (default: all three).
"""
import sys

import numpy as np
import torch
import torchvision

DETECTION = torchvision.models.detection
# The order torchvision's export gives the outputs.
OUTPUTS = {'ssdlite': ['boxes', 'scores', 'labels'],
           'retinanet': ['boxes', 'scores', 'labels'],
           'keypointrcnn': ['boxes', 'labels', 'scores', 'keypoints', 'keypoints_scores']}


def calibrate_batch_norms(model, size):
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.momentum = None  # a plain average of what it sees
    body = model.backbone.body if hasattr(model.backbone, 'body') else model.backbone
    body.train()
    with torch.no_grad():
        for _ in range(4):
            body(torch.rand(2, 3, size, size))


def scale_pyramid(model, factor):
    with torch.no_grad():
        for module in model.backbone.fpn.modules():
            if isinstance(module, torch.nn.Conv2d):
                module.weight.mul_(factor)
                if module.bias is not None:
                    module.bias.mul_(factor)


def build(name):
    torch.manual_seed(0)
    if name == 'ssdlite':
        size = 320
        model = DETECTION.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                         num_classes=11)
        calibrate_batch_norms(model, size)
    elif name == 'retinanet':
        size = 192
        model = DETECTION.retinanet_resnet50_fpn(weights=None, weights_backbone=None,
                                                 num_classes=11, min_size=size, max_size=size)
        calibrate_batch_norms(model, size)
        scale_pyramid(model, 0.03)
        with torch.no_grad():
            torch.nn.init.normal_(model.head.classification_head.cls_logits.weight, std=0.1)
            model.head.classification_head.cls_logits.bias.zero_()
    elif name == 'keypointrcnn':
        size = 192
        model = DETECTION.keypointrcnn_resnet50_fpn(weights=None, weights_backbone=None,
                                                    num_keypoints=5, min_size=size,
                                                    max_size=size, rpn_pre_nms_top_n_test=200,
                                                    rpn_post_nms_top_n_test=100,
                                                    box_detections_per_img=5)
        calibrate_batch_norms(model, size)
        scale_pyramid(model, 0.03)
        with torch.no_grad():
            model.rpn.head.bbox_pred.weight.mul_(0.1)
            model.roi_heads.box_predictor.bbox_pred.weight.mul_(0.1)
    else:
        sys.exit(f'unknown detector {name!r}; expected one of {", ".join(OUTPUTS)}')
    return model.eval(), size


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for name in sys.argv[2:] or list(OUTPUTS):
        model, size = build(name)
        torch.manual_seed(1)
        image = torch.rand(3, size, size)
        torch.onnx.export(model, ([image],), f'{out}/{name}.onnx', opset_version=13,
                          input_names=['image'], output_names=OUTPUTS[name])
        with torch.no_grad():
            detections = model([image])[0]
        np.save(f'{out}/{name}.in.npy', image.numpy())
        for output in OUTPUTS[name]:
            np.save(f'{out}/{name}.{output}.npy', detections[output].numpy())
        scores = detections['scores'].numpy()
        print(name, '->', len(scores), 'detections, scores', f'{scores.min():.3f}..{scores.max():.3f}'
              if len(scores) else '')


if __name__ == '__main__':
    main()
