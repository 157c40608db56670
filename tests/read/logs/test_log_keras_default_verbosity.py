"""Keras 3 at its default verbosity, as ``python train.py > train.log 2>&1`` leaves the output.

The samples are train.log files of ``benchmarks/mutations/keras_bar_programs.py`` (Keras 3.15 on torch, the
progress bars with their carriage returns, backspaces and colour codes as Keras writes them into a file):

- ``keras_default_verbosity_cnn.log``: ``model.summary()``, ``fit(validation_split=0.2, epochs=20,
  batch_size=1024)`` (two steps an epoch), ``evaluate`` with its bar, then ``print("Test loss:", score[0])`` and
  ``print("Test accuracy:", score[1])``; the evaluate bar's final line ``12/12`` is written twice;
- ``keras_default_verbosity_bn.log``: ``fit(validation_data=..., epochs=2)``, ``evaluate`` with one final
  bar line, then ``print(f"Accuracy on the test set: {acc:.3f}")``.
"""

from __future__ import annotations

from pathlib import Path

from advisor.read.logs import read_file

SAMPLES = Path(__file__).parent / "samples"


def _series(name: str) -> dict[str, list[float]]:
    read = read_file(SAMPLES / name, name)
    assert read.problem is None and "keras" in read.formats
    return {k: [float(v) for v in s.buf.arrays()[2]] for k, s in read.series.items()}


def test_evaluate_bar_written_twice_and_printed_again_is_one_test_point():
    series = _series("keras_default_verbosity_cnn.log")
    # two steps an epoch, the bar at 1/2 and 2/2: the train loss at each, the eval loss once an epoch
    assert len(series["train/loss"]) == 40 and len(series["eval/loss"]) == 20
    # the bar's 1.3281 (twice) and the print's 1.3281418085098267: one evaluation, at the printed precision
    assert series["test/loss"] == [1.3281418085098267]
    assert series["test/accuracy"] == [0.7472222447395325]


def test_evaluate_bar_without_a_print_is_one_test_point():
    read = read_file(SAMPLES / "keras_default_verbosity_bn.log", "train.log")
    assert read.steps_per_epoch == 25
    series = {k: [float(v) for v in s.buf.arrays()[2]] for k, s in read.series.items()}
    assert series["train/loss"] == [1.6145, 1.4079, 1.2153, 0.7903, 0.7517, 0.6734]  # (counts 1, 14, 25 an epoch)
    assert series["eval/loss"] == [1.0201, 0.7379]
    assert series["test/loss"] == [0.7379] and series["test/accuracy"] == [0.815]


def test_a_print_of_another_value_stays_a_point_of_its_own(tmp_path):
    text = (SAMPLES / "keras_default_verbosity_cnn.log").read_text(encoding="utf-8")
    path = tmp_path / "train.log"
    path.write_text(text.replace("Test loss: 1.3281418085098267", "Test loss: 0.51"), encoding="utf-8")
    read = read_file(path, "train.log")
    assert [float(v) for v in read.series["test/loss"].buf.arrays()[2]] == [1.3281, 0.51]
