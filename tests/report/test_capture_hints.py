"""A skipped check's hint names advisor's callback for the tool that made the run (real runs of each tool)."""

from __future__ import annotations

from pathlib import Path

import pytest

import advisor

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "recipes" / "runs"


def _enable(run: Path, stage: str) -> str:
    [check] = [c for c in advisor.diagnose(run).checks if c.stage == stage]
    assert check.status == "skipped"
    return check.enable or ""


@pytest.mark.parametrize(
    ("run", "module"),
    [
        ("hf_bert_recipe", "advisor.capture.hf"),
        ("peft_lora_recipe", "advisor.capture.hf"),
        ("lightning_vit_lr_high", "advisor.capture.lightning"),
        ("keras_resnet_lr_unscaled", "advisor.capture.keras"),
        ("mindspore_resnet_recipe", "advisor.capture.mindspore"),
    ],
)
def test_the_dynamics_hint_is_the_tools_callback(run: str, module: str) -> None:
    text = _enable(RUNS / run, "training_dynamics")
    assert f"from {module} import AdvisorCallback" in text and "attach(" not in text


def test_dumps_follow_the_tool_where_its_callback_can_dump():
    assert "dump_steps=[0]" in _enable(RUNS / "lightning_vit_lr_high", "network_wide_comparison")
    assert "AdvisorCallback" in _enable(RUNS / "hf_bert_recipe", "network_wide_comparison")
    assert "msprobe" in _enable(RUNS / "mindspore_resnet_recipe", "network_wide_comparison")


def test_a_plain_pytorch_run_keeps_the_hook():
    assert "from advisor.capture import attach" in _enable(ROOT / "examples" / "lr_too_high", "network_wide_comparison")


def test_settings_and_data_hints_say_the_callback_writes_them():
    text = _enable(RUNS / "keras_resnet_lr_unscaled", "input_data")
    assert "data/train.npz" in text and "advisor.capture.keras" in text
    assert "msprobe" not in text and "numpy.savez" in _enable(RUNS / "mindspore_resnet_recipe", "input_data")
