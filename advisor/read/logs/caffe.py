"""Caffe solver output (glog lines of ``solver.cpp`` / ``sgd_solver.cpp``).

``I0101 10:00:00.000000  1234 solver.cpp:218] Iteration 100 (12.3 iter/s, 8.1s/100 iters), loss = 2.301``
(older Caffe: ``Iteration 100, loss = 2.301``), then one ``Train net output #0: loss = 2.301 (* 1 = 2.301 loss)``
per net output and ``Iteration 100, lr = 0.01``; a test pass prints ``Iteration 500, Testing net (#0)`` and
``Test net output #0: accuracy = 0.91``. The ``Iteration`` line's loss (smoothed over ``average_loss``
iterations) and the output named ``loss`` of the same iteration are one point, not two; other outputs
(``loss_bbox``, ``loss_cls``, ...) are points of their own series.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs.keyvalue import NUM
from advisor.read.logs.keys import parse_number

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

_ITER_RE = re.compile(r"\bIteration (\d+)(?: \([^)]*\))?, (loss|lr) = (" + NUM + r")")
_TESTING_RE = re.compile(r"\bIteration (\d+), Testing net \(#\d+\)")
_OUTPUT_RE = re.compile(r"\b(Train|Test) net output #\d+: (\S+) = (" + NUM + r")")


class CaffeState:
    def __init__(self) -> None:
        self.iter: float | None = None
        self.loss_iter: float | None = None  # iteration whose "loss = " the Iteration line gave
        self.test_iter: float | None = None


def read_line(r: Reading, state: CaffeState, line: str, low: str, lineno: int) -> bool:
    """True when the line was a Caffe solver line (recorded, or deliberately not: a repeat of the loss)."""
    col = r.col
    m = _ITER_RE.search(line)
    if m:
        it, key, val = float(m.group(1)), m.group(2), parse_number(m.group(3))
        state.iter = it
        if key == "loss":
            state.loss_iter = it
        if val is not None:
            col.add_record({key: val}, lineno, step=it)
            col.read.formats.add("caffe")
        return True
    m = _TESTING_RE.search(line)
    if m:
        state.test_iter = float(m.group(1))
        col.read.formats.add("caffe")
        return True
    m = _OUTPUT_RE.search(line)
    if m is None:
        return False
    which, name, val = m.group(1), m.group(2), parse_number(m.group(3))
    if val is None:
        return True
    if which == "Train":
        if name == "loss" and state.loss_iter is not None and state.loss_iter == state.iter:
            return True  # the Iteration line's loss: same iteration, one point
        col.add_record({name: val}, lineno, step=state.iter)
    else:
        col.add_record({name: val}, lineno, step=state.test_iter, split="eval")
    col.read.formats.add("caffe")
    return True
