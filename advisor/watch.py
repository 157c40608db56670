"""``advisor watch RUN``: follow a run folder while it trains and say when a cause becomes likely.

The watcher polls the folder (sizes and modification times of its files, read
with ``os.stat``; nothing is ever written into the folder), follows what was
appended (new log lines, metrics rows, ``tensors.jsonl`` records), and
re-diagnoses the run when something new arrived, at most one diagnosis at a
time: while one runs, further changes are gathered and the next diagnosis
reads the folder as it is then, so a slow diagnosis never builds a backlog
(it always reads the newest data). A cause is announced once, the first time
its confidence reaches the alert level. An urgent symptom (the loss turned
NaN/Inf or explodes, the loss scale collapsed, an exception) is announced
once, the first time it appears, with the likeliest causes whatever their
confidence: ``--alert`` sets the level for causes only.

Confidence levels: ``low`` = 0.3, ``medium`` = 0.5 (the report's threshold),
``high`` = 0.8; a number in [0, 1] is accepted too.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.walk import walk
from advisor.inventory import SKIP_DIRS

LEVELS = {"low": 0.3, "medium": 0.5, "high": 0.8}
#: a text file whose last line is still being written is diagnosed anyway after this long
PARTIAL_LINE_WAIT_S = 1.0
#: files followed line by line (logs, metrics, tensors.jsonl); others only count as changed
LINE_SUFFIXES = {".log", ".txt", ".out", ".err", ".jsonl", ".csv", ""}


def level(value: str) -> float:
    """``high`` -> 0.8, ``0.65`` -> 0.65; ValueError for anything else."""
    if value in LEVELS:
        return LEVELS[value]
    try:
        v = float(value)
    except ValueError:
        v = math.nan
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"confidence level must be low, medium, high or a number in [0, 1], got {value!r}")
    return v


#: symptoms announced the moment they appear, whatever the confidence of their causes: the run is being lost
URGENT_SYMPTOMS = frozenset(
    {
        "nonfinite_loss_at_start",
        "nonfinite_loss",
        "nonfinite_eval_loss",
        "loss_explodes",
        "loss_scale_collapses",
        "crash",
    }
)
#: candidate causes named in a symptom alert
ALERT_CANDIDATES = 3


@dataclass
class Alert:
    """A cause whose confidence reached the alert level for the first time, or an urgent symptom (``kind``)."""

    cause: str  # the cause id, or the symptom id for a symptom alert
    title: str
    confidence: float
    severity: str
    evidence: str  # a cause's first evidence; a symptom's sentence
    cycle: int  # the diagnosis that raised it (1 = the first)
    seen_at: float  # time.monotonic() when the diagnosis that raised it started
    kind: str = "cause"  # "cause" or "symptom"
    candidates: str = ""  # for a symptom: the likeliest causes, 'lr_too_high 41%, fp_overflow 20%'

    def line(self) -> str:
        """One terminal line: what came from the run (metric names, log text) has its terminal escapes, C1
        controls, bidi overrides and newlines written as visible escapes (advisor.read.safe.shown)."""
        from advisor.read.safe import shown

        if self.kind == "symptom":
            then = f" Candidates: {self.candidates}." if self.candidates else ""
            text = f"advisor watch: symptom {self.cause}: {self.evidence}{then}"
        else:
            ev = f": {self.evidence}" if self.evidence else ""
            text = f"advisor watch: {self.cause} {self.confidence:.0%} ({self.severity}) {self.title}{ev}"
        return shown(text, newlines=False)


class RunGone(Exception):
    """The watched run folder no longer exists."""


@dataclass
class FileState:
    size: int = 0
    mtime_ns: int = 0
    lines: int = 0  # complete lines seen so far
    ends_with_newline: bool = True


@dataclass
class Cycle:
    """One diagnosis: when it started and ended, what it had seen, what it raised."""

    number: int
    started: float
    ended: float
    new_lines: int
    alerts: list[Alert] = field(default_factory=list)


class Watcher:
    """Follow ``run``; ``step()`` polls once and diagnoses when something changed."""

    def __init__(
        self,
        run: str | os.PathLike,
        alert: float = LEVELS["high"],
        *,
        rules: Iterable[str] = (),
        only_rules: bool = False,
        params: dict | None = None,
        options: dict | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.run = Path(run)
        if not self.run.is_dir():
            raise ValueError(f"RUN '{run}' is not a folder")
        self.alert = float(alert)
        self._diag_kwargs: dict[str, Any] = {
            "rules": tuple(rules),
            "only_rules": only_rules,
            "params": params,
            "options": options,
        }
        self._clock = clock
        self.files: dict[str, FileState] = {}
        self.alerted: dict[str, Alert] = {}
        self.cycles: list[Cycle] = []
        self.report: Any = None
        self._pending_lines = 0
        self._changed = True  # the first poll always diagnoses
        self._partial_since: float | None = None
        from advisor.follow import Followers

        self._followers = Followers()  # large text logs: read incrementally, not again at every diagnosis

    def close(self) -> None:
        """Stop the readers of followed logs."""
        self._followers.close()

    # -- following ---------------------------------------------------------
    def poll(self) -> int:
        """Look at the folder once; returns the number of complete lines appended since the last poll."""
        seen: set[str] = set()
        new_lines = 0
        for dirpath, dirnames, filenames in walk(self.run):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            for name in filenames:
                full = os.path.join(dirpath, name)
                try:
                    st = os.stat(full, follow_symlinks=False)
                except OSError:
                    continue
                rel = os.path.relpath(full, self.run)
                seen.add(rel)
                old = self.files.get(rel)
                if old is not None and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns:
                    continue
                self._changed = True
                state = old if old is not None and st.st_size >= old.size else FileState()
                if os.path.splitext(name)[1].lower() in LINE_SUFFIXES:
                    new_lines += self._follow(full, state, st.st_size)
                state.size, state.mtime_ns = st.st_size, st.st_mtime_ns
                self.files[rel] = state
        for rel in set(self.files) - seen:  # removed (a rotated log)
            del self.files[rel]
            self._changed = True
        self._pending_lines += new_lines
        return new_lines

    @staticmethod
    def _follow(path: str, state: FileState, size: int) -> int:
        """Count the complete lines appended to ``path`` since ``state.size`` (reads only the new bytes)."""
        if size <= state.size:
            return 0
        n = 0
        last = b""
        try:
            with open(path, "rb") as fh:
                fh.seek(state.size)
                left = size - state.size
                while left > 0:  # in chunks: the first look at a large log holds no more than one in memory
                    data = fh.read(min(left, 1 << 20))
                    if not data:
                        break
                    n += data.count(b"\n")
                    last = data[-1:]
                    left -= len(data)
        except OSError:
            return 0
        state.lines += n
        state.ends_with_newline = last == b"\n" if last else state.ends_with_newline
        return n

    def _settled(self) -> bool:
        """No text file ends in the middle of a line (or one has for PARTIAL_LINE_WAIT_S)."""
        if all(s.ends_with_newline or s.size == 0 for s in self.files.values()):
            self._partial_since = None
            return True
        now = self._clock()
        if self._partial_since is None:
            self._partial_since = now
        return now - self._partial_since >= PARTIAL_LINE_WAIT_S

    # -- diagnosing --------------------------------------------------------
    def diagnose(self) -> list[Alert]:
        """Diagnose the folder as it is now; returns the causes that reached the alert level for the first time."""
        from advisor.diagnosis import diagnose

        started = self._clock()
        self._changed = False
        lines, self._pending_lines = self._pending_lines, 0
        from advisor.read import logs

        logs.override = self._followers.read
        try:
            self.report = diagnose(self.run, **self._diag_kwargs)
        finally:
            logs.override = None
        number = len(self.cycles) + 1
        new = []
        candidates = ", ".join(f"{c.id} {c.confidence:.0%}" for c in self.report.causes[:ALERT_CANDIDATES])
        for sym in self.report.summary.symptoms:
            key = "symptom:" + sym.id
            if sym.id in URGENT_SYMPTOMS and key not in self.alerted:
                a = Alert(
                    cause=sym.id,
                    title=sym.title,
                    confidence=1.0,
                    severity="high",
                    evidence=sym.text,
                    cycle=number,
                    seen_at=started,
                    kind="symptom",
                    candidates=candidates,
                )
                self.alerted[key] = a
                new.append(a)
        for c in self.report.causes:
            if c.confidence >= self.alert and c.id not in self.alerted:
                ev = c.evidence[0].text if c.evidence else ""
                a = Alert(
                    cause=c.id,
                    title=c.title,
                    confidence=c.confidence,
                    severity=c.severity,
                    evidence=ev,
                    cycle=number,
                    seen_at=started,
                )
                self.alerted[c.id] = a
                new.append(a)
        self.cycles.append(Cycle(number=number, started=started, ended=self._clock(), new_lines=lines, alerts=new))
        return new

    def step(self) -> list[Alert]:
        """Poll once; diagnose if something changed and no line is half written. RunGone when the run folder
        was removed (or replaced by a file) while watched."""
        if not os.path.isdir(self.run):
            raise RunGone(f"the run folder '{self.run}' is gone (removed or moved while watched); the watch ended")
        self.poll()
        if self._changed and self._settled():
            from advisor.errors import UsageError

            try:
                return self.diagnose()
            except UsageError:
                if not os.path.isdir(self.run):  # removed between the look and the diagnosis
                    raise RunGone(
                        f"the run folder '{self.run}' is gone (removed or moved while watched); the watch ended"
                    ) from None
                raise
        return []

    def highest(self) -> float:
        """The highest confidence of any cause in the latest diagnosis (0 before the first)."""
        if self.report is None or not self.report.causes:
            return 0.0
        return max(c.confidence for c in self.report.causes)


def watch(
    run: str | os.PathLike,
    *,
    alert: float,
    exit_on: float | None = None,
    once: bool = False,
    interval: float = 0.5,
    idle_exit: float | None = None,
    on_alert: Callable[[Alert], None] = print,
    on_cycle: Callable[[Cycle], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    **kwargs: Any,
) -> int:
    """Follow ``run`` until stopped; returns 1 when a cause reached ``exit_on``, else 0.

    ``once``: diagnose a single time (for cron) and announce every cause at or
    above ``alert``. ``idle_exit``: stop when nothing changed for that many
    seconds (the run ended). ``should_stop``: polled between cycles.
    """
    w = Watcher(run, alert, **kwargs)
    try:
        if once:
            w.poll()
            for a in w.diagnose():
                on_alert(a)
            return 1 if exit_on is not None and w.highest() >= exit_on else 0
        last_change = time.monotonic()
        while not should_stop():
            before = len(w.cycles)
            for a in w.step():
                on_alert(a)
            if len(w.cycles) > before:
                last_change = time.monotonic()
                if on_cycle is not None:
                    on_cycle(w.cycles[-1])
                if exit_on is not None and w.highest() >= exit_on:
                    return 1
            elif idle_exit is not None and time.monotonic() - last_change >= idle_exit:
                return 0
            time.sleep(interval)
        return 0
    finally:
        w.close()
