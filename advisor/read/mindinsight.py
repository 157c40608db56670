"""MindSpore summary files (what ``SummaryCollector`` and ``SummaryRecord`` write for MindInsight), read without
MindSpore or protobuf.

A summary folder holds ``events.out.events.summary.<time>.<pid>.<host>_MS`` (the events: scalars, histograms,
images, tensors, the graph) and ``..._lineage`` (the training's lineage: the hyper-parameters SummaryCollector
recorded, the dataset sizes, the evaluation's metrics). Both are a sequence of records framed as TensorFlow's event
files are (a little-endian uint64 length, a 4-byte checksum of it, the data, a 4-byte checksum of the data), each a
protocol-buffer message of MindSpore's ``summary.proto`` / ``lineage.proto`` (mindspore/train/summary_pb2.py,
lineage_pb2.py: the field numbers below are theirs). The checksums are not verified: a damaged record fails to
parse and reading stops there, with a note.

- ``read_summary``: the scalars as metric series (the loss SummaryCollector collects is tagged ``loss/auto``; a
  ``ScalarSummary("acc", x)`` op's tag is ``acc[:Scalar]``: both suffixes are dropped), and each histogram's
  summary statistics (count, mean, min, max, NaN and Inf counts, and the standard deviation estimated from its
  buckets' midpoints) as weight records of the tensor-statistics layout (run-layout.md), which the training-dynamics
  extractor reads as it reads ``tensors.jsonl``. Images, tensors, the graph and the loss landscape are skipped.
- ``lineage_settings``: the lineage's hyper-parameters as a settings mapping (learning_rate, optimizer,
  loss_function, epoch_num, batch_size, device_num, parallel_mode, the network's class name, the training set's size,
  the user-defined values). The evaluation lineage (metrics as JSON) is not read: results are not settings.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.read import protobuf_wire as pb
from advisor.read.logs.records import Collector, LogRead
from advisor.read.tensors import NUMERIC
from advisor.read.tfrecord import FramingError, framed

#: a record longer than this is skipped unread (an image or a graph; scalars and histograms are small)
MAX_RECORD_BYTES = 16 << 20
#: at most this many histogram statistics are kept per file (parameters x steps)
MAX_HISTOGRAMS = 200_000
_TAG_SUFFIX = re.compile(r"(/auto|\[:\w+\])$")


#: MindSpore's summary file names: ``{prefix}.out.events.summary.{time}.{pid}.{host}{suffix}`` (SummaryRecord's
#: file_prefix, default "events", and file_suffix, default "_MS"; the lineage and explain files end in _lineage and
#: _explain); a text file called ``model.summary.txt`` is not one
SUMMARY_NAME = re.compile(r"\.out\.events\.summary\.\d+\.")


def is_summary(name: str) -> bool:
    """A MindSpore summary event file (not its lineage or explain companion)."""
    return bool(SUMMARY_NAME.search(name)) and not name.endswith(("_lineage", "_explain"))


def is_lineage(name: str) -> bool:
    return bool(SUMMARY_NAME.search(name)) and name.endswith("_lineage")


def records(path: Path, notes: list[str]) -> Iterator[tuple[int, bytes]]:
    """(index, data) of each framed record; a record over MAX_RECORD_BYTES is skipped, a truncated end noted."""
    try:
        for index, _off, data in framed(path, MAX_RECORD_BYTES):
            if data is not None:
                yield index, data
    except FramingError as exc:
        notes.append(str(exc))


def tag_name(tag: str) -> str:
    return _TAG_SUFFIX.sub("", tag.strip())


@dataclass(frozen=True)
class Histogram:
    step: int
    name: str
    count: float
    mean: float | None
    std: float | None
    low: float | None
    high: float | None
    nan: float
    inf: float
    record: int


def _histogram(buf: bytes, step: int, name: str, record: int) -> Histogram:
    count = total = 0.0
    nan = inf = 0.0
    low = high = None
    buckets: list[tuple[float, float, float]] = []
    for number, _wire, raw in pb.fields(buf):
        if number == 1:
            left = width = c = 0.0
            for n2, _w2, r2 in pb.fields(pb.sub(raw)):
                if n2 == 1:
                    left = pb.double(r2)
                elif n2 == 2:
                    width = pb.double(r2)
                elif n2 == 3:
                    c = float(pb.int64(r2))
            buckets.append((left, width, c))
        elif number == 2:
            nan = float(pb.int64(raw))
        elif number in (3, 4):
            inf += float(pb.int64(raw))
        elif number == 5:
            high = pb.double(raw)
        elif number == 6:
            low = pb.double(raw)
        elif number == 7:
            total = pb.double(raw)
        elif number == 8:
            count = float(pb.int64(raw))
    mean = std = None
    finite = count - nan - inf
    if finite > 0 and math.isfinite(total):
        mean = total / finite
        weight = sum(c for _, _, c in buckets)
        if weight > 0:
            var = sum(c * (left + width / 2 - mean) ** 2 for left, width, c in buckets) / weight
            std = math.sqrt(var)
    return Histogram(step, name, count, mean, std, low, high, nan, inf, record)


def read_summary(path: Path, shown: str) -> tuple[LogRead, list[Histogram]]:
    """The scalars of a summary file as a LogRead, and its histograms' statistics."""
    col = Collector(shown, "mindinsight")
    hists: list[Histogram] = []
    last_step: dict[str, int | None] = {}  # tag -> the step of its latest value
    n = 0
    try:
        for n, data in records(path, col.read.notes):
            step: int | None = None
            summary: bytes | None = None
            for number, _wire, raw in pb.fields(data):
                if number == 2:
                    step = pb.int64(raw)
                elif number == 5:
                    summary = pb.sub(raw)
            if summary is None:
                continue
            values: dict[str, float] = {}
            for number, _wire, raw in pb.fields(summary):
                if number != 1:
                    continue
                tag, scalar, hist = "", None, None
                for n2, _w2, r2 in pb.fields(pb.sub(raw)):
                    if n2 == 1:
                        tag = tag_name(pb.text(r2, 500))
                    elif n2 == 3:
                        scalar = pb.single(r2)
                    elif n2 == 9:
                        hist = pb.sub(r2)
                if tag and (scalar is not None or hist is not None):
                    # SummaryCollector writes the last step of an epoch again at the epoch's end: one point
                    if step is not None and last_step.get(tag) == step:
                        continue
                    last_step[tag] = step
                if scalar is not None and tag:
                    values[tag] = scalar
                elif hist is not None and tag and len(hists) < MAX_HISTOGRAMS:
                    hists.append(_histogram(hist, step or 0, tag, n))
            if values:
                col.add_record(values, n, step=float(step) if step is not None else None)
    except pb.WireError as exc:
        col.read.notes.append(f"stopped at record {n}: not a summary event ({exc}): the records after it were not read")
    except OSError as exc:
        col.read.problem = f"cannot read: {exc.strerror or exc}"
    col.read.lines = n
    if len(hists) >= MAX_HISTOGRAMS:
        col.read.notes.append(f"kept the first {MAX_HISTOGRAMS} histograms; the later ones were not analysed")
    if n == 0 and col.read.problem is None:
        col.read.problem = "no MindSpore summary record could be read (an empty or truncated summary file)"
    elif not col.read.series and not hists and col.read.problem is None:
        col.read.problem = "a MindSpore summary file without scalars or histograms (images, tensors or a graph only)"
    return col.read, hists


