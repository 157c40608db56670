"""The PyTorch capture hook on real models: nested modules, a module called twice per step,
no-grad evaluation passes, exact statistics, dumps, and training left unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn

from advisor.capture import Capture, attach, capture


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


class Shared(nn.Module):
    """Nested blocks; ``shared`` is called twice per forward pass."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.shared = nn.Linear(8, 8)
        self.block = nn.Sequential(nn.Sequential(nn.Linear(8, 8), nn.ReLU()), nn.Sigmoid())
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        h = self.stem(x)
        h = self.shared(h)
        h = self.shared(torch.relu(h))
        return self.head(self.block(h))


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def train(model, opt, steps, x, y, cap=None):
    for _ in range(steps):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            model(x)  # evaluation pass


def data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(16, 4, generator=g), torch.randint(0, 2, (16,), generator=g)


@pytest.mark.slow
def test_records_nested_twice_called_and_skips_no_grad(tmp_path):
    torch.manual_seed(0)
    model = Shared()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with capture(model, opt, tmp_path, every=3):
        train(model, opt, 7, x, y)
    recs = records(tmp_path / "tensors.jsonl")
    assert sorted({r["step"] for r in recs}) == [0, 3, 6]
    acts = {r["name"]: r for r in recs if r["kind"] == "activation" and r["step"] == 0}
    assert sorted(acts) == ["block.0.0", "block.0.1", "block.1", "head", "shared", "stem.0", "stem.1"]
    # called twice per step: one record over both calls; the no-grad pass is not counted
    assert (acts["shared"]["calls"], acts["shared"]["numel"]) == (2, 2 * 16 * 8)
    assert "calls" not in acts["head"]
    assert acts["block.1"]["module_type"] == "Sigmoid" and "sat_frac" in acts["block.1"]
    assert "sat_frac" not in acts["head"]
    weights = [r["name"] for r in recs if r["kind"] == "weight" and r["step"] == 0]
    assert weights == [n for n, _ in model.named_parameters()]
    assert len([r for r in recs if r["kind"] == "grad"]) == 3 * len(weights)


def test_statistics_match_numpy_exactly(tmp_path):
    torch.manual_seed(0)
    lin = nn.Linear(6, 5)
    act = nn.Tanh()
    model = nn.Sequential(lin, act)
    with torch.no_grad():
        lin.weight[0, :3] = 0.0
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    x = torch.randn(7, 6) * 3
    out = model(x)
    out.sum().backward()
    w_before = lin.weight.detach().numpy().astype(np.float64).copy()
    g = lin.weight.grad.detach().numpy().astype(np.float64)
    a = out.detach().numpy().astype(np.float64)
    cap = Capture(model, opt, tmp_path, every=1)
    model(x).sum().backward()  # recorded forward (same values), gradient accumulates to 2g
    opt.step()
    cap.close()
    recs = {(r["name"], r["kind"]): r for r in records(tmp_path / "tensors.jsonl")}
    w = recs[("0.weight", "weight")]
    assert w["mean"] == pytest.approx(w_before.mean(), abs=1e-12)
    assert w["std"] == pytest.approx(w_before.std(), rel=1e-9)
    assert w["norm"] == pytest.approx(np.linalg.norm(w_before), rel=1e-12)
    assert (w["min"], w["max"]) == (pytest.approx(w_before.min()), pytest.approx(w_before.max()))
    assert w["zero_frac"] == 3 / 30 and (w["nan"], w["inf"]) == (0, 0)
    assert w["shape"] == [5, 6] and w["requires_grad"] is True and w["in_optimizer"] is True
    assert w["row_std"] == pytest.approx(w_before.std(axis=0).mean(), rel=1e-9)
    assert w["update_norm"] == pytest.approx(0.5 * np.linalg.norm(2 * g), rel=1e-5)
    assert w["update_grad_cos"] == pytest.approx(-1.0, abs=1e-6)
    assert w["update_resid_weight_cos"] is None  # plain SGD: the whole update is along the gradient
    gr = recs[("0.weight", "grad")]
    assert gr["norm"] == pytest.approx(np.linalg.norm(2 * g), rel=1e-6)
    t = recs[("1", "activation")]
    assert t["mean"] == pytest.approx(a.mean(), rel=1e-6)
    assert t["sat_frac"] == pytest.approx(np.mean(np.abs(a) >= 0.98))


