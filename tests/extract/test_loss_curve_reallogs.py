"""The whole pipeline on the real logs of ../shared/reallogs: healthy ones stay quiet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose

REALLOGS = Path(__file__).resolve().parents[2] / ".." / "shared" / "reallogs"
CASES = json.loads((REALLOGS / "cases.json").read_text()) if (REALLOGS / "cases.json").is_file() else []
pytestmark = pytest.mark.skipif(not CASES, reason="../shared/reallogs is not beside the repository")


def _causes(case: dict) -> dict[str, float]:
    return {c.id: c.confidence for c in diagnose(REALLOGS / "cases" / case["case"]).causes}


@pytest.mark.parametrize("case", [c for c in CASES if c["symptom_class"] == "healthy"], ids=lambda c: c["case"])
def test_healthy_real_runs_raise_no_cause(case):
    assert not {k: v for k, v in _causes(case).items() if v >= 0.5}


@pytest.mark.parametrize("name", ["hf_trainer_state_whisper_small_hi_overfit", "yolov8_wheat_weed"])
def test_real_overfitting_runs(name):
    causes = _causes(next(c for c in CASES if c["case"] == name))
    assert max(causes, key=causes.get) == "overfitting" and causes["overfitting"] >= 0.5


def test_deepspeed_calibration_is_not_called_an_overflow_problem():
    causes = _causes(next(c for c in CASES if c["case"] == "deepspeed_zero1_fp16_gpt2_tutorial"))
    assert causes.get("fp_overflow", 0) < 0.5
    assert 0 < causes.get("loss_scale_bad", 0) < 0.5      # a note on the 2^32 start, not an alarm
