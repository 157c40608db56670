"""advisor.capture.lightning.AdvisorCallback on a real Lightning fit (CPU, a few seconds)."""

from __future__ import annotations

import pytest

from tests.optional import importorskip

torch = pytest.importorskip("torch")
L = importorskip("lightning.pytorch")
from torch import nn

from advisor.capture.lightning import AdvisorCallback

try:
    from .conftest import dynamics_stage_ran, records
except ImportError:
    from conftest import dynamics_stage_ran, records


class Net(L.LightningModule):
    def __init__(self, lr: float = 0.1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
        self.lr = lr

    def training_step(self, batch, i):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, i):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)  # plain SGD: update = -lr * grad


def loader(n=96, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)


def fit(out, accumulate=1, epochs=4, **kw):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    cb = AdvisorCallback(out, **kw)
    trainer = L.Trainer(max_epochs=epochs, accelerator="cpu", callbacks=[cb], logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        accumulate_grad_batches=accumulate, default_root_dir=out)
    trainer.fit(model, loader(), loader(32, seed=1))
    return model, trainer


def test_records_every_nth_optimizer_step_with_this_steps_gradient(tmp_path):
    model, trainer = fit(tmp_path, every=5)
    recs = records(tmp_path)
    assert trainer.global_step == 24
    assert sorted({r["step"] for r in recs}) == [0, 5, 10, 15, 20]
    weights = [r for r in recs if r["kind"] == "weight" and r["step"] == 0]
    assert [r["name"] for r in weights] == [n for n, _ in model.named_parameters()]
    # read between backward and the update: plain SGD moves exactly against this step's gradient
    for r in (r for r in recs if r["kind"] == "weight"):
        assert r["update_grad_cos"] == pytest.approx(-1.0, abs=1e-6), r
        assert r["in_optimizer"] is True
    grads = {(r["step"], r["name"]): r for r in recs if r["kind"] == "grad"}
    upd = {(r["step"], r["name"]): r["update_norm"] for r in recs if r["kind"] == "weight"}
    for key, g in grads.items():
        assert upd[key] == pytest.approx(0.1 * g["norm"], rel=1e-5)
    # training forward passes only (validation runs without a graph): one call per step
    acts = [r for r in recs if r["kind"] == "activation" and r["step"] == 0]
    assert sorted(r["name"] for r in acts) == ["net.0", "net.1", "net.2"] and all("calls" not in r for r in acts)
    assert dynamics_stage_ran(tmp_path)


def test_gradient_accumulation_counts_optimizer_steps(tmp_path):
    fit(tmp_path, accumulate=2, epochs=2, every=2)
    recs = records(tmp_path)
    assert sorted({r["step"] for r in recs}) == [0, 2, 4]
    act = next(r for r in recs if r["kind"] == "activation" and r["name"] == "net.0" and r["step"] == 0)
    assert (act["calls"], act["numel"]) == (2, 2 * 16 * 16)


def test_dump_steps_write_operator_outputs(tmp_path):
    fit(tmp_path, epochs=1, every=10, dump_steps=[1])
    import json

    manifest = json.loads((tmp_path / "dump" / "step_000001" / "manifest.json").read_text())
    assert [e["name"] for e in manifest] == [f"net.{i}.forward.output.0" for i in range(3)]


def test_records_the_optimizer_trainer_settings_and_the_first_batch(tmp_path):
    import json

    import numpy as np

    fit(tmp_path, accumulate=2, epochs=2, every=5)
    settings = json.loads((tmp_path / "advisor_hparams.json").read_text())
    assert settings["optimizer"] == "SGD" and settings["learning_rate"] == 0.1
    assert (settings["framework"], settings["epochs"], settings["gradient_accumulation_steps"]) == ("pytorch", 2, 2)
    assert settings["batch_size"] == 16 and settings["num_parameters"] == settings["trainable_parameters"] == 163
    sample = np.load(tmp_path / "data" / "train.npz", allow_pickle=False)
    # the first epoch's batches (96 rows in 6 batches of 16), not the second epoch's repeat of them
    xs, ys = zip(*[(bx.numpy(), by.numpy()) for bx, by in loader()])
    assert np.array_equal(sample["x"], np.concatenate(xs)) and np.array_equal(sample["y"], np.concatenate(ys))


def test_the_sample_can_be_turned_off_and_never_replaces_a_file(tmp_path):
    fit(tmp_path, epochs=1, data_sample=False)
    assert not (tmp_path / "data").exists()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.npz").write_bytes(b"the user's own")
    fit(tmp_path, epochs=1)
    assert (tmp_path / "data" / "train.npz").read_bytes() == b"the user's own"
