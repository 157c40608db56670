"""TensorBoard event files (``events.out.tfevents.*``) -> scalar series.

Needs the optional extra ``pip install 'accuracy-advisor[tensorboard]'`` (the
``tensorboard`` package); without it the file is reported as unreadable with
that instruction, and the rest of the diagnosis goes on.
"""

from __future__ import annotations

import dataclasses
import math
import os
import struct
from pathlib import PurePosixPath, Path

from advisor.read.logs.buffer import Buffer
from advisor.read.logs.records import Collector, LogRead, MetricSeries

#: the start of an event file's name: ``events.out.tfevents.<unix time>.<host>.<pid>.<n>``
EVENTS_PREFIX = "events.out.tfevents."

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
    col = Collector(shown, "tensorboard")
    try:
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
        from tensorboard.util import tensor_util
    except ImportError:
        col.read.problem = MISSING
        return col.read
    n = 0
    try:
        for event in EventFileLoader(str(path)).Load():
            n += 1
            if not event.HasField("summary"):
                continue
            values: dict[str, float] = {}
            for v in event.summary.value:
                kind = v.WhichOneof("value")
                if kind == "simple_value":
                    values[v.tag] = float(v.simple_value)
                elif kind == "tensor":
                    arr = tensor_util.make_ndarray(v.tensor)
                    if arr.size == 1 and arr.dtype.kind in "fiu":
                        values[v.tag] = float(arr.reshape(-1)[0])
            if values:
                col.add_record(values, n, step=float(event.step))
    except Exception as exc:  # noqa: BLE001 - a corrupt event file is the user's data, not our bug
        if not col.read.series:
            col.read.problem = f"could not read TensorBoard events after record {n}: {type(exc).__name__}: {exc}"
        else:
            col.read.notes.append(f"stopped after record {n}: {type(exc).__name__}: {exc}")
    col.read.lines = n
    framed = _framed_records(path)
    if framed > n and not col.read.notes and col.read.problem is None:  # the loader stops quietly at a bad CRC
        col.read.notes.append(
            f"read {n} of the {framed} records: record {n + 1} is corrupt (its checksum does not "
            "match); the records after it were not read"
        )
    if n == 0 and col.read.problem is None:
        col.read.problem = "no TensorBoard event could be read (an empty or truncated event file)"
    return col.read


def _framed_records(path: Path, limit: int = 10_000_000) -> int:
    """How many records the file's TFRecord framing holds (length, length CRC, data, data CRC), counted
    by their lengths only: more than the loader read means it stopped at a corrupt record."""
    count = 0
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            pos = 0
            while pos + 16 <= size and count < limit:
                fh.seek(pos)
                (length,) = struct.unpack("<Q", fh.read(8))
                nxt = pos + 16 + length
                if nxt > size:
                    break
                count += 1
                pos = nxt
    except (OSError, struct.error):
        return 0
    return count


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
