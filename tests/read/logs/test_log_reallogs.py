"""Acceptance: the readers against the real logs of ../shared/reallogs (cases.json gives the figures)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from advisor.extract.view.curves import curve_xy, primary_loss
from advisor.read.logs import read_file
from advisor.read.logs.merge import merge_reads

REALLOGS = Path(__file__).resolve().parents[3] / ".." / "shared" / "reallogs"
CASES = json.loads((REALLOGS / "cases.json").read_text()) if (REALLOGS / "cases.json").is_file() else []
pytestmark = pytest.mark.skipif(not CASES, reason="../shared/reallogs is not beside the repository")


def _read(case: dict):
    path = REALLOGS / "cases" / case["case"] / case["files"][0]
    read = read_file(path, path.name)
    assert read.problem is None, read.problem
    return read, merge_reads([read])


def _values(series):
    _, y, _, _, _ = curve_xy(series)
    return y


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["case"])
def test_train_loss_matches_cases_json(case):
    exp = case["expected"]
    read, merged = _read(case)
    train = primary_loss(merged, "train")
    assert train is not None
    y = _values(train)
    assert train.buf.count >= exp["n_loss_points_min"]
    assert train.buf.count <= exp["n_loss_points_min"] * 1.05
    fin = y[[math.isfinite(v) for v in y]]
    assert fin[0] == pytest.approx(exp["first_loss"], rel=1e-9)
    assert fin[-1] == pytest.approx(exp["last_loss"], rel=1e-9)
    assert (train.buf.nonfinite > 0) == exp["nonfinite"]
    assert read.event_counts.get("overflow", 0) == (exp["overflow_events"] or 0)
    if "loss_column" in exp:
        assert train.raw_key == exp["loss_column"]


@pytest.mark.parametrize("case", [c for c in CASES if any(k in c["expected"] for k in
                                                            ("eval_loss_points", "val_loss_points"))],
                         ids=lambda c: c["case"])
def test_eval_loss_matches_cases_json(case):
    exp = case["expected"]
    _, merged = _read(case)
    ev = primary_loss(merged, "eval")
    assert ev is not None
    y = _values(ev)
    assert ev.buf.count == exp.get("eval_loss_points", exp.get("val_loss_points"))
    first = exp.get("eval_first", exp.get("val_first"))
    last = exp.get("eval_last", exp.get("val_last"))
    if first is not None:
        assert y[0] == pytest.approx(first, rel=1e-9)
    if last is not None:
        assert y[-1] == pytest.approx(last, rel=1e-9)
    if "val_loss_max" in exp:
        assert max(y) == pytest.approx(exp["val_loss_max"], rel=1e-9)


def _case(name: str) -> dict:
    return next(c for c in CASES if c["case"] == name)


def test_deepspeed_loss_scale_history():
    case = _case("deepspeed_zero1_fp16_gpt2_tutorial")
    read, merged = _read(case)
    scale = _values(merged.series["train/loss_scale"])
    assert scale[0] == case["expected"]["loss_scale_initial"]
    assert scale[-1] == case["expected"]["loss_scale_final"]
    assert "deepspeed" in read.formats
    # the config dump line "loss_scale ...... 0" is not a loss-scale value
    assert 0 not in list(scale)


def test_resumed_detectron2_run_is_deduplicated():
    case = _case("detectron2_coco_faster_c4_full_run")
    _, merged = _read(case)
    train = primary_loss(merged, "train")
    x, _, _, unit, _ = curve_xy(train)
    assert unit == "step"
    assert train.buf.count == case["expected"]["raw_loss_lines"] - case["expected"]["duplicate_iterations"]
    assert train.resumes >= 1
    assert list(x) == sorted(x)          # one pass over the iterations, no going back


def test_two_runs_in_one_file_are_two_runs_not_a_divergence():
    case = _case("handwritten_noprop_cifar100_low_acc")
    _, merged = _read(case)
    train = primary_loss(merged, "train")
    assert len(train.restarts) == case["expected"]["runs"] - 1
    assert [train.restarts[0], train.buf.count - train.restarts[0]] == case["expected"]["run_lengths"]
