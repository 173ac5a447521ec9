"""A fake-quantized network exported by PyTorch (ONNX QuantizeLinear and
DequantizeLinear around every convolution's input and weights) against
PyTorch."""
import pytest

import collage
import models

torch = pytest.importorskip("torch")


class FakeQuantized(torch.nn.Module):
    """Two convolutions and a classifier, activations quantized per tensor
    (uint8) and convolution weights per output channel (int8), as
    quantization-aware training leaves a model before conversion."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(32, 10)

    @staticmethod
    def activation(x):
        return torch.fake_quantize_per_tensor_affine(x, 0.05, 128, 0, 255)

    @staticmethod
    def weights(w):
        scale = w.detach().abs().amax(dim=(1, 2, 3)) / 127
        zero = torch.zeros(w.shape[0], dtype=torch.int32)
        return torch.fake_quantize_per_channel_affine(w, scale, zero, 0, -128, 127)

    def forward(self, x):
        x = self.activation(x)
        x = torch.relu(torch.nn.functional.conv2d(x, self.weights(self.conv1.weight),
                                                  self.conv1.bias, padding=1))
        x = self.activation(x)
        x = torch.relu(torch.nn.functional.conv2d(x, self.weights(self.conv2.weight),
                                                  self.conv2.bias, stride=2, padding=1))
        return self.fc(x.mean(dim=(2, 3)))


def test_fake_quantized_model_matches_pytorch(tmp_path):
    torch.manual_seed(5)
    module = FakeQuantized().eval()
    x = torch.rand(1, 3, 16, 16)
    models.check_against_pytorch(collage, torch, module, x, tmp_path / "fake_quantized.onnx", 13,
                                 1e-4)
