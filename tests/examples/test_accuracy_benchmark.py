"""The accuracy benchmark's arithmetic: top-1, top-3 and false alarms from ranked causes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ACCURACY = Path(__file__).resolve().parents[2] / "benchmarks" / "accuracy.py"


@pytest.fixture(scope="module")
def acc():
    spec = importlib.util.spec_from_file_location("benchmarks_accuracy", ACCURACY)
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchmarks_accuracy"] = module
    spec.loader.exec_module(module)
    return module


def test_top1_top3_and_false_alarms(acc):
    O = acc.Outcome
    outcomes = [
        O("a", "lr_too_high", [("lr_too_high", 0.9), ("gradient_explosion", 0.8)]),          # top-1
        O("b", "lr_too_high", [("gradient_explosion", 0.9), ("fp_overflow", 0.7), ("lr_too_high", 0.6)]),  # top-3 only
        O("c", "outliers", [("not_normalized", 0.7), ("lr_too_high", 0.6), ("fp_overflow", 0.5),
                            ("outliers", 0.4)]),                                               # 4th: a miss
        O("d", "outliers", [], error="diagnosis process died"),                                # crash: a miss
        O("h1", None, [("overfitting", 0.49)]),                                                # below 0.5: quiet
        O("h2", None, [("overfitting", 0.5), ("lr_too_low", 0.2)]),                            # at 0.5: an alarm
    ]
    s = acc.summarise(outcomes)
    assert (s["faulty"], s["healthy"]) == (4, 2)
    assert s["top1"] == 0.25 and s["top3"] == 0.5
    assert s["false_alarm_rate"] == 0.5
    assert s["false_alarms"] == [{"run": "h2", "alarms": ["overfitting 0.50"]}]
    assert s["per_cause"]["lr_too_high"] == {"runs": 2, "top1": 1, "top3": 2, "misses": [
        {"run": "b", "ranked": "gradient_explosion 0.90, fp_overflow 0.70, lr_too_high 0.60"}]}
    assert [m["run"] for m in s["per_cause"]["outliers"]["misses"]] == ["c", "d"]
    assert s["errors"] == [{"run": "d", "error": "diagnosis process died"}]
    md = acc.markdown(s)
    assert "| `lr_too_high` | 2 | 0.50 | 1.00 |" in md and "top-1 **0.25**" in md


def test_labels_paths_are_relative_to_the_labels_file(acc, tmp_path):
    (tmp_path / "labels.json").write_text('{"x": {"cause": null, "run": "x/run", "baseline": null}}')
    [(name, label, base)] = acc.load_labels(tmp_path / "labels.json")
    assert (name, label["run"], base) == ("x", "x/run", tmp_path)


def test_also_ok_counts_and_calibration_table(acc):
    O = acc.Outcome
    outcomes = [
        O("a", "lr_too_high", [("gradient_explosion", 0.75), ("lr_too_high", 0.3)], also_ok=("gradient_explosion",)),
        O("b", "outliers", [("not_normalized", 0.72), ("outliers", 0.35)]),
        O("h", None, [("overfitting", 0.31)]),
    ]
    s = acc.summarise(outcomes)
    assert s["top1"] == 0.5                                     # also_ok is right
    cal = s["calibration"]
    assert cal["predictions"] == 5
    bins = {b["bin"]: b for b in cal["bins"]}
    assert bins["0.7-0.8"]["n"] == 2 and bins["0.7-0.8"]["hit_rate"] == 0.5
    assert bins["0.3-0.4"]["n"] == 3 and bins["0.3-0.4"]["hit_rate"] == pytest.approx(2 / 3, abs=1e-3)
    # ECE = 2/5 * (0.735 - 0.5) + 3/5 * (2/3 - 0.32)
    assert cal["ece"] == pytest.approx(2 / 5 * 0.235 + 3 / 5 * (2 / 3 - 0.32), abs=1e-3)
    assert "expected calibration error" in acc.markdown(s)


def test_eval_dev_style_labels_list(acc, tmp_path):
    (tmp_path / "corpus" / "runs" / "r1").mkdir(parents=True)
    for pair in ("p1", "p2"):
        (tmp_path / "corpus" / "runs" / pair / "run").mkdir(parents=True)
    (tmp_path / "corpus" / "labels.json").write_text(
        '[{"run": "runs/r1", "baseline": null, "cause": "overfitting", "also_ok": ["insufficient_epochs"]},'
        ' {"run": "runs/p1/run", "baseline": "runs/p1/baseline", "cause": null},'
        ' {"run": "runs/p2/run", "baseline": "runs/p2/baseline", "cause": null}]')
    entries = acc.load_labels(tmp_path / "corpus" / "labels.json", prefix="set/")
    assert [n for n, _, _ in entries] == ["set/p1/run", "set/p2/run", "set/r1"]   # pairs are not merged by name
    name, label, base = entries[-1]
    assert (name, label["also_ok"], base) == ("set/r1", ["insufficient_epochs"], tmp_path / "corpus")
