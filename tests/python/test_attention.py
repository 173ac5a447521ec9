"""A decoder block as language models export it (token ids in, an additive
causal mask of -inf, tanh GELU, LayerNormalization at opset 17) against
PyTorch: on every backend, and through a tune, whose checks of each candidate
must accept the mask's infinities."""
import math

import numpy as np
import pytest

import collage
import models

torch = pytest.importorskip("torch")


class Decoder(torch.nn.Module):
    """Embedding, one pre-norm causal self-attention block and a vocabulary head."""

    def __init__(self, vocab=50, width=32, heads=2, context=16):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Embedding(context, width)
        self.norm1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)
        self.head = torch.nn.Linear(width, vocab, bias=False)
        self.heads = heads

    def forward(self, ids):
        batch, length = ids.shape
        x = self.tokens(ids) + self.positions(torch.arange(length).unsqueeze(0))
        q, k, v = self.qkv(self.norm1(x)).split(x.shape[-1], dim=2)
        size = x.shape[-1] // self.heads

        def split_heads(t):
            return t.view(batch, length, self.heads, size).transpose(1, 2)

        scores = split_heads(q) @ split_heads(k).transpose(-2, -1) / math.sqrt(size)
        mask = torch.triu(torch.ones(length, length, dtype=torch.bool), 1)
        weights = scores.masked_fill(mask, float("-inf")).softmax(-1)
        y = (weights @ split_heads(v)).transpose(1, 2).reshape(batch, length, -1)
        x = x + self.proj(y)
        x = x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x)), approximate="tanh"))
        return self.head(x)


def decoder_and_input():
    torch.manual_seed(3)
    return Decoder().eval(), torch.randint(0, 50, (1, 8))


def test_every_backend_matches_pytorch(tmp_path):
    module, ids = decoder_and_input()
    models.check_against_pytorch(collage, torch, module, ids, tmp_path / "decoder.onnx", 17, 1e-4)


def test_a_tuned_plan_matches_pytorch(tmp_path):
    module, ids = decoder_and_input()
    path = str(tmp_path / "decoder.onnx")
    torch.onnx.export(module, (ids,), path, input_names=["x"], output_names=["y"],
                      opset_version=17)
    with torch.no_grad():
        want = module(ids).numpy()
    result = collage.tune(path, backends=["native", "onednn"], threads=1, cache="none",
                          refine_rounds=0, repeat=2)
    assert result["search"]["invalid"] == 0
    assert all(m["outputs_match"] for m in result["measured"])
    got = collage.Session(path, plan=result["plan"]).run({"x": ids.numpy()})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
