"""advisor/follow.py: a log read incrementally by a reader process gives what reading the whole file gives."""

from __future__ import annotations

import math
import os
import shutil

import numpy as np
import pytest

from advisor import follow
from advisor.read.logs import read_file

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the incremental reader needs os.fork")


def nan_free(a: np.ndarray) -> list:
    return np.where(np.isnan(a), -1e300, a).tolist()  # NaN == NaN for the comparison


def canon(read) -> dict:
    """Everything a LogRead holds, in comparable form."""
    series = {}
    for name, s in read.series.items():
        steps, epochs, values, lines = s.buf.arrays()
        series[name] = (s.raw_key, s.order, s.restarts, s.resumes, *map(nan_free, (steps, epochs, values)),
                        lines.tolist())
    return {"series": series, "events": [(e.kind, e.line, e.text) for e in read.events],
            "counts": dict(read.event_counts), "lines": read.lines, "bad": (read.bad_lines, read.bad_examples),
            "formats": sorted(read.formats), "overlong": read.overlong_lines, "problem": read.problem}


def lines(start: int, stop: int, eol: str = "\n") -> str:
    out = []
    for i in range(start, stop):
        out.append(f"epoch {i // 100} step {i} loss {2 * math.exp(-i / 500):.5f} lr 0.001{eol}")
        if i % 97 == 0:
            out.append(f"eval step {i} val_loss {1.5 * math.exp(-i / 600):.4f}{eol}")
    return "".join(out)


@pytest.fixture
def followers(monkeypatch):
    monkeypatch.setattr(follow, "FOLLOW_MIN_BYTES", 0)
    f = follow.Followers()
    yield f
    f.close()


def test_snapshots_of_a_growing_log_equal_whole_reads(tmp_path, followers):
    log = tmp_path / "train.log"
    log.write_text(lines(0, 300) + "Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                   "ValueError: boom\n" + lines(300, 400, "\r\n"), newline="")
    assert canon(followers.read(log, "train.log")) == canon(read_file(log, "train.log"))
    with log.open("a", newline="") as fh:
        fh.write(lines(400, 600) + "step 600 loss nan\n" + "step 601 loss 0.5")  # the last line half written
    snap = followers.read(log, "train.log")
    done = tmp_path / "done" / "train.log"
    done.parent.mkdir()
    shutil.copy(log, done)
    with done.open("r+b") as fh:  # the file up to its last complete line
        data = fh.read()
        fh.seek(0)
        fh.truncate()
        fh.write(data[:data.rindex(b"\n") + 1])
    assert canon(snap) == canon(read_file(done, "train.log"))
    assert snap.series["train/loss"].buf.arrays()[2][-1] != snap.series["train/loss"].buf.arrays()[2][-1]  # NaN
    with log.open("a") as fh:
        fh.write("1\n")
    assert canon(followers.read(log, "train.log")) == canon(read_file(log, "train.log"))


def test_a_replaced_log_is_read_again(tmp_path, followers):
    log = tmp_path / "train.log"
    log.write_text(lines(0, 200))
    followers.read(log, "train.log")
    log.unlink()
    log.write_text(lines(1000, 1050))  # a new file (another inode), shorter
    assert canon(followers.read(log, "train.log")) == canon(read_file(log, "train.log"))


def test_small_logs_are_read_directly(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(lines(0, 10))
    f = follow.Followers()
    assert f.read(log, "train.log") is None  # below FOLLOW_MIN_BYTES: read_file reads it
    f.close()
