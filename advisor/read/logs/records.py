"""What the log readers produce: bounded metric series and events, no judgement.

Every reader (text logs, CSV, JSONL, trainer_state.json, TensorBoard) feeds
``Collector.add_record`` / ``Collector.add_event``; the collector names each
key with one vocabulary (``classify_key``, advisor/read/logs/keys.py), keeps the points in bounded
buffers and handles runs that restart or resume inside one file.

Memory is bounded whatever the file size: a series keeps at most
``MAX_POINTS`` points (advisor/read/logs/buffer.py; when full, every second point is dropped and only
every 2nd, 4th, ... new point is kept), its exact count, first non-finite
point and extremes are kept on the side; events keep counts plus the first
``MAX_EVENTS``.
"""

from __future__ import annotations

import bisect
import math
from array import array
from dataclasses import dataclass, field
from collections.abc import Callable, Iterator, Sequence
from typing import Literal, NamedTuple

import numpy as np

from advisor.read.logs.buffer import Buffer
from advisor.read.logs.keys import KeyInfo, Split, classify_key, holds_val_and_test

MAX_EVENTS = 500
MAX_SERIES = 200
MAX_RESTARTS = 1000
#: records added column by column (``Collector.add_rows``) from this many on
BULK_ROWS = 16


class ColumnPart(NamedTuple):
    """Records that all hold ``keys`` (distinct, in this order), given column by column (float64 arrays; NaN for no
    step or epoch), one after another in the file (``Collector.add_columns``)."""

    keys: Sequence[str]
    columns: Sequence[np.ndarray]
    lines: np.ndarray
    steps: np.ndarray
    epochs: np.ndarray
    split: Split | None = None


def _series_points(
    parts: Sequence[tuple[ColumnPart, list[tuple[MetricSeries, int]]]], rank: np.ndarray
) -> Iterator[tuple[MetricSeries, np.ndarray, np.ndarray]]:
    """(series, its rows' places in line order, its values) for each series the parts' kept keys go to; ``rank``:
    the place of each row of the parts, taken one after another, in line order. A series several keys go to gets
    its values in line order, those of one row in the order of its keys (as ``add_record`` adds them)."""
    got: dict[int, tuple[MetricSeries, list[np.ndarray], list[np.ndarray]]] = {}
    start = 0
    for part, kept in parts:
        rows = rank[start : start + len(part.lines)]
        start += len(part.lines)
        for s, i in kept:
            entry = got.setdefault(id(s), (s, [], []))
            entry[1].append(rows)
            entry[2].append(part.columns[i])
    for s, rows_of, values_of in got.values():
        if len(rows_of) == 1:
            yield s, rows_of[0], values_of[0]
            continue
        rows, values = np.concatenate(rows_of), np.concatenate(values_of)
        order = np.argsort(rows, kind="stable")
        yield s, rows[order], values[order]


# -- bounded series (points in advisor/read/logs/buffer.py) -------------------------
#: (position kind: 0 step, 1 epoch only; whether positions are given; first and last position) of a batch of records
BatchPositions = tuple[int, bool, float, float]


def batch_positions(st: np.ndarray, ep: np.ndarray) -> BatchPositions | None:
    """What ``MetricSeries.add_many`` needs of a batch's positions (the same for every series of the batch), or None
    when the batch is not for it: steps on some records only, a position missing or going back."""
    nan_steps = np.isnan(st)
    if not nan_steps.any():
        kind, x = 0, st
    elif nan_steps.all():
        kind, x = 1, ep
    else:
        return None
    x_nan = np.isnan(x)
    if x_nan.all():
        return kind, False, math.nan, math.nan
    if x_nan.any() or (x.size > 1 and bool((np.diff(x) < 0).any())):
        return None
    return kind, True, float(x[0]), float(x[-1])


