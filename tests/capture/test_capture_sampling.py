"""A model with many tensors (issue 50): a recorded step takes at most MAX_PARAMETERS_PER_STEP parameters and
MAX_ACTIVATIONS_PER_STEP leaf modules, in a window that rotates over the model, and its records say
``sample_of``; a model under the limits is recorded whole, without that field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch import nn

from advisor.capture import attach, hook
from advisor.capture.writer import RotatingSample


def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "tensors.jsonl").read_text().splitlines()]


def _train(model: nn.Module, folder: Path, steps: int, every: int = 1) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    cap = attach(model, opt, folder, every=every, data_sample=False, settings=False)
    x = torch.randn(4, 3)
    for _ in range(steps):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
    cap.close()


def _five_layers() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(*(nn.Linear(3, 3) for _ in range(5)))  # 10 parameters, 5 leaf modules


def test_a_large_model_is_recorded_in_a_rotating_window(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(hook, "MAX_PARAMETERS_PER_STEP", 4)
    monkeypatch.setattr(hook, "MAX_ACTIVATIONS_PER_STEP", 2)
    _train(_five_layers(), tmp_path, steps=3)
    recs = _records(tmp_path)
    weights = {s: [r["name"] for r in recs if r["kind"] == "weight" and r["step"] == s] for s in range(3)}
    assert weights == {
        0: ["0.weight", "0.bias", "1.weight", "1.bias"],
        1: ["2.weight", "2.bias", "3.weight", "3.bias"],
        2: ["4.weight", "4.bias", "0.weight", "0.bias"],  # wraps around: every parameter within 3 steps
    }
    acts = {s: [r["name"] for r in recs if r["kind"] == "activation" and r["step"] == s] for s in range(3)}
    assert acts == {0: ["0", "1"], 1: ["2", "3"], 2: ["0", "4"]}  # in the order of the forward pass
    assert all(r["sample_of"] == (10 if r["kind"] != "activation" else 5) for r in recs)
    grads = [r for r in recs if r["kind"] == "grad"]
    assert len(grads) == 12 and all(r["norm"] > 0 for r in grads)
    with_update = [r for r in recs if r["kind"] == "weight"]
    assert all(r["update_norm"] > 0 for r in with_update)
    row_std = [r["name"] for r in recs if "row_std" in r]
    assert row_std == ["0.weight", "1.weight", "2.weight", "3.weight", "4.weight"]  # each once, when first seen


def test_a_model_under_the_limits_is_recorded_whole(tmp_path: Path):
    _train(_five_layers(), tmp_path, steps=2)
    recs = _records(tmp_path)
    assert len([r for r in recs if r["kind"] == "weight" and r["step"] == 1]) == 10
    assert len([r for r in recs if r["kind"] == "activation" and r["step"] == 1]) == 5
    assert not any("sample_of" in r for r in recs)


def test_the_window_follows_the_recorded_steps_not_every_step(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(hook, "MAX_PARAMETERS_PER_STEP", 4)
    _train(_five_layers(), tmp_path, steps=5, every=2)  # recorded steps 0, 2, 4: windows 0, 1, 2
    recs = _records(tmp_path)
    firsts = [next(r["name"] for r in recs if r["kind"] == "weight" and r["step"] == s) for s in (0, 2, 4)]
    assert firsts == ["0.weight", "2.weight", "4.weight"]


def test_tied_parameters_keep_each_name_in_a_window(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(hook, "MAX_PARAMETERS_PER_STEP", 1)
    model = _five_layers()
    model[4].weight = model[0].weight  # one tensor, two names: recorded under both in the same step
    _train(model, tmp_path, steps=1)
    assert [r["name"] for r in _records(tmp_path) if r["kind"] == "weight"] == ["0.weight", "4.weight"]


def test_the_cost_of_a_recorded_step_is_bounded(tmp_path: Path, monkeypatch):
    calls = {"n": 0}
    real = hook.Capture._stats

    def counted(self, *args, **kwargs):
        calls["n"] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(hook.Capture, "_stats", counted)
    monkeypatch.setattr(hook, "MAX_PARAMETERS_PER_STEP", 16)
    many = 16 * 30

    class Many(nn.Module):
        def __init__(self):
            super().__init__()
            self.ps = nn.ParameterList(nn.Parameter(torch.ones(2)) for _ in range(many))

        def forward(self, x):
            return x * torch.stack(list(self.ps)).sum()

    _train(Many(), tmp_path, steps=2)
    # per recorded step: a weight and a gradient for each parameter of the window (no leaf module is called:
    # the parameters are read by the model itself), whatever the model's 480 parameters
    assert calls["n"] == 2 * (2 * 16)


def test_rotating_sample_covers_every_index():
    s = RotatingSample(10, 4)
    seen = [list(s.indices(t)) for t in range(3)]
    assert seen == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    assert all(s.holds(i, t) == (i in seen[t]) for t in range(3) for i in range(10))
    assert list(RotatingSample(3, 4).indices(7)) == [0, 1, 2] and not RotatingSample(3, 4).sampled
