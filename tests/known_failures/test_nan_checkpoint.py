"""A model that starts from a checkpoint holding a NaN (real torch runs with the capture hook): the weight is
named as the cause, whatever the learning rate; the same checkpoint without the NaN gets no such cause."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose

RUNS = Path(__file__).resolve().parent / "runs"
MAKE = Path(__file__).resolve().parent / "make"
RULE = "weights-nonfinite-before-any-update"


def test_a_nan_in_a_loaded_weight_is_the_cause_of_a_nan_loss_from_the_start() -> None:
    report = diagnose(RUNS / "torch_nan_checkpoint")
    assert report.summary.symptoms[0].id == "nonfinite_loss_at_start"
    top = report.causes[0]
    assert top.id == "weight_init_bad" and top.confidence >= 0.5
    ev = next(e for e in top.evidence if e.rule == RULE)
    assert "0.weight" in ev.text


def test_finite_weights_get_no_such_cause() -> None:
    report = diagnose(RUNS / "torch_finite_checkpoint")
    assert not [e for c in report.causes + report.smells for e in c.evidence if e.rule == RULE]
    assert not [c for c in report.causes if c.confidence >= 0.5]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_the_installed_torch_and_capture_hook_still_record_the_nan_before_the_update(tmp_path: Path) -> None:
    sys.path.insert(0, str(MAKE))
    try:
        import torch_nan_checkpoint as make
    finally:
        sys.path.remove(str(MAKE))
    make.main(str(tmp_path))
    report = diagnose(tmp_path / "torch_nan_checkpoint")
    assert any(e.rule == RULE for c in report.causes for e in c.evidence)
