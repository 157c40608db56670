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
