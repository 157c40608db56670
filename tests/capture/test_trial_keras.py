"""The eleven-run trial of issue 31, Keras 3 part: small real runs trained with advisor's callback, one fault each
(a rate 100x the healthy one, inputs left at 0-255, shuffled labels, MSE on class ids) and a healthy run. With the
callback each fault is named first at 50 % or more; from the log alone wherever the log shows what points at it;
the healthy run gets no cause at 50 % or more."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import numpy as np
import pytest

from tests.optional import importorskip

if os.environ.setdefault("KERAS_BACKEND", "torch") != "torch":
    pytest.skip("the trial runs Keras on the torch backend", allow_module_level=True)
pytest.importorskip("torch")
keras = importorskip("keras")

import advisor
from advisor.capture.keras import AdvisorCallback

HEALTHY_RATE = 0.05


def _data(n: int = 1200, d: int = 16, classes: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian blobs: a task a small MLP learns to 100 % when nothing is wrong."""
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=2.0, size=(classes, d))
    y = rng.integers(0, classes, n)
    return (centers[y] + rng.normal(size=(n, d))).astype("float32"), y.astype("int64")


def _train(out: Path, fault: str | None) -> str:
    x, y = _data()
    keras.utils.set_random_seed(0)
    if fault == "inputs_0_255":
        x = ((x - x.min()) / (x.max() - x.min()) * 255).round().astype("float32")
    if fault == "shuffled_labels":
        y = np.random.default_rng(1).permutation(y)
    rate = HEALTHY_RATE * (100 if fault == "rate_x100" else 1)
    body = [keras.Input((x.shape[1],)), keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu")]
    if fault == "mse_on_class_ids":
        model = keras.Sequential([*body, keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.SGD(rate), loss="mse", metrics=["accuracy"])
    else:
        model = keras.Sequential([*body, keras.layers.Dense(4)])
        model.compile(optimizer=keras.optimizers.SGD(rate),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        model.fit(x, y, epochs=15, batch_size=32, verbose=2, validation_split=0.2,
                  callbacks=[AdvisorCallback(out, every=10)])
    return printed.getvalue()


@pytest.mark.parametrize(
    ("fault", "cause", "from_the_log"),
    [
        ("rate_x100", "lr_too_high", True),               # the log shows the NaN
        ("inputs_0_255", "not_normalized", False),       # the log shows a stuck loss, not the inputs
        ("shuffled_labels", "label_errors", False),
        ("mse_on_class_ids", "loss_function_error", True),  # the log names the loss and the accuracy metric
    ],
)
def test_each_fault_is_named_first(tmp_path: Path, fault: str, cause: str, from_the_log: bool) -> None:
    log = _train(tmp_path / "run", fault)
    top = advisor.diagnose(tmp_path / "run").causes[0]
    assert (top.id, top.confidence >= 0.5) == (cause, True), (fault, top.id, top.confidence)
    if from_the_log:
        (tmp_path / "log").mkdir()
        (tmp_path / "log" / "train.log").write_text(log)
        alone = advisor.diagnose(tmp_path / "log").causes[0]
        assert (alone.id, alone.confidence >= 0.5) == (cause, True), (fault, alone.id, alone.confidence)


def test_the_healthy_run_gets_no_cause(tmp_path: Path) -> None:
    _train(tmp_path, None)
    report = advisor.diagnose(tmp_path)
    assert report.summary.symptom_status == "trains_well"
    assert not report.found()


def _fit_sorted(out: Path, shuffle: bool, run: int | None = None) -> None:
    """The blobs sorted by class (as a folder-per-class loader yields them; ``run``: in runs of that many rows of
    one class, the classes taking turns, as shards written per class give) and fit with or without shuffling;
    no validation split (Keras takes it from the end before shuffling: with sorted data, one class only)."""
    x, y = _data()
    order = np.argsort(y, kind="stable")
    if run is not None:  # the k-th run of each class, the classes in turn
        rank = np.empty(len(y), np.int64)
        for c in np.unique(y):
            rows = order[y[order] == c]
            rank[rows] = np.arange(len(rows)) // run * 10 * len(y) + c * len(y) + np.arange(len(rows)) % run
        order = np.argsort(rank, kind="stable")
    x, y = x[order], y[order]
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((x.shape[1],)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(4)])
    model.compile(optimizer=keras.optimizers.SGD(HEALTHY_RATE),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    with contextlib.redirect_stdout(io.StringIO()):
        model.fit(x, y, epochs=3, batch_size=32, verbose=2, shuffle=shuffle, callbacks=[AdvisorCallback(out, every=10)])


@pytest.mark.parametrize(("run", "rule"), [(None, "first-batches-all-one-class-of-many"),
                                          (32, "first-batches-of-one-class")])
def test_batches_in_class_order_are_named_data_not_shuffled(tmp_path: Path, run: int | None, rule: str) -> None:
    _fit_sorted(tmp_path / "sorted", shuffle=False, run=run)
    report = advisor.diagnose(tmp_path / "sorted")
    named = {c.id: c for c in report.causes + report.smells}
    assert "data_not_shuffled" in named, [c.id for c in report.causes + report.smells]
    assert rule in {e.rule for e in named["data_not_shuffled"].evidence}
    _fit_sorted(tmp_path / "shuffled", shuffle=True)  # near miss: the same data, shuffled by fit
    report = advisor.diagnose(tmp_path / "shuffled")
    assert "data_not_shuffled" not in {c.id for c in report.causes + report.smells}
