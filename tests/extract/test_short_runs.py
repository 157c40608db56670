"""Runs too short to have trained: a MindSpore 2.10 run of one epoch (fixtures/mindspore_one_epoch: the stdout
and the model-zoo style config of benchmarks/mutations/mindspore_programs.py with epoch_size 1). LossMonitor
prints four losses, one every quarter of the epoch."""

from __future__ import annotations

from pathlib import Path

from advisor.diagnosis import diagnose
from advisor.extract import loss_curve
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder

FIX = Path(__file__).parent / "fixtures"


def test_four_points_carry_a_trend():
    out = loss_curve.extract(RunPair(run=RunFolder.scan(FIX / "mindspore_one_epoch")))
    [curve] = [f for f in out.facts if f.kind == "loss_curve" and f.split == "train"]
    assert curve.points == 4 and curve.is_still_falling and curve.end_change_ratio < -0.05


def test_one_epoch_still_falling_is_too_short():
    report = diagnose(FIX / "mindspore_one_epoch")
    assert report.causes and report.causes[0].id == "insufficient_epochs", [(c.id, c.confidence) for c in report.causes]
