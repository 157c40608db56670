"""A Lightning run left with Lightning's defaults, as written by the real library.

``samples/lightning_rich_fit_validate/`` is a whole run folder of
``benchmarks/mutations/lightning_bar_programs.py`` (``lightning_bar_cnn_digits`` with batch size 1024: 12 epochs
of 2 batches): ``Trainer(max_epochs=12, default_root_dir=RUN)`` then ``trainer.validate()``, run as
``python train.py > train.log 2>&1``. Lightning 2.6 picks ``RichProgressBar`` where rich is installed; with
stdout a file it prints only its last frame, the metrics wrapped onto the lines under it. The default
TensorBoard logger wrote two event files into ``lightning_logs/version_0/``: ``fit``'s (the epoch-end
validations, no train loss: 24 updates are fewer than ``log_every_n_steps=50``), and ``validate``'s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder
from advisor.read.log_settings import settings_in_text
from advisor.read.logs import read_file
from advisor.read.logs.merge import merge_reads

RUN = Path(__file__).parent / "samples" / "lightning_rich_fit_validate"
VERSION = RUN / "lightning_logs" / "version_0"
FIT, VALIDATE = sorted(p.name for p in VERSION.glob("events.out.tfevents.*"))


def _points(read, name):
    steps, epochs, values, _ = read.series[name].buf.arrays()
    return list(steps), list(epochs), list(values)


def test_rich_last_frame_with_wrapped_metrics_is_one_point_at_its_position():
    read = read_file(RUN / "train.log", "train.log")
    assert read.problem is None and "rich" in read.formats
    # "Epoch 11/11 ━━━ 2/2 0:00:00 • ... v_num: 0.000" then "train_loss: 1.133", "val_loss: 1.649", "val_acc: 0.856"
    # on the lines under it: the frame's position (epoch 11 from 0, batch 2 of 2) is step 11 * 2 + 2 = 24
    assert _points(read, "train/loss") == ([24.0], [11.0], [1.133])
    assert _points(read, "eval/loss") == ([24.0], [11.0], [1.649])
    assert _points(read, "eval/acc") == ([24.0], [11.0], [0.856])


def test_event_files_of_one_logger_folder_are_one_run():
    pytest.importorskip("tensorboard")
    fit = read_file(VERSION / FIT, f"lightning_logs/version_0/{FIT}")
    validate = read_file(VERSION / VALIDATE, f"lightning_logs/version_0/{VALIDATE}")
    steps, _, values = _points(fit, "eval/loss")
    assert len(steps) == 12 and steps[-1] == 23.0  # Lightning logs the epoch-end validation one step early
    assert _points(validate, "eval/loss")[0] == [24.0] and _points(validate, "eval/loss")[2] == [values[-1]]
    merged = merge_reads([validate, fit])  # any order: the names tell which was written first
    joined_steps, _, joined_values, _ = merged.series["eval/loss"].buf.arrays()
    # validate()'s score of the final weights is the last epoch's validation again: kept once, at the later step
    assert list(joined_steps) == steps[:-1] + [24.0]
    assert list(joined_values) == values
    assert not [d for d in merged.duplicates if d[0] == "eval/loss" and FIT in d[1] + d[2] and VALIDATE in d[1] + d[2]]


def test_final_evaluation_is_at_the_end_of_training():
    pytest.importorskip("tensorboard")
    facts = extract_facts(RunPair(RunFolder.scan(RUN), None)).facts
    score = next(f for f in facts if f.kind == "eval_score")
    assert score.is_at_end and score.last_step == 24.0 and score.points == 12
    train = next(f for f in facts if f.kind == "loss_curve" and f.split == "train")
    assert train.last_step == 24 and train.last_value == 1.133


def test_the_stop_message_states_the_epoch_budget():
    text = (RUN / "train.log").read_text(encoding="utf-8")
    found = [s for s in settings_in_text(text) if s.form == "Lightning stop message"]
    assert [(s.values, s.lines) for s in found] == [({"max_epochs": 12}, {"max_epochs": 19})]
    facts = extract_facts(RunPair(RunFolder.scan(RUN), None)).facts
    epochs = next(f for f in facts if f.kind == "hyperparameter" and f.name == "epochs")
    assert epochs.value == 12 and epochs.raw_key == "max_epochs" and epochs.source.path == "train.log"
    # the same line after a tqdm bar's last frame (carriage returns, no newline before it), and max_steps
    line = "Epoch 4: 100%|##########| 25/25 [00:00<00:00, v_num=0, train_loss=0.1]`Trainer.fit` stopped: `max_steps=80` reached."
    assert [s.values for s in settings_in_text("x\r" + line + "\n")] == [{"max_steps": 80}]


def test_tqdm_validation_that_repeats_the_last_values_is_a_new_evaluation():
    """``samples/lightning_tqdm_constant_val.log``: the first three epochs (25 batches each) of the same programs'
    ``lightning_bar_mlp_synth`` run with zero init, ``TQDMProgressBar``: the network's output never changes, so each
    epoch's validation shows ``val_loss=1.390, val_acc=0.250`` again. The ``Validation DataLoader 0`` bar between
    the epoch's frames says a validation ran: three evaluations, not one value shown three times."""
    read = read_file(Path(__file__).parent / "samples" / "lightning_tqdm_constant_val.log")
    assert read.problem is None and "tqdm" in read.formats
    assert _points(read, "eval/loss") == ([25.0, 50.0, 75.0], [0.0, 1.0, 2.0], [1.39, 1.39, 1.39])
    assert _points(read, "eval/acc")[2] == [0.25, 0.25, 0.25]
    assert read.series["train/loss"].buf.count == 75