def histogram_records(hists: list[Histogram]) -> Iterator[dict[str, Any]]:
    """The histograms as weight records of the tensor-statistics layout (``line``: the summary record)."""
    for h in hists:
        rec: dict[str, Any] = dict.fromkeys(NUMERIC)  # the fields a histogram cannot give stay None
        rec.update(
            step=h.step,
            name=h.name,
            kind="weight",
            numel=h.count,
            mean=h.mean,
            std=h.std,
            min=h.low,
            max=h.high,
            nan=h.nan,
            inf=h.inf,
            line=h.record,
        )
        yield rec


#: LineageEvent.train_lineage.hyper_parameters: field number -> (settings key, kind)
_HYPER = {
    1: ("optimizer", "text"),
    2: ("learning_rate", "float"),
    3: ("loss_function", "text"),
    4: ("epoch_num", "int"),
    5: ("parallel_mode", "text"),
    6: ("device_num", "int"),
    8: ("batch_size", "int"),
}


def _value(raw: int | bytes, kind: str) -> Any:
    if kind == "float":
        return pb.single(raw)
    if kind == "double":
        return pb.double(raw)
    if kind == "int":
        return pb.int64(raw)
    return pb.text(raw)


def _user_info(buf: bytes, out: dict[str, Any], depth: int = 0) -> None:
    for number, _wire, raw in pb.fields(buf):
        if number == 1 and depth < 4:
            _user_info(pb.sub(raw), out, depth + 1)
        elif number in (3, 4, 5):
            key, value = None, None
            for n2, _w2, r2 in pb.fields(pb.sub(raw)):
                if n2 == 1:
                    key = pb.text(r2, 200)
                elif n2 == 2:
                    value = _value(r2, {3: "int", 4: "text", 5: "double"}[number])
            if key:
                out.setdefault(key, value)


def lineage_settings(data: bytes) -> dict[str, Any]:
    """The settings a lineage file records (a later training lineage wins). Raises WireError."""
    out: dict[str, Any] = {}
    for _n, raw in _framed(data):
        for number, _wire, value in pb.fields(raw):
            if number == 6:  # train_lineage
                for n2, _w2, part in pb.fields(pb.sub(value)):
                    body = pb.sub(part)
                    if n2 == 1:
                        for n3, _w3, r3 in pb.fields(body):
                            if n3 in _HYPER:
                                key, kind = _HYPER[n3]
                                out[key] = _value(r3, kind)
                    elif n2 == 2:
                        for n3, _w3, r3 in pb.fields(body):
                            if n3 == 2:
                                out["train_size"] = pb.int64(r3)
                    elif n2 == 3:
                        for n3, _w3, r3 in pb.fields(body):
                            if n3 == 1:
                                out["network"] = pb.text(r3, 200)
            elif number == 10:  # user_defined_info
                _user_info(pb.sub(value), out)
    return out


def _framed(data: bytes) -> Iterator[tuple[int, bytes]]:
    pos, n = 0, 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack("<Q", data[pos : pos + 8])
        start = pos + 12
        if start + length > len(data):
            raise pb.WireError(f"record {n + 1} is truncated")
        n += 1
        yield n, data[start : start + length]
        pos = start + length + 4
