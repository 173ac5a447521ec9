"""Ops that sample and write by index (GridSample, MaxPool's Indices output,
ScatterElements, ScatterND, OneHot, IsInf, IsNaN) exported by PyTorch and
checked against it under every backend's plan."""
import pytest

import collage
import models

torch = pytest.importorskip("torch")
F = torch.nn.functional


class GridSample(torch.nn.Module):
    """Samples the input at a fixed grid that reaches past the image on
    every side, so that the padding mode decides the edges."""

    def __init__(self, mode, padding, align_corners):
        super().__init__()
        self.mode, self.padding, self.align_corners = mode, padding, align_corners
        generator = torch.Generator().manual_seed(3)
        self.register_buffer("grid", torch.rand(2, 6, 9, 2, generator=generator) * 2.8 - 1.4)

    def forward(self, x):
        return F.grid_sample(x, self.grid, mode=self.mode, padding_mode=self.padding,
                             align_corners=self.align_corners)


# ONNX moves a point outside the image to the border or its reflection before
# the cubic taps; PyTorch pads the taps only, so the two agree on bicubic
# with zero padding alone.
GRID_CASES = [(mode, padding, align)
              for mode in ("bilinear", "nearest", "bicubic")
              for padding in ("zeros", "border", "reflection")
              for align in (False, True)
              if mode != "bicubic" or padding == "zeros"]


@pytest.mark.parametrize("mode,padding,align", GRID_CASES)
def test_grid_sample_matches_pytorch(tmp_path, mode, padding, align):
    torch.manual_seed(1)
    x = torch.rand(2, 3, 7, 10)
    models.check_against_pytorch(collage, torch, GridSample(mode, padding, align).eval(), x,
                                 tmp_path / "grid_sample.onnx", 16, 1e-5)


class PoolIndices(torch.nn.Module):
    """MaxPool's values weighted by where they came from."""

    def forward(self, x):
        values, indices = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
        return values * (indices % 7).float()


class Scatters(torch.nn.Module):
    """ScatterElements (plain and adding, opset 16), and ScatterND from a
    slice assignment of computed values."""

    def forward(self, x):
        rows = x[:, 0, 0, :4]
        distinct = torch.tensor([[2, 0, 1, 4], [1, 3, 0, 2]])
        repeated = torch.tensor([[2, 0, 1, 2], [1, 1, 0, 3]])
        placed = torch.zeros(2, 5).scatter(1, distinct, rows)
        added = torch.ones(2, 5).scatter_add(1, repeated, rows)
        assigned = x.clone()
        assigned[:, 1, 2:4] = x[:, 2, :2] * 3
        return assigned.sum(dim=1) + (placed + added).sum()


class OneHotOfArgmax(torch.nn.Module):
    def forward(self, x):
        return F.one_hot(torch.argmax(x, dim=1), 6).float() * x.sum(dim=1, keepdim=True)[..., None]


class NonFinite(torch.nn.Module):
    """NaNs from a logarithm of negative numbers and infinities from a
    division by a mask, replaced by values. (XNNPACK, which runs the division
    under single:xnnpack, clamps a NaN it computes to an infinity.)"""

    def forward(self, x):
        logarithm = torch.log(x - 0.2)
        quotient = (x - 0.3) / (x > 0.6).float()
        z = torch.where(x < 0.2, logarithm, quotient)
        z = torch.where(torch.isnan(z), torch.full_like(z, -2.0), z)
        return torch.where(torch.isinf(z), torch.sign(z) * 5, z)


@pytest.mark.parametrize("module,opset", [(PoolIndices(), 13), (Scatters(), 16),
                                          (OneHotOfArgmax(), 13), (NonFinite(), 13)],
                         ids=["pool_indices", "scatters", "one_hot", "non_finite"])
def test_index_op_matches_pytorch(tmp_path, module, opset):
    torch.manual_seed(2)
    x = torch.rand(2, 6, 8, 9)
    models.check_against_pytorch(collage, torch, module.eval(), x, tmp_path / "model.onnx", opset,
                                 1e-5)
