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
