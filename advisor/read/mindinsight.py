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

import io
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.read import protobuf_wire as pb
from advisor.read.logs.records import Collector, LogRead
from advisor.read.tensors import NUMERIC
from advisor.read.tfrecord import FramingError, framed, framed_stream

#: a record longer than this is skipped unread (an image or a graph; scalars and histograms are small)
MAX_RECORD_BYTES = 16 << 20
#: at most this many histogram statistics are kept per file (parameters x steps)
MAX_HISTOGRAMS = 200_000
#: protocol-buffer fields decoded per file at most (a long run of scalars and histograms has a few million; a file of
#: millions of empty fields stops here)
MAX_FIELDS = 20_000_000
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
    """(index, data) of each framed record; a record over MAX_RECORD_BYTES is skipped, where the framing cannot be
    read further (a truncated end, a length beyond the file, a run of empty records) is noted."""
    try:
        for rec in framed(path, MAX_RECORD_BYTES):
            if rec.data is not None:
                yield rec.index, rec.data
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


def _histogram(buf: pb.Data, step: int, name: str, record: int, budget: pb.Budget) -> Histogram:
    schema = {1: "all", 2: "int", 3: "int", 4: "int", 5: "double", 6: "double", 7: "double", 8: "int"}
    f = pb.message(buf, schema, budget)
    buckets = [pb.message(pb.sub(b), {1: "double", 2: "double", 3: "int"}, budget) for b in f.get(1, [])]
    count, total = float(f.get(8, 0)), f.get(7, 0.0)
    nan, inf = float(f.get(2, 0)), float(f.get(3, 0) + f.get(4, 0))
    mean = std = None
    finite = count - nan - inf
    if finite > 0 and math.isfinite(total):
        mean = total / finite
        weight = sum(b.get(3, 0) for b in buckets)
        if weight > 0:
            var = sum(b.get(3, 0) * (b.get(1, 0.0) + b.get(2, 0.0) / 2 - mean) ** 2 for b in buckets) / weight
            std = math.sqrt(var)
    return Histogram(step, name, count, mean, std, f.get(6), f.get(5), nan, inf, record)


def read_summary(path: Path, shown: str) -> tuple[LogRead, list[Histogram]]:
    """The scalars of a summary file as a LogRead, and its histograms' statistics."""
    col = Collector(shown, "mindinsight")
    hists: list[Histogram] = []
    last_step: dict[str, int | None] = {}  # tag -> the step of its latest value
    n = 0
    budget = pb.Budget(MAX_FIELDS)
    try:
        for n, data in records(path, col.read.notes):
            event = pb.message(data, {2: "int", 5: "bytes"}, budget)
            if 5 not in event:
                continue
            step: int | None = event.get(2)
            values: dict[str, float] = {}
            for raw in pb.message(event[5], {1: "all"}, budget).get(1, []):
                v = pb.message(pb.sub(raw), {1: "text", 3: "float", 9: "bytes"}, budget)
                tag, scalar, hist = tag_name(v.get(1, "")), v.get(3), v.get(9)
                if tag and (scalar is not None or hist is not None):
                    # SummaryCollector writes the last step of an epoch again at the epoch's end: one point
                    if step is not None and last_step.get(tag) == step:
                        continue
                    last_step[tag] = step
                if scalar is not None and tag:
                    values[tag] = scalar
                elif hist is not None and tag and len(hists) < MAX_HISTOGRAMS:
                    hists.append(_histogram(hist, step or 0, tag, n, budget))
            if values:
                col.add_record(values, n, step=float(step) if step is not None else None)
    except pb.OverBudget as exc:
        col.read.notes.append(f"stopped at record {n}: {exc}; the records after it were not read")
    except pb.WireError as exc:
        col.read.notes.append(f"stopped at record {n}: not a summary event ({exc}): the records after it were not read")
    except OSError as exc:
        col.read.problem = f"cannot read: {exc.strerror or exc}"
    col.read.lines = n
    if len(hists) >= MAX_HISTOGRAMS:
        col.read.notes.append(f"kept the first {MAX_HISTOGRAMS} histograms; the later ones were not analysed")
    if not col.read.series and not hists and col.read.problem is None:
        col.read.problem = _nothing_read(n, col.read.notes)
    return col.read, hists


def _nothing_read(records: int, notes: list[str]) -> str:
    """Why a summary file gave no scalar and no histogram: where its reading stopped (taken from ``notes``), or
    what it holds."""
    if notes:
        return notes.pop()
    if records == 0:
        return "no MindSpore summary record could be read (an empty or truncated summary file)"
    return "a MindSpore summary file without scalars or histograms (images, tensors or a graph only)"


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


def _user_info(buf: pb.Data, out: dict[str, Any], depth: int = 0) -> None:
    """UserDefinedInfo: nested infos (field 1) and its int32 / string / double maps (fields 3, 4, 5)."""
    f = pb.message(buf, {1: "all", 3: "all", 4: "all", 5: "all"})
    for number, kind in ((3, "int"), (4, "text"), (5, "double")):
        for entry in f.get(number, []):
            e = pb.message(pb.sub(entry), {1: "text", 2: kind})
            if e.get(1):
                out.setdefault(e[1][:200], e.get(2))
    if depth < 4:
        for inner in f.get(1, []):
            _user_info(pb.sub(inner), out, depth + 1)


def lineage_settings(data: bytes, notes: list[str] | None = None) -> dict[str, Any]:
    """The settings a lineage file records (a later training lineage wins). Raises WireError; where the framing
    cannot be read further after some records, the settings read so far are kept and the reason is noted."""
    out: dict[str, Any] = {}
    read = 0
    try:
        for rec in framed_stream(io.BytesIO(data), MAX_RECORD_BYTES):
            if rec.data is not None:
                _lineage_event(rec.data, out)
                read += 1
    except FramingError as exc:
        if not read:
            raise pb.WireError(str(exc)) from None
        if notes is not None:
            notes.append(f"read {read} lineage records: {exc}")
    return out


def _lineage_event(raw: bytes, out: dict[str, Any]) -> None:
    event = pb.message(raw, {6: "bytes", 10: "bytes"})
    if 6 in event:  # train_lineage: hyper_parameters, train_dataset, algorithm
        train = pb.message(event[6], {1: "bytes", 2: "bytes", 3: "bytes"})
        hyper = pb.message(train.get(1, b""), {n: kind for n, (_key, kind) in _HYPER.items()})
        out.update({_HYPER[n][0]: v for n, v in hyper.items()})
        if 2 in (size := pb.message(train.get(2, b""), {2: "int"})):
            out["train_size"] = size[2]
        if 1 in (algo := pb.message(train.get(3, b""), {1: "text"})):
            out["network"] = algo[1][:200]
    if 10 in event:
        _user_info(event[10], out)
