"""No report says '?' for a value it does not have: the sentence leaves the value out or says it in words.

Run over every shipped example and every real-tool run committed under tests/recipes/runs (Trainer, peft,
Keras 3, Lightning, Ultralytics, MindSpore), and the real cases of ../shared/eval-real-dev where present: logs
that lack most fields are where an unmeasured value shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import advisor
from advisor.report.render import render

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT.parent / "shared" / "eval-real-dev" / "cases"
#: '?' standing for a value: "step ?", "(?", "?)", "= ?", "x?", ": ?" (a question in prose ends a sentence)
PLACEHOLDER = re.compile(r"(?:\bstep \?|\(\?|\?\)|=\s?\?|: \?(?:\s|$)|\? in the baseline|\bvalue \?)")


def _runs() -> list[Path]:
    runs = [p for p in sorted((ROOT / "tests" / "recipes" / "runs").iterdir()) if p.is_dir()]
    for e in sorted((ROOT / "examples").iterdir()):
        if e.is_dir():
            runs.append(e / "run" if (e / "run").is_dir() else e)
    if REAL.is_dir():
        runs += sorted(p / "run" for p in REAL.iterdir() if (p / "run").is_dir())
    return runs


@pytest.mark.parametrize("run", _runs(), ids=lambda p: p.parent.name if p.name == "run" else p.name)
def test_no_placeholder_in_the_text_report(run: Path) -> None:
    baseline = run.parent / "baseline" if run.name == "run" and (run.parent / "baseline").is_dir() else None
    report = advisor.diagnose(run, baseline=baseline)
    text = render(report, "text")
    hits = [line.strip() for line in text.splitlines() if PLACEHOLDER.search(line)]
    assert hits == []
