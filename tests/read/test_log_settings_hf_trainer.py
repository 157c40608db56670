"""The block Hugging Face Trainer logs at INFO level when training starts, read as settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder
from advisor.read.log_settings import settings_in_text

LOG = Path(__file__).parent / "hf_trainer_runs" / "bert_lr_high" / "train.log"
WANT = {
    "num_train_examples": 1200,
    "num_train_epochs": 6,
    "per_device_train_batch_size": 32,
    "total_train_batch_size": 32,
    "gradient_accumulation_steps": 1,
    "max_steps": 228,
    "num_parameters": 75139,
}


def test_block_of_a_real_log():
    found = [s for s in settings_in_text(LOG.read_text(encoding="utf-8")) if s.form == "Trainer"]
    assert len(found) == 1
    assert found[0].values == WANT
    assert found[0].lines["max_steps"] == 10  # "[transformers]   Total optimization steps = 228"


@pytest.mark.parametrize(
    "prefix",
    [
        "",  # the message alone
        "12/02/2026 04:05:00 - INFO - transformers.trainer - ",  # run_glue.py's basicConfig format
        "[INFO|trainer.py:2400] 2026-12-02 04:05:00,123 >> ",  # transformers' own handler in example scripts
    ],
)
def test_block_under_other_logging_prefixes(prefix: str):
    lines = [ln for ln in LOG.read_text(encoding="utf-8").splitlines()[2:11]]
    text = "\n".join(prefix + ln.removeprefix("[transformers] ") for ln in lines)
    found = [s for s in settings_in_text(text) if s.form == "Trainer"]
    assert len(found) == 1 and found[0].values == WANT


def test_a_log_alone_gives_the_planned_steps_and_trainable_parameters(tmp_path: Path):
    (tmp_path / "train.log").write_bytes(LOG.read_bytes())
    facts = extract_facts(RunPair(run=RunFolder.scan(tmp_path))).facts
    hp = {f.name: f.value for f in facts if f.kind == "hyperparameter"}
    assert hp["max_steps"] == 228
    assert hp["num_parameters"] == 75139
    assert hp["num_train_samples"] == 1200
    assert hp["epochs"] == 6


def test_other_lines_after_the_marker_are_not_taken():
    text = "***** Running training *****\nepoch = 3\n  Loss went down = a lot\n"
    assert [s for s in settings_in_text(text) if s.form == "Trainer"] == []
