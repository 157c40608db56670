"""advisor.capture.mindspore.AdvisorCallback on a real Model.train (MindSpore on CPU; skipped where not installed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")
from mindspore import nn
from mindspore.train import Model

from advisor.capture.mindspore import AdvisorCallback

try:
    from .conftest import dynamics_stage_ran, records
except ImportError:
    from conftest import dynamics_stage_ran, records


class Batches:
    """Random-access source of whole batches (numpy 2 safe: arrays, not scalars)."""

    def __init__(self, n=96, batch=16, seed=0):
        rng = np.random.default_rng(seed)
        self.x = rng.normal(size=(n, 6)).astype(np.float32)
        self.y = ((self.x[:, 0] > 0).astype(np.int32) + (self.x[:, 1] > 0)).astype(np.int32)
        self.batch = batch

    def __getitem__(self, i):
        s = slice(i * self.batch, (i + 1) * self.batch)
        return self.x[s], self.y[s]

    def __len__(self):
        return len(self.x) // self.batch


def train(out, every=4, epochs=2, freeze=False):
    import mindspore.dataset as ds

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(6, 16), nn.Tanh(), nn.Dense(16, 3)])
    if freeze:
        for p in net[0].get_parameters():
            p.requires_grad = False
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), opt)
    data = ds.GeneratorDataset(Batches(), ["x", "y"], shuffle=False)
    cb = AdvisorCallback(out, every=every)
    model.train(epochs, data, callbacks=[cb], dataset_sink_mode=False)
    return net, model


def test_records_weights_gradients_and_updates(tmp_path):
    _, model = train(tmp_path)  # 6 batches x 2 epochs = 12 steps
    recs = records(tmp_path)
    assert sorted({r["step"] for r in recs}) == [0, 4, 8]
    w0 = {r["name"]: r for r in recs if r["kind"] == "weight" and r["step"] == 0}
    assert sorted(w0) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    assert w0["0.weight"]["shape"] == [16, 6] and w0["0.weight"]["module_type"] == "Dense"
    grads = {(r["step"], r["name"]): r["norm"] for r in recs if r["kind"] == "grad"}
    assert len(grads) == 3 * 4
    for r in (r for r in recs if r["kind"] == "weight"):  # plain SGD: the update is -0.1 x this step's gradient
        assert r["update_grad_cos"] == pytest.approx(-1.0, abs=1e-5)
        assert r["update_norm"] == pytest.approx(0.1 * grads[(r["step"], r["name"])], rel=1e-3)
    # the optimizer is given back after the training
    assert isinstance(model.train_network.optimizer, nn.SGD)
    losses = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in losses] == list(range(12)) and all(r["loss"] > 0 for r in losses)
    assert dynamics_stage_ran(tmp_path)


def test_frozen_parameters_are_recorded_unchanged(tmp_path):
    train(tmp_path, every=5, epochs=2, freeze=True)
    frozen = [r for r in records(tmp_path) if r["name"] == "0.weight"]
    assert {r["kind"] for r in frozen} == {"weight"}
    assert all(r["requires_grad"] is False and r["in_optimizer"] is False for r in frozen)
    assert len({r["norm"] for r in frozen}) == 1


def test_records_the_optimizer_and_loss_settings(tmp_path):
    import json

    train(tmp_path, epochs=2, freeze=True)
    settings = json.loads((tmp_path / "advisor_hparams.json").read_text())
    assert (settings["framework"], settings["optimizer"], settings["learning_rate"]) == ("mindspore", "SGD", 0.1)
    assert (settings["loss"], settings["loss_sparse"]) == ("SoftmaxCrossEntropyWithLogits", True)
    assert settings["epochs"] == 2 and settings["steps_per_epoch"] > 0
    assert (settings["num_parameters"], settings["trainable_parameters"]) == (163, 51)  # the first Dense frozen
