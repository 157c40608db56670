"""A Transformer trained in fp16 that goes NaN after thousands of healthy steps (attention-logit growth past
65504) is explained by the precision; the same NaN at the first steps, or in bf16, is not this rule's."""

from __future__ import annotations

import json
import math
from pathlib import Path

from advisor.diagnosis import diagnose

RULE = "late-nan-in-a-long-fp16-transformer-run"


def _run(folder: Path, nan_from: int, precision: dict) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]}))
    (folder / "training_args.json").write_text(
        json.dumps({"learning_rate": 6e-4, "per_device_train_batch_size": 8, "warmup_steps": 2000, **precision})
    )
    history = []
    for step in range(100, 12_001, 100):  # Trainer's log_history, every 100 steps
        loss = float("nan") if step >= nan_from else 3.0 + 7.0 * math.exp(-step / 1500)
        history.append({"loss": loss, "grad_norm": 0.9, "learning_rate": 6e-4, "epoch": step / 12_000, "step": step})
    state = {"global_step": 12_000, "max_steps": 12_000, "log_history": history}
    (folder / "trainer_state.json").write_text(json.dumps(state))  # NaN written as Trainer's json.dump writes it
    return folder


def _rules(report) -> set[str]:
    return {e.rule for c in report.causes for e in c.evidence}


def test_a_late_nan_of_an_fp16_gpt_run_is_the_precision(tmp_path: Path) -> None:
    report = diagnose(_run(tmp_path / "late", 9_000, {"fp16": True}))
    top = report.causes[0]
    assert top.id == "fp_overflow" and top.confidence >= 0.5
    assert RULE in {e.rule for e in top.evidence}
    # GPT's recipe allows fp16 with dynamic loss scaling: it is not a family that overflows fp16 (as T5 is)
    assert "recipe-fp16-for-a-family-that-overflows-in-fp16" not in _rules(report)


def test_an_early_nan_or_a_bf16_run_is_not_this_rule(tmp_path: Path) -> None:
    assert RULE not in _rules(diagnose(_run(tmp_path / "early", 200, {"fp16": True})))
    assert RULE not in _rules(diagnose(_run(tmp_path / "bf16", 9_000, {"bf16": True})))
