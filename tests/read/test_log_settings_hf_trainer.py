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


def test_a_trainer_log_alone_gives_its_peak_rate_and_the_default_optimizer(tmp_path: Path):
    # lr 2.0 with 20 warm-up steps and linear decay, logged every 10 steps: the highest logged rate is 1.913
    (tmp_path / "train.log").write_bytes(LOG.read_bytes())
    facts = extract_facts(RunPair(run=RunFolder.scan(tmp_path))).facts
    hp = {f.name: f for f in facts if f.kind == "hyperparameter"}
    assert hp["learning_rate"].value == 1.913 and "highest learning_rate" in hp["learning_rate"].raw_key
    assert hp["optimizer"].value == "adamw" and hp["optimizer"].is_default
    check = next(f for f in facts if f.kind == "learning_rate_check")
    assert check.times_above_usual > 600


def test_the_configured_rate_wins_over_the_logged_one():
    run = LOG.parent  # training_args.bin states learning_rate=2.0
    facts = extract_facts(RunPair(run=RunFolder.scan(run))).facts
    hp = {f.name: f for f in facts if f.kind == "hyperparameter"}
    assert hp["learning_rate"].value == 2.0 and hp["learning_rate"].raw_key == "learning_rate"
    assert not hp["optimizer"].is_default


def test_a_loops_own_lr_key_does_not_imply_trainer_defaults(tmp_path: Path):
    # the same printed dicts with the loop's own 'lr' key: not Trainer's 'learning_rate', so no AdamW is assumed
    text = LOG.read_text(encoding="utf-8").replace("'learning_rate'", "'lr'")
    (tmp_path / "train.log").write_text(text, encoding="utf-8")
    facts = extract_facts(RunPair(run=RunFolder.scan(tmp_path))).facts
    hp = {f.name: f for f in facts if f.kind == "hyperparameter"}
    assert "'lr'" in text and "optimizer" not in hp and "learning_rate" not in hp
