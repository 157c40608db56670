"""Real tiny training runs (torch CPU) written in every log format -> the diagnosis.

Each run of ``examples/logs_gen.py`` is trained once per session; its history
is printed in a format, and the whole pipeline (readers, extractors, rules)
must name the injected fault, and stay quiet on the healthy runs.
"""

from __future__ import annotations

# confidences here are the rules' combined figure (raw_confidence), before the calibration map that
# benchmarks/calibrate.py fits on labelled runs (tested in tests/test_calibration.py)

import functools
import math
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import logs_gen  # noqa: E402

from advisor.diagnosis import diagnose  # noqa: E402
from advisor.extract.base import RunPair  # noqa: E402
from advisor.extract import crashes, loss_curve, loss_scale  # noqa: E402
from advisor.extract.view.curves import curve_xy, primary_loss  # noqa: E402
from advisor.inventory import RunFolder  # noqa: E402
from advisor.read.logs import read_file  # noqa: E402
from advisor.read.logs.merge import merge_reads  # noqa: E402

train = functools.lru_cache(maxsize=None)(logs_gen.train)



def extract(pair):
    """The log extractors together: curves, loss scale and overflows, crashes."""
    ex = loss_curve.extract(pair)
    ex.merge(loss_scale.extract(pair))
    ex.merge(crashes.extract(pair))
    return ex

def _run(tmp_path: Path, kind: str, fmt: str) -> Path:
    return logs_gen.write_run(train(kind), fmt, tmp_path / f"{kind}__{fmt}")


def _causes(folder: Path, baseline: Path | None = None) -> dict[str, float]:
    report = diagnose(folder, baseline=baseline)
    return {c.id: c.raw_confidence for c in report.causes}


@pytest.mark.parametrize("fmt", list(logs_gen.WRITERS))
def test_healthy_run_in_every_format_raises_nothing(tmp_path, fmt):
    causes = _causes(_run(tmp_path, "healthy", fmt))
    assert not {k: v for k, v in causes.items() if v >= 0.5}


@pytest.mark.parametrize("fmt", ["keyvalue", "deepspeed", "hf_state"])
def test_healthy_fp16_run_raises_nothing(tmp_path, fmt):
    causes = _causes(_run(tmp_path, "fp16_healthy", fmt))
    assert not {k: v for k, v in causes.items() if v >= 0.5}


FAULTS = [
    ("lr_high", "keyvalue"), ("lr_high", "mindspore"), ("lr_high", "hf_print"), ("lr_high", "detectron2"),
    ("lr_low", "hf_state"), ("lr_low", "lightning"), ("lr_low", "metriclogger"),
    ("short", "keyvalue"), ("short", "keras"), ("short", "jsonl"),
    ("overfit", "hf_state"), ("overfit", "keras_csv"), ("overfit", "lightning"),
    ("fp16_overflow", "deepspeed"), ("fp16_overflow", "keyvalue"),
]


@pytest.mark.parametrize("fmt", ["keyvalue", "hf_print", "deepspeed"])
def test_a_loss_cut_from_its_graph_is_a_differential_not_a_confident_guess(tmp_path, fmt):
    """A loss detached from the model stays at ln(C): the log shows the symptom and nothing that tells a cut graph
    from a bad rate or a misused operator, so no cause is confident (the prior's candidates, with their checks)."""
    report = diagnose(_run(tmp_path, "no_grad", fmt))
    assert [s.id for s in report.summary.symptoms] == ["loss_at_chance"]
    assert report.summary.verdict == "differential" and all(c.confidence < 0.5 for c in report.causes)


@pytest.mark.parametrize("kind, fmt", FAULTS, ids=[f"{k}-{f}" for k, f in FAULTS])
def test_fault_is_the_top_cause(tmp_path, kind, fmt):
    causes = _causes(_run(tmp_path, kind, fmt))
    expected = logs_gen.RUNS[kind]["cause"]
    assert causes.get(expected, 0) >= 0.5, causes
    assert max(causes, key=causes.get) == expected


