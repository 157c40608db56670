"""A train loss of exactly 0 from the first step (real torch runs): CrossEntropyLoss over one output unit is
named as a loss error; the same model with two outputs, whose loss starts near ln 2, is not."""

from __future__ import annotations

from pathlib import Path

from advisor.diagnosis import diagnose

RUNS = Path(__file__).resolve().parent / "runs"
RULE = "train-loss-exactly-zero-from-the-start"


def _fired(report) -> set[str]:
    return {e.rule for c in report.causes + report.smells for e in c.evidence}


def test_a_loss_of_exactly_zero_from_the_first_step_is_a_loss_error() -> None:
    report = diagnose(RUNS / "torch_one_logit_cross_entropy")
    top = report.causes[0]
    assert top.id == "loss_function_error" and top.confidence >= 0.5
    assert RULE in {e.rule for e in top.evidence}
    assert "lr_too_low" not in [c.id for c in report.causes if c.confidence >= 0.2]


def test_the_two_output_model_is_not_told_so() -> None:
    assert RULE not in _fired(diagnose(RUNS / "torch_two_logit_cross_entropy"))
