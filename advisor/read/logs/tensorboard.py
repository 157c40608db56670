"""TensorBoard event files (``events.out.tfevents.*``) -> scalar series.

Needs the optional extra ``pip install 'accuracy-advisor[tensorboard]'`` (the
``tensorboard`` package); without it the file is reported as unreadable with
that instruction, and the rest of the diagnosis goes on.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable
from pathlib import PurePosixPath, Path
from typing import Any

import numpy as np

from advisor.read.logs.buffer import Buffer
from advisor.read.logs.keys import holds_val_and_test
from advisor.read.logs.records import Collector, ColumnPart, LogRead, MetricSeries
from advisor.read.tfrecord import FramingError, framed_stream

#: the start of an event file's name: ``events.out.tfevents.<unix time>.<host>.<pid>.<n>``
EVENTS_PREFIX = "events.out.tfevents."
#: events held before they are recorded
MAX_HELD = 65536
#: TensorProto dtypes (DT_FLOAT, DT_DOUBLE) whose scalar is read from its value field, and that field
_BY_VALUE = {1: "float_val", 2: "double_val"}
#: a record longer than this is not given to the loader, which would hold it whole (an image or a graph of a
#: few MB is an event; a length of gigabytes is damage)
MAX_EVENT_BYTES = 256 << 20

MISSING = (
    "TensorBoard event file, but the optional 'tensorboard' package is not installed: "
    "pip install 'accuracy-advisor[tensorboard]'"
)


def available() -> bool:
    try:
        import tensorboard.backend.event_processing.event_file_loader  # noqa: F401
    except ImportError:
        return False
    return True


def read_events(path: Path, shown: str) -> LogRead:
    """The scalars of an event file, read from each event's summary values as tensorboard's ``EventAccumulator``
    reads them: the events as written (``LegacyEventFileLoader``, not the loader that first converts each scalar
    to a tensor), a scalar from its ``simple_value`` field, a tensor value (TensorFlow 2's scalars) when it holds one
    number."""
    col = Collector(shown, "tensorboard")
    try:
        from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
    except ImportError:
        col.read.problem = MISSING
        return col.read
    framed, why_stopped = _framed_records(path)
    n = 0
    batch = _Batch(col)
    try:  # the loader is asked for the records the framing holds, no more (it would read any length it is told)
        for event in itertools.islice(LegacyEventFileLoader(str(path)).Load(), framed):
            n += 1
            if event.HasField("summary"):
                values = _scalars(event.summary.value)
                if values:
                    batch.add(values, n, float(event.step))
        batch.flush()
    except Exception as exc:  # noqa: BLE001 - a corrupt event file is the user's data, not our bug
        batch.flush()
        if not col.read.series:
            col.read.problem = f"could not read TensorBoard events after record {n}: {type(exc).__name__}: {exc}"
        else:
            col.read.notes.append(f"stopped after record {n}: {type(exc).__name__}: {exc}")
    col.read.lines = n
    _note_stop(col.read, n, framed, why_stopped)
    return col.read


class _Batch:
    """Records of events held, grouped by their tags, and handed to the collector column by column
    (``Collector.add_column_parts``: as ``add_record`` of each event in turn)."""

    def __init__(self, col: Collector) -> None:
        self.col = col
        self.rows = 0
        #: tags of an event -> its events' lines (the event's number), steps and one list of values for each tag
        self.parts: dict[tuple[str, ...], tuple[list[int], list[float], list[list[float]]]] = {}

    def add(self, values: dict[str, float], line: int, step: float) -> None:
        tags = tuple(values)
        if len(tags) > 2 and holds_val_and_test(values):  # (two held-out sets: add_record splits them)
            self.flush()
            self.col.add_record(values, line, step=step)
            return
        part = self.parts.get(tags)
        if part is None:
            part = self.parts[tags] = ([], [], [[] for _ in tags])
        part[0].append(line)
        part[1].append(step)
        for column, value in zip(part[2], values.values()):
            column.append(value)
        self.rows += 1
        if self.rows >= MAX_HELD:
            self.flush()

    def flush(self) -> None:
        if not self.parts:
            return
        held = sorted(self.parts.items(), key=lambda kv: kv[1][0][0])  # (in the order of their first events)
        self.parts, self.rows = {}, 0
        self.col.add_column_parts(
            [
                ColumnPart(
                    tags,
                    [np.array(c, dtype=np.float64) for c in columns],
                    np.array(lines, dtype=np.int64),
                    np.array(steps, dtype=np.float64),
                    np.full(len(lines), math.nan),
                )
                for tags, (lines, steps, columns) in held
            ]
        )


def _scalars(values: Iterable) -> dict[str, float]:
    """tag -> number of the summary values that hold one number (a later value of a tag wins)."""
    out: dict[str, float] = {}
    for v in values:
        kind = v.WhichOneof("value")
        if kind == "simple_value":
            out[v.tag] = v.simple_value  # (a float32, as a float)
        elif kind == "tensor":
            number = _tensor_number(v.tensor)
            if number is not None:
                out[v.tag] = number
    return out


def _tensor_number(tensor: Any) -> float | None:
    """The number a tensor of one element holds, as ``tensor_util.make_ndarray`` reads it; None for any other
    tensor. A float32 or float64 scalar given by value (how TensorFlow writes one) is read from that field."""
    dtype = tensor.dtype
    if dtype in _BY_VALUE and not tensor.tensor_content and all(d.size == 1 for d in tensor.tensor_shape.dim):
        given = getattr(tensor, _BY_VALUE[dtype])
        if len(given) == 1:
            return float(given[0])
    from tensorboard.util import tensor_util

    arr = tensor_util.make_ndarray(tensor)
    if arr.size == 1 and arr.dtype.kind in "fiu":
        return float(arr.reshape(-1)[0])
    return None


def _note_stop(read: LogRead, n: int, framed: int, why_stopped: str | None) -> None:
    """Say where and why the reading of ``n`` of the ``framed`` records stopped, if it did."""
    if read.problem is not None:
        return
    if n == 0 and why_stopped is not None:
        read.problem = why_stopped
        return
    if framed > n and not read.notes:  # the loader stops quietly at a bad CRC
        read.notes.append(
            f"read {n} of the {framed} records: record {n + 1} is corrupt (its checksum does not "
            "match); the records after it were not read"
        )
    elif why_stopped is not None:
        read.notes.append(why_stopped)
    if n == 0:
        read.problem = "no TensorBoard event could be read (an empty or truncated event file)"


def _framed_records(path: Path, limit: int = 10_000_000) -> tuple[int, str | None]:
    """How many records the file's TFRecord framing holds (length, length CRC, data, data CRC), counted by their
    lengths only (more than the loader read means it stopped at a corrupt record), and why the count stopped before
    the end of the file, if it did: a length beyond the file or over MAX_EVENT_BYTES, a run of empty records, the
    ``limit``."""
    count = 0
    try:
        with open(path, "rb") as fh:
            for rec in framed_stream(fh, max_record=0):
                if rec.length > MAX_EVENT_BYTES:
                    return count, (
                        f"record {rec.index} announces {rec.length:,} bytes, over the {MAX_EVENT_BYTES >> 20} MiB "
                        "advisor reads of one event; it and the records after it were not read"
                    )
                if count >= limit:
                    return count, f"read the first {limit:,} records only (advisor's limit per file)"
                count += 1
    except FramingError as exc:
        return count, str(exc)
    except OSError:
        return 0, None
    return count, None


def _written(shown: str) -> tuple[int, str, int]:
    """An event file's order of writing, from its name: the unix time, then the host and pid, then the
    writer's counter (``.0``, ``.1``: Lightning's second ``Trainer`` call in the same second)."""
    rest = PurePosixPath(shown).name[len(EVENTS_PREFIX) :]
    stamp, _, tail = rest.partition(".")
    head, _, counter = tail.rpartition(".")
    return (int(stamp) if stamp.isdigit() else 0, head, int(counter) if counter.isdigit() else 0)


def join_folders(reads: list[LogRead]) -> list[LogRead]:
    """The event files of one folder read as one run, in the order they were written; other reads unchanged.

    A logger writes a new event file into its folder each time the writer is opened again: Lightning's default
    TensorBoardLogger keeps one ``lightning_logs/version_N/`` per logger, and ``trainer.fit`` then
    ``trainer.validate`` or ``trainer.test`` leave two files there, the second holding the evaluation after
    training. A later file's points continue each series from after the last step already read (a point at a
    step already read is the same step logged again, and is left out)."""
    groups: dict[str, list[LogRead]] = {}
    for read in reads:
        name = PurePosixPath(read.path)
        if read.problem is None and "tensorboard" in read.formats and name.name.startswith(EVENTS_PREFIX):
            groups.setdefault(str(name.parent), []).append(read)
    joined = {id(g[0]): _join(sorted(g, key=lambda r: _written(r.path))) for g in groups.values() if len(g) > 1}
    skip = {id(r) for g in groups.values() if len(g) > 1 for r in g}
    out: list[LogRead] = []
    for read in reads:
        if id(read) in joined:
            out.append(joined[id(read)])
        elif id(read) not in skip:
            out.append(read)
    return out


def _join(files: list[LogRead]) -> LogRead:
    first = files[0]
    points: dict[str, list[tuple[float, float, float, int]]] = {}
    model: dict[str, MetricSeries] = {}
    for read in files:
        for name, s in read.series.items():
            kept = points.setdefault(name, [])
            model.setdefault(name, s)
            new = [(float(st), float(ep), float(v), int(ln)) for st, ep, v, ln in zip(*s.buf.arrays(), strict=True)]
            if kept and new and new[0][2] == kept[-1][2] and new[0][0] > kept[-1][0]:
                # the same value again: the final evaluation (``trainer.validate`` after ``fit``) of the weights
                # the last epoch's validation already scored (logged one step earlier): kept once, at the later step
                kept.pop()
            last = kept[-1][0] if kept else -math.inf
            kept.extend(p for p in new if p[0] > last)
    series: dict[str, MetricSeries] = {}
    for name, pts in points.items():
        s = model[name]
        into = series[name] = MetricSeries(
            key=s.key, raw_key=s.raw_key, path=s.path, order=s.order, buf=Buffer(cap=s.buf.cap)
        )
        for p in pts:
            into.add(*p)
    later = ", ".join(PurePosixPath(r.path).name for r in files[1:])
    return dataclasses.replace(
        first,
        series=series,
        lines=sum(r.lines for r in files),
        notes=[*first.notes, f"continued by {later} (written later into the same folder: one run)"],
        formats=set().union(*(r.formats for r in files)),
    )
