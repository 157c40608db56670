"""MXNet ``Module.fit`` / Gluon ``Speedometer`` log lines (``logging.info`` through the root logger).

- ``mx.callback.Speedometer``: ``Epoch[%d] Batch [%d-%d]\\tSpeed: %.2f samples/sec`` (1.x; 0.x: ``Batch [%d]``)
  then ``\\t%s=%f`` per metric: the batch counter restarts each epoch (the collector turns it into a global step);
  MXNet's own examples print the metrics after ``,\\t`` (``example/rcnn``: ``\\tTrain-%s=%f,\\t%s=%f``) and scripts
  that format the line themselves after commas or blanks (``Epoch[1] Batch[1] Speed: 2.38 samples/sec,
  IDLoss=45.729,``): any ``name=value`` after the batch counter is a metric (``Train-`` dropped);
- ``Module.fit`` at the end of an epoch: ``Epoch[%d] Train-%s=%f`` (the epoch's mean: an ``@epoch`` series, not
  one more batch point), ``Epoch[%d] Time cost=%.3f`` (not read) and ``Epoch[%d] Validation-%s=%f`` (evaluation).

MXNet's ``CrossEntropy`` metric is named ``cross-entropy`` (a loss); ``Perplexity`` ``perplexity`` (a score).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs.keyvalue import NUM
from advisor.read.logs.keys import parse_number

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

_BATCH_RE = re.compile(r"\bEpoch\[(\d+)\]\s+Batch\s*\[(?:\d+-)?(\d+)\]")
_EPOCH_END_RE = re.compile(r"\bEpoch\[(\d+)\]\s+(Train|Validation)-([\w.-]+)=(" + NUM + r")")
#: ``name=value`` after a tab, comma or blank (``Speed: 2.38`` has no ``=``)
_METRIC_RE = re.compile(r"(?<![\w.=-])([A-Za-z][\w.-]*+)=(" + NUM + r")")


def _name(key: str) -> str:
    key = key.removeprefix("Train-")
    return "loss" if key in ("cross-entropy", "ce") else key


def read_line(r: Reading, state: None, line: str, low: str, lineno: int) -> bool:
    """True when the line was an MXNet training line (recorded, or deliberately not: ``Time cost``)."""
    col = r.col
    m = _EPOCH_END_RE.search(line)
    if m:
        val = parse_number(m.group(4))
        if val is not None:
            name = _name(m.group(3))
            key = f"{name}_epoch" if m.group(2) == "Train" else f"val_{name}"
            col.add_record({key: val}, lineno, epoch=float(m.group(1)))
            col.read.formats.add("mxnet")
        return True
    m = _BATCH_RE.search(line)
    if m is None:
        return "Time cost=" in line and "Epoch[" in line
    values = {}
    for key, raw in _METRIC_RE.findall(line, m.end()):
        val = parse_number(raw)
        if val is not None:
            values[_name(key)] = val
    if values:
        col.add_record(values, lineno, step=float(m.group(2)), epoch=float(m.group(1)))
        col.read.formats.add("mxnet")
    return True
