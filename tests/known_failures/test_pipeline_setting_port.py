"""A port whose input-pipeline setting differs from the benchmark's, and that trails it (real torch runs): the
differing setting is named as preprocessing_mismatch, not as an unknown setting at a few per cent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.knowledge.settings import is_data_pipeline_setting

PAIR = Path(__file__).resolve().parent / "runs" / "pipeline_port"


def test_a_port_behind_its_baseline_with_another_crop_size_is_a_pipeline_mismatch() -> None:
    report = diagnose(PAIR / "run", baseline=PAIR / "baseline")
    top = report.causes[0]
    assert top.id == "preprocessing_mismatch" and top.confidence >= 0.5
    ev = next(e for e in top.evidence if e.rule == "data-pipeline-setting-differs-and-behind-baseline")
    assert "crop_size is 4" in ev.text and "8 in the baseline" in ev.text


def test_the_same_setting_without_a_gap_is_no_pipeline_cause(tmp_path: Path) -> None:
    """The baseline against a copy of itself whose crop setting was rewritten but whose log is the baseline's."""
    run = tmp_path / "run"
    shutil.copytree(PAIR / "baseline", run)
    (run / "config.yaml").write_text((run / "config.yaml").read_text().replace("crop_size: 8", "crop_size: 4"))
    report = diagnose(run, baseline=PAIR / "baseline")
    assert not [c for c in report.causes if c.id == "preprocessing_mismatch" and c.confidence >= 0.5]


@pytest.mark.parametrize(
    ("key", "pipeline"),
    [
        ("data.crop_size", True),
        ("train.transforms.mean", True),
        ("hsv_h", True),
        ("augment", True),
        ("transforms.0.size", True),
        ("model.init_std", False),
        ("bn.running_mean", False),
        ("loss_mean", False),
        ("model.hidden_size", False),
    ],
)
def test_which_settings_belong_to_the_input_pipeline(key: str, pipeline: bool) -> None:
    assert is_data_pipeline_setting(key) is pipeline
