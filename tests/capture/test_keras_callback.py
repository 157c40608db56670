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


def test_records_compile_settings_model_and_first_batch(tmp_path):
    import json

    fit(tmp_path, every=5, epochs=2)
    settings = json.loads((tmp_path / "advisor_hparams.json").read_text())
    assert settings["framework"] == "keras" and settings["epochs"] == 2
    assert (settings["optimizer"], settings["learning_rate"]) == ("SGD", 0.1)
    assert (settings["loss"], settings["from_logits"]) == ("SparseCategoricalCrossentropy", True)
    model = json.loads((tmp_path / "model.json").read_text())
    assert model["class_name"] in ("Sequential", "Functional") and "compile_config" in model
    sample = np.load(tmp_path / "data" / "train.npz", allow_pickle=False)
    assert sample["x"].shape == (72, 6) and sample["y"].shape == (72,)  # the first batches of fit (72 train rows)


def test_softmax_into_from_logits_is_named_from_what_the_callback_recorded(tmp_path):
    # the eleven-run trial's fault: a softmax output into a loss told it gets logits. The log alone shows a loss
    # that levels off far above what the accuracy allows; the callback's model.json and settings name why.
    import advisor

    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 8)).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("int64") + (x[:, 2] > 0.5).astype("int64")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(1e-2),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(x, y, epochs=40, batch_size=32, verbose=0, validation_split=0.25,
              callbacks=[AdvisorCallback(tmp_path, every=8)])
    report = advisor.diagnose(tmp_path)
    top = report.causes[0]
    assert top.id == "loss_function_error" and top.confidence >= 0.5
    assert "from_logits=True" in " ".join(e.text for e in top.evidence)
    assert "insufficient_samples" not in {c.id for c in report.causes}  # the sample is a sample: the callback says so


def test_a_frozen_body_is_a_note_alone_and_the_cause_of_a_missed_target(tmp_path):
    # the eleven-run trial's frozen body: an explicit trainable=False is a setting to check, not a fault by itself
    import advisor

    rng = np.random.default_rng(0)
    x = rng.normal(size=(1024, 16)).astype("float32")
    y = np.argmax(x @ rng.normal(size=(16, 3)), axis=1)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(4, activation="relu", name="body"),
                              keras.layers.Dense(3, name="head")])
    model.get_layer("body").trainable = False
    model.compile(optimizer=keras.optimizers.Adam(1e-2),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(x, y, epochs=20, batch_size=32, verbose=0, validation_split=0.25,
              callbacks=[AdvisorCallback(tmp_path, every=8)])
    alone = advisor.diagnose(tmp_path)
    assert not alone.found()
    assert [c.id for c in alone.causes][:1] == ["weight_freezing_error"]  # listed for a look
    (tmp_path / "hparams.yaml").write_text("target_accuracy: 0.9\n")  # what the user expected of it
    report = advisor.diagnose(tmp_path)
    top = report.causes[0]
    assert top.id == "weight_freezing_error" and top.confidence >= 0.5
    assert "body/kernel" in top.evidence[0].text and "target_accuracy" in top.evidence[0].text
