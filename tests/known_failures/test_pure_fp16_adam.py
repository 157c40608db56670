"""Adam in pure float16 (weights and moments in fp16, no fp32 master copy), on runs LightningCLI really wrote:
torch's default eps 1e-8 rounds to 0 in float16 and the loss is NaN from the second step; eps 1e-4 trains."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder

RUNS = Path(__file__).resolve().parent / "runs"


def _settings(folder: Path) -> dict:
    facts = extract_facts(RunPair(run=RunFolder.open(str(folder), "run"))).facts
    return {f.name: f for f in facts if f.kind == "hyperparameter"}


def test_lightning_cli_config_gives_the_optimizer_its_eps_and_float16_weights() -> None:
    hp = _settings(RUNS / "lightning_fp16_true_adam_eps_default")
    assert hp["optimizer"].value == "adam" and hp["optimizer"].raw_key == "optimizer.class_path"
    assert hp["adam_epsilon"].value == pytest.approx(1e-8)
    assert hp["half_weights"].value is True and hp["half_weights"].raw_key == "trainer.precision"
    assert hp["precision"].value == "fp16"


def test_the_nan_run_is_explained_by_the_eps_float16_cannot_hold() -> None:
    report = diagnose(RUNS / "lightning_fp16_true_adam_eps_default")
    assert report.summary.symptoms and "NaN" in report.summary.symptoms[0].text
    top = report.causes[0]
    assert top.id == "fp_overflow" and top.confidence >= 0.5
    assert any(e.rule == "adam-epsilon-vanishes-in-pure-fp16-and-the-loss-is-nan" for e in top.evidence)
    assert any("eps" in r for r in top.remedies[:2])


def test_the_same_run_with_eps_1e4_gets_no_cause() -> None:
    report = diagnose(RUNS / "lightning_fp16_true_adam_eps_1e-4")
    assert not [c for c in report.causes if c.confidence >= 0.5]
    assert not [e for c in report.causes + report.smells for e in c.evidence if e.rule.startswith("adam-epsilon")]


@pytest.mark.parametrize(
    ("value", "key", "pure"),
    [
        ("16-true", "trainer.precision", True),
        ("16-mixed", "trainer.precision", False),
        ("bf16-true", "trainer.precision", False),
        ("float16", "dtype_policy", True),
        ("mixed_float16", "dtype_policy", False),
        ("O3", "fp16_opt_level", True),
        ("O2", "opt_level", False),
        ("O3", "amp_level", False),  # MindSpore's O3 casts the computation; the parameters stay float32
        (True, "fp16", False),
    ],
)
def test_which_precisions_keep_the_weights_in_float16(value, key, pure) -> None:
    from advisor.knowledge.setting_values import pure_half

    assert pure_half(value, key) is pure
