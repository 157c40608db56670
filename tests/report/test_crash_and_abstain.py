"""A crash is shown in every format; a run with nothing clearly wrong says so, with what to collect next."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import advisor
from advisor.report.render import render

ROOT = Path(__file__).resolve().parents[2]
EXCEPTION = "FloatingPointError: Loss became infinite or NaN at iteration=59!"


@pytest.fixture()
def crashed_run(tmp_path: Path) -> Path:
    lines = [f"step {i} loss {2.3 - 0.01 * i:.4f}" for i in range(1, 60)]
    lines += ["Traceback (most recent call last):", '  File "train.py", line 40, in <module>',
              "    loss.backward()", EXCEPTION]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "md", "html", "json"])
def test_crash_is_shown_once_in_every_format(crashed_run: Path, fmt: str):
    report = advisor.diagnose(crashed_run)
    assert [c.exception for c in report.crashes] == [EXCEPTION]
    out = render(report, fmt)
    if fmt == "json":
        assert json.loads(out)["crashes"][0]["exception"] == EXCEPTION
    else:
        assert out.count("The run stopped with:") == 1          # the traceback and its message: one crash
        assert EXCEPTION.split(":")[0] in out
    assert not report.summary.headline.startswith("Nothing is clearly wrong")


def test_a_loss_gone_nan_is_not_called_fine(tmp_path: Path):
    # MindSpore's LossMonitor lines, no hyper-parameters: the symptom leads, then its likeliest causes (a NaN
    # within a few updates is most often the learning rate); the rest of the differential stays listed
    (tmp_path / "train.log").write_text(
        "epoch: 1 step: 1, loss is 2.30\nepoch: 1 step: 2, loss is 2.21\nepoch: 1 step: 3, loss is nan\n"
    )
    report = advisor.diagnose(tmp_path / "train.log")
    assert report.causes[0].id == "lr_too_high" and report.causes[0].confidence < 0.8  # likely, not confident
    assert {"nan_inf_source", "not_normalized"} <= {c.id for c in report.causes[1:]}
    [shown] = report.summary.symptoms
    assert (shown.id, shown.step, shown.updates_before) == ("nonfinite_loss", 3, 2)
    assert shown.text == "The train loss (loss) became NaN or infinite at step 3 (after 2 updates)."
    text = render(report, "text")
    assert "Nothing is clearly wrong" not in text
    assert text.index("What the run shows:") < text.index(shown.text) < text.index(report.summary.headline)


def test_healthy_run_abstains_plainly():
    report = advisor.diagnose(ROOT / "examples" / "healthy")
    assert not report.found()
    assert report.summary.verdict in ("weak_signals", "nothing_found")
    assert report.summary.symptoms == [] and report.summary.symptom_status == "trains_well"
    assert report.summary.headline.startswith("The run trains well (")
    assert report.summary.first_remedies == []                   # no advice to act on a weak signal
    assert report.summary.next_steps                             # but what to collect to check more
    skipped = {c.title for c in report.checks if c.status == "skipped"}
    assert all(n.split(":")[0] in skipped for n in report.summary.next_steps)
    assert "To check more, collect" in render(report, "text")
