"""Shared checks of the framework callbacks' run folders."""

from __future__ import annotations

import json
from pathlib import Path


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (Path(folder) / "tensors.jsonl").read_text().splitlines()]


def dynamics_stage_ran(folder: Path) -> bool:
    """``advisor diagnose`` on the folder (the CLI, JSON report) lists the Training dynamics stage as ran."""
    import contextlib
    import io

    from advisor.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["diagnose", str(folder), "--format", "json"])
    assert rc == 0, out.getvalue()[-2000:]
    report = json.loads(out.getvalue())
    ran = {c["stage"] for c in report["checks"] if c["status"] == "ran"}
    return "training_dynamics" in ran
