"""A warm-up longer than the run (#47, #48): real transformers Trainer logs of a tiny GPT-2 built from a config
(tests/extract/fixtures/make/hf_lm_logs.py)."""

from __future__ import annotations

from pathlib import Path

from advisor.diagnosis import diagnose

FIXTURES = Path(__file__).parent / "fixtures"


def test_a_rate_still_warming_up_beside_a_loss_that_does_not_move_is_too_low():
    """warmup_steps=2000 for a run of 150 steps: the logged rate climbs to 3.7e-05 of the 5e-4 set."""
    report = diagnose(FIXTURES / "hf_warmup_longer_than_run")
    assert [s.id for s in report.summary.symptoms] == ["loss_stuck"]
    top = report.causes[0]
    assert top.id == "lr_too_low" and top.confidence >= 0.5
    assert "warmup-longer-than-the-run-and-the-loss-does-not-fall" in top.rules
    assert "still rising at the last value" in top.evidence[0].text


def test_a_warm_up_that_ends_is_quiet():
    report = diagnose(FIXTURES / "hf_warmup_ok")
    assert not any("warmup-longer-than-the-run" in " ".join(c.rules) for c in report.causes + report.smells)
    assert all(c.confidence < 0.5 for c in report.causes)
