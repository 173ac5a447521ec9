"""Recurrent layers exported by PyTorch (ONNX RNN, GRU and LSTM) against PyTorch."""
import pytest

import collage
import models

torch = pytest.importorskip("torch")


class Tagger(torch.nn.Module):
    """A recurrent encoder as text and speech models use one: two layers,
    both directions, batch first, then a linear head on every step."""

    def __init__(self, cell, **options):
        super().__init__()
        self.rnn = cell(input_size=12, hidden_size=16, num_layers=2, bidirectional=True,
                        batch_first=True, **options)
        self.head = torch.nn.Linear(32, 5)

    def forward(self, x):
        steps, _ = self.rnn(x)
        return self.head(steps)


class Summary(torch.nn.Module):
    """One forward layer, time major, whose final state is the output."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size=12, hidden_size=8)

    def forward(self, x):
        _, (h, c) = self.lstm(x)
        return h + c


MODELS = {
    "lstm": lambda: Tagger(torch.nn.LSTM),
    "gru": lambda: Tagger(torch.nn.GRU),
    "rnn_relu": lambda: Tagger(torch.nn.RNN, nonlinearity="relu"),
    "lstm_final_state": Summary,
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_exported_recurrent_model_matches_pytorch(name, tmp_path):
    torch.manual_seed(3)
    module = MODELS[name]().eval()
    x = torch.randn(7, 3, 12)
    models.check_against_pytorch(collage, torch, module, x, tmp_path / f"{name}.onnx", 14, 1e-5)