def test_nan_counted_and_stats_written_as_null(tmp_path):
    model = nn.Sequential(nn.Linear(3, 3))
    with torch.no_grad():
        model[0].weight[0, 0] = float("nan")
        model[0].weight[1, 1] = float("inf")
    cap = Capture(model, None, tmp_path, every=1, activations=False)
    model(torch.ones(2, 3)).sum().backward()
    cap.step_done()
    cap.close()
    w = [r for r in records(tmp_path / "tensors.jsonl") if r["kind"] == "weight" and r["name"] == "0.weight"][0]
    assert (w["nan"], w["inf"], w["mean"], w["norm"]) == (1, 1, None, None)
    assert "update_norm" not in w  # no optimizer: no update statistics


def test_capture_does_not_change_training(tmp_path):
    x, y = data()
    finals = []
    for with_capture in (False, True):
        torch.manual_seed(0)
        model = Shared()
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        if with_capture:
            with attach(model, opt, tmp_path, every=2):
                train(model, opt, 6, x, y)
        else:
            train(model, opt, 6, x, y)
        finals.append([p.detach().clone() for p in model.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*finals))


def test_tied_parameters_appear_under_both_names(tmp_path):
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
    model[2].weight = model[0].weight
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with capture(model, opt, tmp_path, every=1, activations=False):
        for _ in range(2):
            model(torch.randn(3, 4)).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
    recs = [r for r in records(tmp_path / "tensors.jsonl") if r["kind"] == "weight"]
    by = {(r["step"], r["name"]): r for r in recs}
    for s in (0, 1):
        a, b = by[(s, "0.weight")], by[(s, "2.weight")]
        assert {k: a[k] for k in ("mean", "std", "norm")} == {k: b[k] for k in ("mean", "std", "norm")}


def test_frozen_parameter_and_one_missing_from_optimizer(tmp_path):
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    model[0].bias.requires_grad_(False)
    opt = torch.optim.SGD([model[0].weight, model[2].bias], lr=0.1)
    with capture(model, opt, tmp_path, every=1, activations=False):
        model(torch.randn(3, 4)).sum().backward()
        opt.step()
    w = {r["name"]: r for r in records(tmp_path / "tensors.jsonl") if r["kind"] == "weight"}
    assert (w["0.bias"]["requires_grad"], w["0.bias"]["in_optimizer"]) == (False, False)
    assert (w["2.weight"]["requires_grad"], w["2.weight"]["in_optimizer"]) == (True, False)
    assert w["2.weight"]["update_norm"] == 0.0 and w["0.weight"]["update_norm"] > 0


def test_dump_for_chosen_steps_in_plain_layout(tmp_path):
    torch.manual_seed(0)
    model = Shared()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with capture(model, opt, tmp_path, every=100, dump_steps=[1]):
        train(model, opt, 3, x, y)
    folder = tmp_path / "dump" / "step_000001"
    manifest = json.loads((folder / "manifest.json").read_text())
    names = [e["name"] for e in manifest]
    assert names[:3] == ["stem.0.forward.output.0", "stem.1.forward.output.0", "shared.forward.output.0"]
    assert "shared.call1.forward.output.0" in names
    assert sorted(p.name for p in (tmp_path / "dump").iterdir()) == ["step_000001"]
    first = np.load(folder / manifest[0]["file"], allow_pickle=False)
    assert first.shape == (16, 8) and manifest[0]["op_type"] == "Linear"


