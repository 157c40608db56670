"""The warm-up of the run against its family's recipe: no warm-up is a smell on a healthy run and the likely
explanation of an early blow-up; a ResNet at a small batch, a stated warm-up or a logged ramp make no check."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "recipes" / "runs"

BERT = "model_name_or_path: bert-base-uncased\nlearning_rate: 3.0e-5\nper_device_train_batch_size: 32\n"


def _warmup(folder: Path):
    facts = extract_facts(RunPair(run=RunFolder.open(str(folder), "run"))).facts
    return next((f for f in facts if f.kind == "recipe_check" and f.setting == "warmup"), None)


def _run(folder: Path, hparams: str, log: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hparams.yaml").write_text(hparams, encoding="utf-8")
    if log:
        (folder / "train.log").write_text(log, encoding="utf-8")
    return folder


def _hf_log(losses: list[float], lrs: list[float]) -> str:
    """Trainer's log dicts, as `python train.py > train.log` prints them."""
    return "".join(
        f"{{'loss': {loss!r}, 'grad_norm': 1.0, 'learning_rate': {lr!r}, 'epoch': {0.01 * (i + 1):.2f}}}\n"
        for i, (loss, lr) in enumerate(zip(losses, lrs))
    )


def test_a_bert_fine_tune_with_warmup_ratio_0_is_checked_against_the_recipe_warm_up(tmp_path: Path) -> None:
    w = _warmup(_run(tmp_path, BERT + "warmup_ratio: 0.0\n"))
    assert w is not None and w.direction == "below" and w.family == "bert"
    assert "warmup_ratio in hparams.yaml = 0" in w.text and "10% of the steps" in w.text


@pytest.mark.parametrize(
    "extra",
    ["warmup_ratio: 0.1\n", "warmup_ratio: 0.0\nwarmup_steps: 500\n", "warmup_ratio: 0.0\nlr_scheduler_type: warmup_linear\n"],
)
def test_a_stated_warm_up_makes_no_check(tmp_path: Path, extra: str) -> None:
    assert _warmup(_run(tmp_path, BERT + extra)) is None


def test_resnet_warms_up_only_for_large_batches_so_no_warm_up_at_batch_256_is_not_checked(tmp_path: Path) -> None:
    assert _warmup(_run(tmp_path, "model: resnet50\noptimizer: sgd\nlr: 0.1\nbatch_size: 256\nwarmup_epochs: 0\n")) is None


def test_a_logged_rate_that_starts_at_its_peak_is_no_warm_up_and_a_logged_ramp_is_one(tmp_path: Path) -> None:
    flat = _warmup(_run(tmp_path / "flat", BERT, _hf_log([0.69 - 0.01 * i for i in range(10)], [3e-5] * 10)))
    assert flat is not None and "starts at its peak" in flat.text
    ramp = [3e-5 * min(1.0, (i + 1) / 5) for i in range(10)]
    assert _warmup(_run(tmp_path / "ramp", BERT, _hf_log([0.69 - 0.01 * i for i in range(10)], ramp))) is None


def test_no_warm_up_on_a_run_that_trains_well_is_a_warning_not_a_cause(tmp_path: Path) -> None:
    log = _hf_log([0.69 * 0.93**i for i in range(40)], [3e-5 * (1 - i / 40) for i in range(40)])
    report = diagnose(_run(tmp_path, BERT + "warmup_ratio: 0.0\n", log))
    assert not [c for c in report.causes if c.confidence >= 0.5]
    smell = [c for c in report.smells if c.id == "lr_too_high"]
    assert smell and "warm-up" in " ".join(e.text for c in smell for e in c.evidence)


def test_a_nan_loss_without_the_recipe_warm_up_is_explained_by_it(tmp_path: Path) -> None:
    losses = [0.69, 0.71, 0.9, 1.7, 4.2] + [float("nan")] * 5
    report = diagnose(_run(tmp_path, BERT + "warmup_ratio: 0.0\n", _hf_log(losses, [3e-5] * 10)))
    top = report.causes[0]
    assert top.id == "lr_too_high" and top.confidence >= 0.5
    assert any(e.rule == "recipe-warmup-missing-and-the-loss-blows-up" for e in top.evidence)


def test_a_real_lightning_vit_run_without_warm_up_is_read_from_its_hparams() -> None:
    w = _warmup(RUNS / "lightning_vit_lr_high")
    assert w is not None and "warmup_epochs in lightning_logs/version_0/hparams.yaml = 0" in w.text
    assert "5 epochs" in w.text and w.reference == "https://arxiv.org/abs/2012.12877"
