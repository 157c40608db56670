"""advisor.capture.keras.AdvisorCallback on a real Keras 3 fit, torch backend, CPU."""

from __future__ import annotations

import json
import os

import pytest

from tests.optional import importorskip

if os.environ.setdefault("KERAS_BACKEND", "torch") != "torch":
    pytest.skip("these tests run Keras on the torch backend", allow_module_level=True)
pytest.importorskip("torch")
keras = importorskip("keras")
import numpy as np

from advisor.capture.keras import AdvisorCallback

try:
    from .conftest import dynamics_stage_ran, records
except ImportError:
    from conftest import dynamics_stage_ran, records


def fit(out, every=5, epochs=3, freeze_first=False):
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 6)).astype("float32")
    y = ((x[:, 0] > 0).astype("int64") + (x[:, 1] > 0)).astype("int64")
    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="tanh", name="hidden"),
                              keras.layers.BatchNormalization(name="bn"), keras.layers.Dense(3, name="head")], name="net")
    if freeze_first:
        model.get_layer("hidden").trainable = False
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=16, epochs=epochs, validation_split=0.25, verbose=0,
              callbacks=[AdvisorCallback(out, every=every)])
    return model


def test_records_weights_this_batchs_gradient_and_update(tmp_path):
    fit(tmp_path)  # 72 training samples, batch 16: 5 batches per epoch, 15 steps
    recs = records(tmp_path)
    assert sorted({r["step"] for r in recs}) == [0, 5, 10]
    w0 = {r["name"]: r for r in recs if r["kind"] == "weight" and r["step"] == 0}
    # trainable variables only: BatchNormalization's moving statistics are state, not weights
    assert sorted(w0) == sorted(["net/hidden/kernel", "net/hidden/bias", "net/bn/gamma",
                                 "net/bn/beta", "net/head/kernel", "net/head/bias"])
    assert w0["net/hidden/kernel"]["shape"] == [16, 6]  # PyTorch's order: output first
    assert w0["net/hidden/kernel"]["module_type"] == "Dense"
    assert "row_std" in w0["net/hidden/kernel"]
    grads = {(r["step"], r["name"]): r["norm"] for r in recs if r["kind"] == "grad"}
    assert len(grads) == 3 * 6
    for r in (r for r in recs if r["kind"] == "weight"):  # plain SGD: the update is -0.1 x the gradient
        assert r["update_grad_cos"] == pytest.approx(-1.0, abs=1e-5)
        assert r["update_norm"] == pytest.approx(0.1 * grads[(r["step"], r["name"])], rel=1e-3)
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [(r["step"], r["epoch"]) for r in rows] == [(5, 1), (10, 2), (15, 3)]
    assert all("loss" in r and "val_loss" in r for r in rows)
    assert dynamics_stage_ran(tmp_path)


def test_frozen_layer_is_recorded_without_gradient_and_unchanged(tmp_path):
    fit(tmp_path, every=4, epochs=2, freeze_first=True)
    recs = records(tmp_path)
    frozen = [r for r in recs if r["name"] == "net/hidden/kernel"]
    assert {r["kind"] for r in frozen} == {"weight"}
    assert all(r["requires_grad"] is False and "update_norm" not in r for r in frozen)
    assert len({r["norm"] for r in frozen}) == 1