@dataclass
class MetricSeries:
    """One logged quantity of one file, in file order (resumed parts de-duplicated)."""

    key: KeyInfo
    raw_key: str
    path: str
    order: int  # order of first appearance in the file
    buf: Buffer = field(default_factory=Buffer)
    restarts: list[int] = field(default_factory=list)  # stored-point indices where a new run starts
    resumes: int = 0  # times a run resumed from an earlier step
    #: (epochs, steps) known from other series of the run, to put an epoch-only series on steps (set by merge)
    epoch_map: tuple[np.ndarray, np.ndarray] | None = None
    #: per position kind (0: step, 1: epoch only): last x seen and first x of the current run
    _last: list[float] = field(default_factory=lambda: [math.nan, math.nan])
    _first: list[float] = field(default_factory=lambda: [math.nan, math.nan])

    @property
    def name(self) -> str:
        return self.key.series

    def add(self, step: float, epoch: float, value: float, line: int) -> None:
        kind, x = (0, step) if step == step else (1, epoch)
        if x == x:
            if x < self._last[kind] and self.buf.n:
                self._went_back(kind, x)
            self._last[kind] = x
            first = self._first
            if first[kind] != first[kind]:
                first[kind] = x
        buf = self.buf
        # Buffer.add, inlined for the common case (a point not stored, or stored with room left)
        buf.count += 1
        if value - value != 0.0:  # NaN or +-inf
            buf.nonfinite += 1
            if buf.first_nonfinite is None:
                buf.first_nonfinite = (step, epoch, line)
        buf._phase += 1
        if buf._phase < buf.stride:
            return
        buf._phase = 0
        n = buf.n
        if n == len(buf._value):
            buf.reserve(n + 1)
        buf._step[n] = step
        buf._epoch[n] = epoch
        buf._value[n] = value
        buf._line[n] = line
        buf.n = n = n + 1
        if n >= buf.cap:
            buf.decimate()
            if self.restarts:  # the buffer kept every second point
                self.restarts = sorted({(r + 1) // 2 for r in self.restarts})

    def add_many(
        self,
        st: np.ndarray,
        ep: np.ndarray,
        values: np.ndarray,
        lines: np.ndarray,
        where: BatchPositions | None = None,
    ) -> bool:
        """Points in file order, exactly as ``add`` of each, in a few array operations. Only for points on one kind
        of position that never goes back (no restart, no resume): returns False, having done nothing, otherwise
        (the caller then adds them one by one). ``where``: ``batch_positions(st, ep)``, when the caller has it."""
        n = int(values.size)
        if where is None:
            where = batch_positions(st, ep)
            if where is None:
                return False
        kind, tracked, x_first, x_last = where
        if tracked:
            if x_first < self._last[kind] and self.buf.n:
                return False
            self._last[kind] = x_last
            first = self._first
            if first[kind] != first[kind]:
                first[kind] = x_first
        buf = self.buf
        buf.count += n
        finite = np.isfinite(values)
        if not finite.all():
            bad = np.flatnonzero(~finite)
            buf.nonfinite += int(bad.size)
            if buf.first_nonfinite is None:
                i = int(bad[0])
                buf.first_nonfinite = (float(st[i]), float(ep[i]), int(lines[i]))
        start = 0
        while True:  # the points Buffer.add would store: every stride-th, halving the buffer when full
            stride = buf.stride
            at = start + stride - buf._phase - 1
            if at >= n:
                buf._phase += n - start
                return True
            k = min(len(range(at, n, stride)), buf.cap - buf.n)
            stop = at + (k - 1) * stride + 1
            lo, hi = buf.n, buf.n + k
            buf.reserve(hi)
            buf._step[lo:hi] = array("d", st[at:stop:stride].tobytes())
            buf._epoch[lo:hi] = array("d", ep[at:stop:stride].tobytes())
            buf._value[lo:hi] = array("d", values[at:stop:stride].tobytes())
            buf._line[lo:hi] = array("q", lines[at:stop:stride].astype(np.int64, copy=False).tobytes())
            buf.n = hi
            last = stop - 1
            if hi < buf.cap:
                buf._phase = n - 1 - last
                return True
            buf.decimate()
            if self.restarts:  # the buffer kept every second point
                self.restarts = sorted({(r + 1) // 2 for r in self.restarts})
            buf._phase = 0
            start = last + 1

    def add_points(
        self, st: np.ndarray, ep: np.ndarray, values: np.ndarray, lines: np.ndarray, where: BatchPositions | None = None
    ) -> None:
        """Points in file order, exactly as ``add`` of each: by ``add_many`` where their positions allow (when only
        the first goes back, a new run or a resume, it is added alone and the others together)."""
        if where is None:
            where = batch_positions(st, ep)
        if where is not None:
            if self.add_many(st, ep, values, lines, where):
                return
            if st.size > 1:  # (add_many fails only there: the batch's positions go up)
                self.add(float(st[0]), float(ep[0]), float(values[0]), int(lines[0]))
                st, ep, values, lines = st[1:], ep[1:], values[1:], lines[1:]
                if self.add_many(st, ep, values, lines):
                    return
        for step, epoch, value, line in zip(st.tolist(), ep.tolist(), values.tolist(), lines.tolist()):
            self.add(step, epoch, value, line)

    def _went_back(self, kind: int, x: float) -> None:
        """A position below the last one: a new run from the beginning, or a resume from a checkpoint."""
        first = self._first[kind]
        if x <= first:  # a new run from the beginning: keep both
            if len(self.restarts) < MAX_RESTARTS:
                self.restarts.append(len(self.buf))
            self._first = [math.nan, math.nan]
        else:  # resumed from a checkpoint: the new lines win
            start = self.restarts[-1] if self.restarts else 0
            xs = self.buf._step if kind == 0 else self.buf._epoch  # (searched up to len(self.buf))
            keep = bisect.bisect_left(xs, x, start, len(self.buf))  # x is sorted within a run
            if len(self.buf) - keep <= 0.5 * (len(self.buf) - start):
                self.resumes += 1
                self.buf.truncate(keep)
            elif len(self.restarts) < MAX_RESTARTS:  # would drop most of the run: call it a new run
                self.restarts.append(len(self.buf))
                self._first = [math.nan, math.nan]

    def x_kind(self) -> Literal["step", "epoch", "index"]:
        steps, epochs, _, _ = self.buf.arrays()
        if steps.size and np.isfinite(steps).all():
            return "step"
        if epochs.size and np.isfinite(epochs).all():
            return "epoch"
        return "index"


@dataclass
class LogEvent:
    """Something a log said that is not a metric value: an overflow, a traceback, ..."""

    kind: Literal["overflow", "traceback", "nonfinite_message"]
    line: int
    step: float | None = None
    text: str = ""
    scale_before: float | None = None
    scale_after: float | None = None
    #: metric values were logged after it (a traceback the run survived: a warning's, an import fallback's)
    followed_by_points: bool = False


@dataclass
class LogRead:
    """Everything read from one file."""

    path: str
    formats: set[str] = field(default_factory=set)  # format families recognised, e.g. {"keyvalue", "deepspeed"}
    series: dict[str, MetricSeries] = field(default_factory=dict)
    events: list[LogEvent] = field(default_factory=list)
    event_counts: dict[str, int] = field(default_factory=dict)
    lines: int = 0
    bad_lines: int = 0  # lines that looked like metrics but could not be read
    bad_examples: list[tuple[int, str]] = field(default_factory=list)
    overlong_lines: int = 0
    encoding: str = "utf-8"
    problem: str | None = None  # why the file could not be used at all
    notes: list[str] = field(default_factory=list)
    last_step: float = math.nan
    #: optimizer steps per epoch as the log states them (a Keras progress bar's ``n/N``); None: not stated
    steps_per_epoch: int | None = None

    @property
    def usable(self) -> bool:
        return self.problem is None and (bool(self.series) or bool(self.event_counts))


class Collector:
    """Builds a ``LogRead``: the one way readers hand over what they found."""

    def __init__(self, path: str, fmt: str | None = None):
        self.read = LogRead(path=path)
        if fmt:
            self.read.formats.add(fmt)
        # steps counted inside each epoch (MindSpore LossMonitor, mmdet "iter"): found when the step falls back
        # while the epoch goes up; then global step = (epoch - first epoch) * steps per epoch + step
        self._prev: tuple[float, float] | None = None  # (epoch, step) of the last record with both
        self._first_epoch = math.nan
        self._min_step = math.inf
        self._max_step = -math.inf
        self._per_epoch: float | None = None
        #: split -> raw key -> its series (None: a key we do not track)
        self._by_key: dict[str | None, dict[str, MetricSeries | None]] = {}
        self._open_events: list[LogEvent] = []  # tracebacks not yet followed by a logged value
        #: called before anything is recorded (records, events, bad lines): a reader that holds records back
        #: (text.py's template rows) hands them over then, so that everything stays in file order
        self.before_change: Callable[[], None] | None = None
        #: (values, line, step as given, split) of the last ``add_record`` (bare.py compares rows of bare numbers
        #: with the records printed near them)
        self.last_record: tuple[dict[str, float], int, float | None, Split | None] | None = None

    def _global_step(self, step: float, epoch: float) -> float:
        if not (math.isfinite(epoch) and math.isfinite(step)) or epoch != int(epoch):
            return step
        if self._first_epoch != self._first_epoch:
            self._first_epoch = epoch
        if self._per_epoch is None:
            prev = self._prev
            if prev is not None and step <= prev[1] and epoch == prev[0] + 1:
                # (not higher: one step per epoch, or one print per epoch, repeats the same count)
                # 0-based counters end at per_epoch - 1; 1-based and interval-logged ones (50, 100, ... 500) at per_epoch
                self._per_epoch = self._max_step + max(0.0, 1.0 - self._min_step)
            else:
                self._min_step = min(self._min_step, step)
                self._max_step = max(self._max_step, step)
                self._prev = (epoch, step)
                return step
        return (epoch - self._first_epoch) * self._per_epoch + step

    def step_in_run(self, step: float, epoch: float) -> float | None:
        """The run's step of a step counted inside ``epoch`` (a message's ``epoch: 2 step: 1``), as the records
        so far count them, without recording anything; None when the steps per epoch are not known yet."""
        first = self._first_epoch if self._first_epoch == self._first_epoch else min(epoch, 1.0)
        if epoch <= first:
            return step
        if self._per_epoch is None:
            return None
        return (epoch - first) * self._per_epoch + step

    def _global_steps(self, st: np.ndarray, ep: np.ndarray) -> np.ndarray:
        """``_global_step`` of each (step, epoch) row in order (rows without both keep their step), as arrays."""
        both = np.isfinite(st) & np.isfinite(ep)
        both &= ep == np.floor(ep)
        rows = np.flatnonzero(both)
        if rows.size == 0:
            return st
        out = st.copy()
        s, e = st[rows], ep[rows]
        if self._first_epoch != self._first_epoch:
            self._first_epoch = float(e[0])
        start = 0
        if self._per_epoch is None:
            prev_s = np.concatenate(([self._prev[1] if self._prev else math.nan], s[:-1]))
            prev_e = np.concatenate(([self._prev[0] if self._prev else math.nan], e[:-1]))
            falls = np.flatnonzero((s <= prev_s) & (e == prev_e + 1))  # the counter restarts as the epoch goes up
            start = int(falls[0]) if falls.size else s.size
            if start:
                self._min_step = min(self._min_step, float(s[:start].min()))
                self._max_step = max(self._max_step, float(s[:start].max()))
                self._prev = (float(e[start - 1]), float(s[start - 1]))
            if start == s.size:
                return out
            self._per_epoch = self._max_step + max(0.0, 1.0 - self._min_step)
        out[rows[start:]] = (e[start:] - self._first_epoch) * self._per_epoch + s[start:]
        return out

    def add_record(
        self,
        values: dict[str, float],
        line: int,
        step: float | None = None,
        epoch: float | None = None,
        split: Split | None = None,
    ) -> bool:
        """One logged record: metric values at a step/epoch. Returns whether anything was kept."""
        if self.before_change is not None:
            self.before_change()
        self.last_record = (values, line, step, split)
        if step is not None and epoch is not None and step == step and epoch == epoch:
            step = self._global_step(float(step), float(epoch))
        st = math.nan if step is None else float(step)
        ep = math.nan if epoch is None else float(epoch)
        kept = False
        if split is None and len(values) > 2 and holds_val_and_test(values):
            # ``Val Acc 0.43 | Test Acc 0.45``: two held-out sets on one line; the test one is a split of its own
            test = {k: v for k, v in values.items() if k[:4].lower() == "test"}
            values = {k: v for k, v in values.items() if k not in test}
            kept = self.add_record(test, line, step, epoch, "test")
            self.last_record = (values, line, step, split)
        cache = self._by_key.get(split)
        if cache is None:
            cache = self._by_key[split] = {}
        for raw, val in values.items():
            s = cache.get(raw, self)
            if s is self:
                s = cache[raw] = self._series_for(raw, split)
            if s is not None:
                s.add(st, ep, val, line)
                kept = True
        if kept and st == st:
            self.read.last_step = st
        if kept:
            self._points_followed()
        return kept

    def add_columns(
        self,
        keys: Sequence[str],
        columns: Sequence[np.ndarray],
        lines: np.ndarray,
        steps: np.ndarray,
        epochs: np.ndarray,
        split: Split | None = None,
    ) -> bool:
        """Records that all hold ``keys`` (distinct, in this order), one after another, given column by column
        (float64 arrays; NaN for no step or epoch): exactly as ``add_record`` of each row. Returns whether any
        value was kept."""
        kept = self._kept_series(keys, split)
        if not len(lines):
            return False
        self._last_row(ColumnPart(keys, columns, lines, steps, epochs, split))
        if not kept:
            return False
        read = self.read
        if len(lines) < BULK_ROWS:
            line_list, value_lists = lines.tolist(), [c.tolist() for c in columns]
            for j, (step, epoch) in enumerate(zip(steps.tolist(), epochs.tolist())):
                if step == step and epoch == epoch:
                    step = self._global_step(step, epoch)
                for s, i in kept:
                    s.add(step, epoch, value_lists[i][j], line_list[j])
                if step == step:
                    read.last_step = step
        else:  # each series in a few array operations where its positions allow
            st = self._global_steps(steps, epochs)
            where = batch_positions(st, epochs)
            for s, i in kept:
                s.add_points(st, epochs, columns[i], lines, where)
            finite = st[~np.isnan(st)]
            if finite.size:
                read.last_step = float(finite[-1])
        self._points_followed()
        return True

    def add_column_parts(self, parts: Sequence[ColumnPart]) -> list[bool]:
        """Batches of ``add_columns`` whose rows interleave in the file (the lines of each go up; ``parts`` in the
        order of their first lines; rows are recorded in the order of their lines), each series' points in a few
        array operations: exactly as ``add_record`` of each row in line order. Returns, for each part, whether any
        value was kept."""
        if len(parts) == 1:
            return [self.add_columns(*parts[0])]
        kept = [self._kept_series(p.keys, p.split) for p in parts]
        self._last_row(max(parts, key=lambda p: int(p.lines[-1])))
        active = [(p, k) for p, k in zip(parts, kept) if k]
        if active:
            lines = np.concatenate([p.lines for p, _ in active])
            order = np.argsort(lines, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)  # (each row's place in line order)
            epochs = np.concatenate([p.epochs for p, _ in active])[order]
            st = self._global_steps(np.concatenate([p.steps for p, _ in active])[order], epochs)
            lines = lines[order]
            for s, rows, values in _series_points(active, rank):
                s.add_points(st[rows], epochs[rows], values, lines[rows])
            finite = st[~np.isnan(st)]
            if finite.size:
                self.read.last_step = float(finite[-1])
            self._points_followed()
        return [bool(k) for k in kept]

    def _kept_series(self, keys: Sequence[str], split: Split | None) -> list[tuple[MetricSeries, int]]:
        """The series each of ``keys`` goes to (made on first use), with the key's index; keys not kept left out."""
        cache = self._by_key.get(split)
        if cache is None:
            cache = self._by_key[split] = {}
        kept: list[tuple[MetricSeries, int]] = []
        for i, raw in enumerate(keys):
            s = cache.get(raw, self)
            if s is self:
                s = cache[raw] = self._series_for(raw, split)
            if s is not None:
                kept.append((s, i))
        return kept

    def _last_row(self, part: ColumnPart) -> None:
        """``last_record`` as ``add_record`` of the last row of ``part`` would leave it."""
        last_step = float(part.steps[-1])
        self.last_record = (
            {raw: float(c[-1]) for raw, c in zip(part.keys, part.columns)},
            int(part.lines[-1]),
            last_step if last_step == last_step else None,
            part.split,
        )

    def _points_followed(self) -> None:
        """Values were logged: the tracebacks before them did not end the run."""
        if self._open_events:
            for ev in self._open_events:
                ev.followed_by_points = True
            self._open_events.clear()

    def add_out_of_order(self, raw: str, split: Split | None, held: Buffer, with_steps: bool) -> bool:
        """The points of ``held`` (value, line; steps if ``with_steps``), values of ``raw`` that a reader held back
        until it knew their name (bare.py): the series is built again with its own points and these in line order
        (file order), so that restarts and resumes are found as if they had been read in turn; a series already
        thinned gets them after its own. ``held`` may be thinned: its exact count, non-finite count and first
        non-finite point are added. Returns whether any was kept."""
        if not held.n:
            return False
        if self.before_change is not None:
            self.before_change()
        cache = self._by_key.setdefault(split, {})
        s = cache.get(raw, self)
        if s is self:
            s = cache[raw] = self._series_for(raw, split)
        if s is None:
            return False
        st, _, val, ln = held.arrays()
        if not with_steps:
            st = np.full(st.size, math.nan)
        points = list(zip(st.tolist(), [math.nan] * st.size, val.tolist(), ln.tolist()))
        if s.buf.n and s.buf.stride == 1:
            own = list(zip(*(a.tolist() for a in s.buf.arrays())))
            fresh = MetricSeries(key=s.key, raw_key=s.raw_key, path=s.path, order=s.order, resumes=s.resumes)
            self.read.series[s.key.series] = fresh
            for keys in self._by_key.values():
                for k, v in keys.items():
                    if v is s:
                        keys[k] = fresh
            s, points = fresh, sorted([*own, *points], key=lambda p: p[3])
        for step, epoch, value, line in points:
            s.add(step, epoch, value, line)
        if held.stride > 1:  # the points held back were thinned: their exact counts
            buf = s.buf
            buf.count += held.count - held.n
            buf.nonfinite += held.nonfinite - int((~np.isfinite(val)).sum())
            first = held.first_nonfinite
            if first is not None and (buf.first_nonfinite is None or first[2] < buf.first_nonfinite[2]):
                buf.first_nonfinite = (first[0] if with_steps else math.nan, math.nan, first[2])
        return True

    def _series_for(self, raw: str, split: Split | None) -> MetricSeries | None:
        info = classify_key(raw)
        if info is None:
            return None
        if split in ("eval", "test") and info.split != split:
            info = KeyInfo(
                series=f"{split}/" + info.series.split("/", 1)[1], split=split, metric=info.metric, base=info.base
            )
        series = self.read.series
        s = series.get(info.series)
        if s is None:
            if len(series) >= MAX_SERIES:
                return None
            s = series[info.series] = MetricSeries(key=info, raw_key=raw, path=self.read.path, order=len(series))
        return s

    def add_event(self, event: LogEvent) -> None:
        if self.before_change is not None:
            self.before_change()
        counts = self.read.event_counts
        counts[event.kind] = counts.get(event.kind, 0) + 1
        if event.step is None and self.read.last_step == self.read.last_step:
            event.step = self.read.last_step
        if len(self.read.events) < MAX_EVENTS:
            self.read.events.append(event)
            if event.kind == "traceback":
                self._open_events.append(event)

    def bad(self, line: int, text: str) -> None:
        if self.before_change is not None:
            self.before_change()
        self.read.bad_lines += 1
        if len(self.read.bad_examples) < 5:
            self.read.bad_examples.append((line, text[:120]))