def test_resumed_capture_appends_and_fresh_one_truncates(tmp_path):
    model = nn.Linear(2, 2)
    for start in (0, 0, 5):
        cap = Capture(model, None, tmp_path, every=1, activations=False, start_step=start)
        model(torch.ones(1, 2)).sum().backward()
        cap.step_done()
        cap.close()
    steps = [r["step"] for r in records(tmp_path / "tensors.jsonl") if r["name"] == "weight" and r["kind"] == "weight"]
    assert steps == [0, 5]


def test_every_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="every must be >= 1"):
        Capture(nn.Linear(2, 2), None, tmp_path, every=0)


def test_owner_module_type_written_and_embedding_not_judged_by_fan_in(tmp_path):
    from advisor.extract.base import RunPair
    from advisor.extract.dynamics import extract
    from advisor.inventory import RunFolder

    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(50, 16), nn.Flatten(), nn.Linear(48, 4), nn.Sigmoid())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with capture(model, opt, tmp_path, every=1):
        for _ in range(2):
            model(torch.randint(0, 50, (8, 3))).sum().backward()
            opt.step()
            opt.zero_grad()
    w = {r["name"]: r for r in records(tmp_path / "tensors.jsonl") if r["kind"] == "weight"}
    assert (w["0.weight"]["module_type"], w["2.weight"]["module_type"]) == ("Embedding", "Linear")
    facts = extract(RunPair(run=RunFolder.scan(tmp_path))).facts
    p = {f.name: f for f in facts if f.kind == "param_dynamics"}
    # nn.Embedding starts at std 1: fine for a lookup table, and not a fan-in question
    assert (p["0.weight"].is_embedding, p["0.weight"].fan_in, p["0.weight"].first_std_fan_in_ratio) == (True, None, None)
    assert p["2.weight"].fan_in == 48 and 0.4 < p["2.weight"].first_std_fan_in_ratio < 0.8
    last = [a.name for a in facts if a.kind == "activation_stats" and a.is_last_module]
    assert last == ["3"]


class WithLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)

    def forward(self, x):
        return self.body(x)


def test_settings_of_the_optimizer_and_loss_and_the_first_inputs(tmp_path):
    torch.manual_seed(0)
    model = WithLoss()
    model.body[0].requires_grad_(False)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05, momentum=0.9,
                          weight_decay=1e-4, nesterov=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: (s + 1) / 10)  # a warm-up: the base rate is recorded
    x, y = torch.randn(12, 4), torch.randint(0, 3, (12,))
    with capture(model, opt, tmp_path, every=1):
        with torch.no_grad():
            model(x[:2] * 100)  # an evaluation pass is not the training data
        for _ in range(3):
            opt.zero_grad()
            model.loss_fn(model(x), y).backward()
            opt.step()
            sched.step()
    settings = json.loads((tmp_path / "advisor_hparams.json").read_text())
    assert settings == {
        "framework": "pytorch", "optimizer": "SGD", "learning_rate": 0.05, "momentum": 0.9, "weight_decay": 1e-4,
        "nesterov": True, "loss": "CrossEntropyLoss", "label_smoothing": 0.1, "loss_reduction": "mean",
        "num_parameters": 67, "trainable_parameters": 27,
    }
    sample = np.load(tmp_path / "data" / "train.npz", allow_pickle=False)
    # the first training batches (3 calls of 12 rows), not the evaluation pass; inputs, not labels
    assert list(sample) == ["x"] and np.array_equal(sample["x"], np.concatenate([x.numpy()] * 3))


def test_an_unwritable_sample_warns_once_and_training_goes_on(tmp_path):
    (tmp_path / "data").write_text("a file where the folder would go")
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.warns(UserWarning, match="no data sample"):
        with capture(model, opt, tmp_path, every=1):
            for _ in range(2):
                opt.zero_grad()
                model(torch.randn(3, 4)).sum().backward()
                opt.step()
    assert len(records(tmp_path / "tensors.jsonl")) > 0
