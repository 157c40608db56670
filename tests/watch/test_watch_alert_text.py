"""An alert line is inert in a terminal (issue 29 class 6): what came from the run cannot move the cursor, set
the title, reorder the text or start a new line."""

from __future__ import annotations

from advisor.watch import Alert


def test_an_alert_line_carries_no_live_control_characters():
    evil = "loss\x1b]0;owned\x07 went \x1b[2J NaN \x9b31m \u202eevil\n second line"
    for kind in ("cause", "symptom"):
        line = Alert(cause="lr_too_high", title="Learning rate too high", confidence=0.9, severity="high",
                     evidence=evil, cycle=1, seen_at=0.0, kind=kind, candidates=evil).line()
        assert not any(ch in line for ch in ("\x1b", "\x07", "\x9b", "\u202e", "\n"))
        assert "\\x1b" in line and "NaN" in line


def test_watch_survives_a_rotated_truncated_or_removed_log(tmp_path):
    import shutil

    import pytest

    from advisor.watch import RunGone, Watcher

    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("step 1 loss 2.3\nstep 2 loss 2.1\n")
    w = Watcher(run, 0.5)
    assert w.step() == []
    (run / "train.log").write_text("step 1 loss 2.2\n")  # truncated and rewritten
    assert w.step() == []
    (run / "train.log").rename(run / "train.log.1")  # rotated: the new log's lines are read
    (run / "train.log").write_text("step 3 loss nan\n")
    alerts = w.step()
    assert any(a.kind == "symptom" and a.cause.startswith("nonfinite") for a in alerts)
    (run / "train.log").unlink()  # deleted while watched
    w.step()
    shutil.rmtree(run)  # the whole folder: a clear end, not a traceback
    with pytest.raises(RunGone, match="is gone"):
        w.step()
    w.close()
