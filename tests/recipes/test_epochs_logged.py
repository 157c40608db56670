"""The epochs a log shows done, as the recipe checks read them: Keras' CSVLogger numbers epochs from 0 (its file
for a 10-epoch fit ends at epoch 9), the console log from 1 (Epoch 10/10); both are ten epochs."""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest

from advisor.extract.model_family import _epochs_logged
from advisor.inventory import RunFolder
from advisor.read.run import read_run

pytest.importorskip("torch")


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "torch")
    if os.environ["KERAS_BACKEND"] != "torch":
        pytest.skip("Keras on the torch backend")
    return pytest.importorskip("keras")


def test_csvlogger_and_console_count_the_same_epochs(tmp_path):
    keras = _keras()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((64, 4)).astype("float32"), rng.integers(0, 2, 64)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    (tmp_path / "csv").mkdir()
    (tmp_path / "console").mkdir()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        model.fit(x, y, epochs=10, batch_size=16, verbose=2, validation_split=0.25,
                  callbacks=[keras.callbacks.CSVLogger(str(tmp_path / "csv" / "training.log"))])
    (tmp_path / "console" / "train.log").write_text(printed.getvalue())
    assert (tmp_path / "csv" / "training.log").read_text().splitlines()[-1].startswith("9,")  # 0-based
    assert _epochs_logged(read_run(RunFolder.scan(tmp_path / "csv"))) == 10
    assert _epochs_logged(read_run(RunFolder.scan(tmp_path / "console"))) == 10


def test_lightning_metrics_csv_counts_from_zero_and_trainer_epochs_do_not(tmp_path):
    (tmp_path / "pl").mkdir()
    (tmp_path / "pl" / "metrics.csv").write_text(
        "epoch,step,train_loss,val_loss\n" + "".join(f"{e},{10 * e + 9},{1 - e / 10},\n" for e in range(5)))
    assert _epochs_logged(read_run(RunFolder.scan(tmp_path / "pl"))) == 5
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "train.log").write_text(
        "".join(f"{{'loss': {1 - i / 10}, 'learning_rate': 5e-05, 'epoch': {i / 2}}}\n" for i in range(1, 7)))
    assert _epochs_logged(read_run(RunFolder.scan(tmp_path / "hf"))) == 3.0
