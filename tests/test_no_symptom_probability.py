"""A confidence is a probability given what the run shows (advisor/explain.py, step 4): a run that shows no symptom
gets no confident cause from a smell or from curves that showed nothing; a run that keeps up with its benchmark
turns its setting differences into warnings."""

from __future__ import annotations

import shutil
from pathlib import Path

import advisor
from advisor.report.render import render

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_a_setting_that_differs_from_a_benchmark_the_run_keeps_up_with_is_a_warning(tmp_path):
    """The shipped baseline (a real torch run) against itself with one setting spelt to another value: the curves
    are the same, so the difference costs nothing measurable; the same difference beside a real gap is a cause."""
    base = EXAMPLES / "port_mismatch" / "baseline"
    run = _copy(base, tmp_path / "run")
    hp = run / "hparams.yaml"
    hp.write_text(hp.read_text().replace("weight_decay: 0.0", "weight_decay: 0.01"))
    report = advisor.diagnose(run, baseline=base)
    assert report.summary.symptoms == []
    assert not [c for c in report.causes if c.confidence >= 0.5]
    (warning,) = [c for c in report.smells if c.id == "hparam_mismatch"]
    assert warning.warning_note == "Differs from the benchmark; the run is not worse."
    assert "Differs from the benchmark; the run is not worse." in render(report, "text")
    # near miss: the shipped faulty port, far behind the same baseline, keeps its confident cause
    far = advisor.diagnose(EXAMPLES / "port_mismatch" / "run", baseline=base)
    assert far.causes[0].id == "hparam_mismatch" and far.causes[0].confidence >= 0.5


def test_a_curve_only_cause_without_a_symptom_is_a_weak_signal_and_the_same_cause_with_one_is_confident(tmp_path):
    """'Still improving at the end' read from the curves of a run that shows no symptom is what a short demo shows
    too: tentative. The same learning-rate rule beside a NaN loss is confident."""
    (tmp_path / "short").mkdir()
    lines = [
        f"epoch {e} loss {1.2 - 0.3 * e:.4f} val_loss {1.1 - 0.28 * e:.4f} val_acc {0.5 + 0.1 * e:.3f}"
        for e in range(1, 4)
    ]
    (tmp_path / "short" / "train.log").write_text("\n".join(lines) + "\n")
    report = advisor.diagnose(tmp_path / "short")
    assert report.summary.symptoms == []
    assert report.causes and all(c.confidence < 0.5 for c in report.causes)
    assert report.summary.verdict == "weak_signals"
    lr = advisor.diagnose(EXAMPLES / "lr_too_high")
    assert lr.summary.symptoms and lr.causes[0].id == "lr_too_high" and lr.causes[0].confidence >= 0.5
