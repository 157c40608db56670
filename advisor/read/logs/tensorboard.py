"""TensorBoard event files (``events.out.tfevents.*``) -> scalar series.

Needs the optional extra ``pip install 'accuracy-advisor[tensorboard]'`` (the
``tensorboard`` package); without it the file is reported as unreadable with
that instruction, and the rest of the diagnosis goes on.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from advisor.read.logs.records import Collector, LogRead

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
