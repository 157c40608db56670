"""What a MindSpore 2.x ``Model.train`` / ``Model.eval`` script prints, read from its real output.

The samples are cuts of ``python train.py > train.log 2>&1`` of benchmarks/mutations/mindspore_programs.py
(MindSpore 2.10 on CPU, NumPy 2): LossMonitor lines, TimeMonitor lines, the model zoo's eval print
``============== {'Accuracy': np.float64(0.91)} ==============`` and, for unscaled inputs, LossMonitor's stop
at the first step. No MindSpore is needed to read them.
"""

from __future__ import annotations

import math
from pathlib import Path

from advisor.diagnosis import diagnose
from advisor.extract.base import RunPair
from advisor.extract.crashes import extract as crash_extract
from advisor.inventory import RunFolder
from advisor.read.logs import read_file
from advisor.read.logs.keyvalue import parse_pairs
from advisor.read.logs.records import Collector
from advisor.read.logs.keys import parse_number

SAMPLES = Path(__file__).parent / "logs" / "samples"


def test_numpy2_scalar_reprs_are_numbers():
    assert parse_number("np.float64(0.9138888888888889)") == 0.9138888888888889
    assert parse_number("numpy.int64(3)") == 3.0
    assert math.isnan(parse_number("np.float32(nan)"))
    assert parse_number("np.float64(0.9") is None  # not closed: not a number
    assert parse_pairs("acc: np.float64(0.5), loss is np.float32(1.25)") == [
        ("acc", 0.5, "strong"),
        ("loss", 1.25, "strong"),
    ]


def test_model_eval_print_is_an_eval_score_at_the_last_train_step():
    read = read_file(SAMPLES / "mindspore_model_eval.log")
    assert set(read.series) == {"train/loss", "eval/accuracy"}  # not a train accuracy without a step
    steps, _, values, _ = read.series["eval/accuracy"].buf.arrays()
    train_steps = read.series["train/loss"].buf.arrays()[0]
    assert values.tolist() == [0.9138888888888889]
    assert steps.tolist() == [train_steps[-1]] == [9 * 44 + 35]  # steps counted inside each epoch, made global


def test_a_metrics_dict_with_a_split_of_its_own_keeps_it(tmp_path):
    log = tmp_path / "train.log"
    text = (SAMPLES / "mindspore_model_eval.log").read_text(encoding="utf-8")
    log.write_text(text.replace("{'Accuracy'", "{'train_accuracy'"), encoding="utf-8")
    assert "eval/accuracy" not in read_file(log).series


def test_loss_monitor_stop_at_the_first_step_is_a_crash_at_step_1():
    facts = crash_extract(RunPair(RunFolder.scan(SAMPLES / "mindspore_unscaled_digits"))).facts
    crashes = [f for f in facts if f.kind == "training_crash" and f.step is not None]
    assert [(c.step, c.is_nonfinite) for c in crashes] == [(1, True)]


def test_step_inside_a_later_epoch_is_counted_from_the_start():
    col = Collector("train.log")
    for epoch in (1, 2):
        for step in (15, 30, 45):
            col.add_record({"loss": 2.0}, 1, step=step, epoch=epoch)
    assert col.step_in_run(1, 1) == 1
    assert col.step_in_run(3, 3) == 2 * 45 + 3
    assert Collector("x.log").step_in_run(3, 4) is None  # steps per epoch not known yet


def test_unscaled_inputs_named_for_a_loss_non_finite_at_the_first_step():
    report = diagnose(SAMPLES / "mindspore_unscaled_digits")
    assert report.causes[0].id == "not_normalized"


def test_one_step_per_epoch_counts_one_update_per_epoch():
    """Batch as large as the data set: LossMonitor prints ``epoch: E step: 1`` every epoch (real output)."""
    read = read_file(SAMPLES / "mindspore_full_batch.log")
    steps = read.series["train/loss"].buf.arrays()[0]
    assert steps.tolist() == list(range(1, 31))  # was step 1 thirty times


def test_a_dict_with_a_loss_stays_a_train_record(tmp_path):
    """A Keras ``on_epoch_end`` callback that prints its ``logs`` ({'accuracy': ..., 'loss': ...}) is no evaluation."""
    log = tmp_path / "train.log"
    text = (SAMPLES / "mindspore_model_eval.log").read_text(encoding="utf-8")
    log.write_text(text.replace("{'Accuracy': np.float64(0.9138888888888889)}", "{'accuracy': 0.91, 'loss': 1.5}"))
    assert not any(name.startswith("eval/") for name in read_file(log).series)
