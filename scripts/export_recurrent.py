"""Exports two recurrent architectures to ONNX for the benchmarks (random
weights, seeded; opset 14):

- crnn_lstm: text-line recognition as in CRNN (Shi et al., 2015): a VGG-style
  convolution stack over a 1x3x32x128 crop, its columns read by two
  bidirectional LSTM layers of 256 units, then a per-step classifier of 37
  symbols.
- speech_gru: a DeepSpeech2-style acoustic model: two strided 2-D
  convolutions over a 1x1x161x200 spectrogram, three bidirectional GRU
  layers of 256 units over the 100 frames left, then a per-frame classifier
  of 29 characters.

Usage: /usr/bin/python3 scripts/export_recurrent.py DIR
Writes DIR/NAME.onnx, DIR/NAME.in.npy and DIR/NAME.out.npy (PyTorch's output).
"""
import os
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def conv_block(inputs, outputs, **options):
    return [torch.nn.Conv2d(inputs, outputs, 3, padding=1, **options),
            torch.nn.BatchNorm2d(outputs), torch.nn.ReLU()]


class CrnnLstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = torch.nn.Sequential(
            *conv_block(3, 64), torch.nn.MaxPool2d(2),
            *conv_block(64, 128), torch.nn.MaxPool2d(2),
            *conv_block(128, 256), *conv_block(256, 256), torch.nn.MaxPool2d((2, 1)),
            *conv_block(256, 256), torch.nn.MaxPool2d((4, 1)))
        self.rnn = torch.nn.LSTM(256, 256, num_layers=2, bidirectional=True)
        self.classifier = torch.nn.Linear(512, 37)

    def forward(self, x):
        columns = self.cnn(x).squeeze(2).permute(2, 0, 1)  # [steps, batch, channels]
        steps, _ = self.rnn(columns)
        return self.classifier(steps)


class SpeechGru(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = torch.nn.Sequential(
            torch.nn.Conv2d(1, 32, (41, 11), stride=(2, 2), padding=(20, 5)),
            torch.nn.BatchNorm2d(32), torch.nn.Hardtanh(0, 20),
            torch.nn.Conv2d(32, 32, (21, 11), stride=(2, 1), padding=(10, 5)),
            torch.nn.BatchNorm2d(32), torch.nn.Hardtanh(0, 20))
        self.rnn = torch.nn.GRU(32 * 41, 256, num_layers=3, bidirectional=True)
        self.classifier = torch.nn.Linear(512, 29)

    def forward(self, x):
        features = self.cnn(x)  # [batch, 32, 41, frames]
        b, c, f, t = features.shape
        frames = features.reshape(b, c * f, t).permute(2, 0, 1)  # [frames, batch, features]
        steps, _ = self.rnn(frames)
        return self.classifier(steps)


MODELS = {
    "crnn_lstm": (CrnnLstm, (1, 3, 32, 128)),
    "speech_gru": (SpeechGru, (1, 1, 161, 200)),
}


def export(name, work):
    torch.manual_seed(0)
    cls, shape = MODELS[name]
    model = cls().eval()
    x = torch.rand(*shape)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(model, x, path, opset_version=14, input_names=["x"], output_names=["y"])
    np.save(os.path.join(work, name + ".in.npy"), x.numpy())
    np.save(os.path.join(work, name + ".out.npy"), y.numpy())
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name in MODELS:
        print(export(name, sys.argv[1]))