@pytest.mark.parametrize("fmt", ["keyvalue", "mindspore", "hf_state", "lightning", "jsonl", "deepspeed"])
def test_reader_returns_the_logged_values(tmp_path, fmt):
    h = train("healthy")
    d = _run(tmp_path, "healthy", fmt)
    reads = [read_file(p, p.name) for p in sorted(d.iterdir()) if p.name != "hparams.yaml"]
    s = primary_loss(merge_reads(reads), "train")
    x, y, _, unit, _ = curve_xy(s)
    logged = dict(zip(h.step, h.loss))
    # steps as each format counts them: MindSpore 1-based, Trainer after the step, the others 0-based
    shift = {"mindspore": 1, "hf_state": 1}.get(fmt, 0)
    assert unit == "step" and len(x) >= 30
    for step, val in zip(x, y):
        assert val == pytest.approx(logged[int(step) - shift], rel=1e-4, abs=1e-4)


def test_curve_facts_of_a_diverging_run(tmp_path):
    d = _run(tmp_path, "lr_high", "jsonl")
    ex = extract(RunPair(run=RunFolder.scan(d)))
    train_curve = next(f for f in ex.facts if f.kind == "loss_curve" and f.split == "train")
    h = train("lr_high")
    first_nan = next(s for s, v in zip(h.step, h.loss) if not math.isfinite(v))
    assert train_curve.diverged and train_curve.first_nonfinite_step == first_nan
    assert train_curve.nonfinite_count == sum(not math.isfinite(v) for v in h.loss)
    grad = next(f for f in ex.facts if f.kind == "grad_norm_trend")
    assert grad.is_nonfinite_at_end
    assert any(m.kind == "nonfinite" for m in ex.markers)
    assert all(len(s.x) <= 1000 for s in ex.series)


def test_loss_scale_history_of_an_overflowing_fp16_run(tmp_path):
    h = train("fp16_overflow")
    d = _run(tmp_path, "fp16_overflow", "deepspeed")
    ex = extract(RunPair(run=RunFolder.scan(d)))
    trend = next(f for f in ex.facts if f.kind == "loss_scale_trend")
    over = next(f for f in ex.facts if f.kind == "overflow_events")
    assert over.count == len(h.overflow)
    assert trend.reached_one and trend.initial_value == 65536.0 and trend.min_value == 1.0
    assert trend.reductions == 16
    assert {c.stage for c in ex.checks} >= {"loss_curve", "floating_point_exceptions"}


def test_baseline_deviation_of_a_slow_run_against_a_healthy_baseline(tmp_path):
    run = _run(tmp_path, "lr_low", "keyvalue")
    base = _run(tmp_path, "healthy", "keyvalue")
    ex = extract(RunPair(run=RunFolder.scan(run), baseline=RunFolder.scan(base, side="baseline")))
    dev = next(f for f in ex.facts if f.kind == "baseline_deviation" and f.split == "train")
    assert dev.is_above_baseline and dev.rel_deviation_last > 1.0
    assert dev.first_departure_step is not None and dev.first_departure_step <= 100
    causes = _causes(run, baseline=base)
    assert max(causes, key=causes.get) == "lr_too_low"


def test_healthy_run_against_itself_stays_inside_the_band(tmp_path):
    run = _run(tmp_path, "healthy", "hf_state")
    base = _run(tmp_path, "healthy", "keyvalue")
    ex = extract(RunPair(run=RunFolder.scan(run), baseline=RunFolder.scan(base, side="baseline")))
    dev = next(f for f in ex.facts if f.kind == "baseline_deviation" and f.split == "train")
    assert not dev.is_above_baseline and not dev.is_below_baseline


def test_a_truncated_train_npz_does_not_hide_the_log(tmp_path):
    import io
    import shutil

    import numpy as np

    from advisor.diagnosis import diagnose

    run = tmp_path / "run"
    (run / "data").mkdir(parents=True)
    buf = io.BytesIO()
    np.savez(buf, x=np.ones((100, 5)), y=np.arange(100) % 3)
    (run / "data" / "train.npz").write_bytes(buf.getvalue()[:700])  # cut inside the zip
    shutil.copy(Path(__file__).resolve().parents[2] / "examples" / "lr_too_high" / "train.log", run / "train.log")
    report = diagnose(run)
    assert any(i.path == "train.log" and i.status == "used" for i in report.inputs)
    assert any(c.stage == "loss_curve" and c.status == "ran" for c in report.checks)
