"""Whole run folders of ``benchmarks/mutations/lightning_bar_programs.py`` (``lightning_bar_cnn_digits``: a CNN on
digits, Lightning's defaults: the rich bar's last frame in train.log, the default TensorBoard logger's event files and
hparams.yaml under ``lightning_logs/version_0/``), written by Lightning 2.6 on CPU.

- ``lightning_defaults_cnn_output_activation``: ``nn.Softmax`` as the network's last layer, before
  ``nn.CrossEntropyLoss``;
- ``lightning_defaults_cnn_init``: every conv and linear weight and bias initialised to zero.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.extract.chance import softmax_floor
from advisor.inventory import RunFolder

pytest.importorskip("tensorboard")

FIXTURES = Path(__file__).parent / "fixtures"


def _facts(name: str) -> list:
    return extract_facts(RunPair(RunFolder.scan(FIXTURES / name), None)).facts


def test_softmax_floor_is_the_best_a_second_softmax_allows() -> None:
    # softmax over a one-hot probability vector: the true class gets e / (e + C - 1)
    assert softmax_floor(10) == pytest.approx(-math.log(math.e / (math.e + 9)))
    assert softmax_floor(2) == pytest.approx(math.log(1 + math.exp(-1)))  # sigmoid of a probability of 1


def test_softmax_before_cross_entropy_levels_off_just_above_the_floor() -> None:
    levels = {f.split: f for f in _facts("lightning_defaults_cnn_output_activation") if f.kind == "chance_level"}
    # the lowest logged losses lie just above ln(1 + 9 / e) = 1.461, and never below it
    assert 1.0 <= levels["train"].min_over_softmax_floor_ratio < 1.01
    assert 1.0 <= levels["eval"].min_over_softmax_floor_ratio < 1.03
    causes = diagnose(FIXTURES / "lightning_defaults_cnn_output_activation").causes
    assert causes[0].id == "loss_function_error"


def test_zero_init_gives_one_prediction_for_every_input() -> None:
    facts = _facts("lightning_defaults_cnn_init")
    eval_level = next(f for f in facts if f.kind == "chance_level" and f.split == "eval")
    assert abs(eval_level.end_ratio - 1) < 1e-4  # the eval loss is ln(10) to four digits: a constant output
    causes = diagnose(FIXTURES / "lightning_defaults_cnn_init").causes
    assert causes[0].id == "weight_init_bad"
    assert all(c.confidence < 0.1 for c in causes if c.id == "loss_function_error")
