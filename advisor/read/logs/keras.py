"""Keras ``fit`` progress output.

``Epoch 3/10`` starts an epoch; the progress line that ends it,
``100/100 [==============================] - 2s 20ms/step - loss: 0.5123 - accuracy: 0.81 - val_loss: 0.61``
(or ``100/100 - 2s - loss: ...`` with ``verbose=2``) holds the epoch's values. Intermediate
progress updates (``32/100 [====>.....] - ETA: 1s - loss: 0.6``) are not points.
(Keras ``CSVLogger`` files are CSV: see ``advisor.read.metrics_csv``.)
"""

from __future__ import annotations

import re

from advisor.read.logs.keyvalue import parse_pairs, split_record
from advisor.read.logs.records import Collector

_EPOCH_RE = re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")
_PROGRESS_RE = re.compile(r"^\s*(\d+)/(\d+)\s+(?:\[[=>.]*\]\s*)?(?:-\s*)?(?:ETA|\d+m?s)")


#: a Keras line starts with blanks, a digit or "Epoch"
FIRST_CHARS = frozenset(" \t0123456789E")


class KerasState:
    def __init__(self) -> None:
        self.epoch: float | None = None


def parse(line: str, lineno: int, col: Collector, state: KerasState) -> bool:
    """True when the line was Keras progress output (recorded or deliberately skipped)."""
    m = _EPOCH_RE.match(line)
    if m:
        state.epoch = float(m.group(1))
        col.read.formats.add("keras")
        return True
    m = _PROGRESS_RE.match(line)
    if m is None:
        return False
    if m.group(1) != m.group(2):
        return True                         # an update inside the epoch
    values, step, epoch, _ = split_record(parse_pairs(line[m.end():]))
    if values:
        col.read.formats.add("keras")
        col.add_record(values, lineno, step=step, epoch=epoch if epoch is not None else state.epoch)
    return True
