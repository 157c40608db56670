"""Rows of bare numbers that a training loop of its own prints: ``print(step, loss)``, ``print(loss, acc)``.

A line of 2 to ``MAX_CELLS`` numbers and nothing else (``76930 2.6496577``, ``0.2355973707751222 0.96875``, ``nan``
included) names none of its columns. Rows are held by their number of cells (in bounded buffers, thinned as a
series is) and named once the file has been read:

- by agreement: a record the log names (a Keras progress line ``loss: 17.2694``, ``step 100 loss 2.31``) printed
  within ``NEAR_LINES`` lines of a row, whose values are numbers of that row in the same order, as printed at the
  record's own precision (the loop printing at full precision what its framework has just logged, or the other
  way round): the record's keys name those columns of every row as wide, and its split is theirs; a row one cell
  wider than the record whose first cell is the record's step has its step there;
- as ``step loss`` pairs: rows of two numbers whose first is a whole number that grows from each row to the next
  and whose second is not always whole, in a log that names no training loss anywhere: the loop's step and its
  loss (YANMTT's ``pretrain_nmt.py`` prints ``print(ctr, lv)`` every 10 batches, the loss of the batch).

Rows named neither way are not read (a column of numbers may be anything). A YOLO ``results.txt`` row (``5/9
11.1G 0.1098 ...``) has the same look and is read by ``yolo.results_row``. Named rows join their series in file
order with the points read from named lines (``Collector.add_out_of_order``).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from advisor.read.logs import yolo
from advisor.read.logs.buffer import Buffer
from advisor.read.logs.records import Collector
from advisor.read.logs.keys import Split, classify_key, printed_as

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

MAX_CELLS = 8
#: how far (in lines) a named record may be printed from a row it names
NEAR_LINES = 3
#: significant digits the agreeing values must show together (an agreement by chance is then implausible)
MIN_DIGITS = 4
#: rows of ``step loss`` pairs needed before they are read as a loss curve
MIN_PAIRS = 3

_CELL = r"(?:[-+]?+(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][-+]?+\d++)?+|[-+]?+[nN][aA][nN]|[-+]?+[iI][nN][fF](?:[iI][nN][iI][tT][yY])?+)"
#: numbers apart, or a YOLO row (``5/9  11.1G`` first)
_ROW_RE = re.compile(
    r"^[ \t]*+(?:\d++/\d++[ \t]++\d[\d.]*+(?:e[-+]?\d++)?+[GM][ \t]++)?+"
    + _CELL
    + r"(?:[ \t]++"
    + _CELL
    + r")++[ \t\r\n]*+\Z"
)
#: what a row's line may start with
FIRST_CHARS = frozenset(" \t0123456789-+.nNiI")


class _Rows:
    """The rows of one width: a buffer per column (the row's first cell as the step of each point, its line as the
    line), and what the pairs rule needs to know of them."""

    def __init__(self, width: int) -> None:
        self.cols = [Buffer() for _ in range(width)]
        self.count = 0
        self.first_rises = True  # the first cell is a whole number above the row before's
        self.last_first = -math.inf
        self.second_whole = True  # every second cell is a whole number
        #: (column -> key, step column, split) once a record named the rows
        self.names: tuple[dict[int, str], int | None, Split | None] | None = None

    def add(self, nums: list[float], lineno: int) -> None:
        self.count += 1
        first = nums[0]
        for buf, v in zip(self.cols, nums):
            buf.add(first, math.nan, v, lineno)
        if not (math.isfinite(first) and first.is_integer() and first > self.last_first):
            self.first_rises = False
        self.last_first = first
        second = nums[1]
        if self.second_whole and not (math.isfinite(second) and second.is_integer()):
            self.second_whole = False

    def near(self, lineno: int) -> list[float] | None:
        """The values of the stored row nearest to ``lineno``, if it is within ``NEAR_LINES``."""
        buf = self.cols[0]
        at = buf.at_line(lineno)
        gaps = [(abs(buf.point(i)[3] - lineno), i) for i in (at - 1, at) if 0 <= i < buf.n]
        gap, i = min(gaps, default=(NEAR_LINES + 1, 0))
        return [c.point(i)[2] for c in self.cols] if gap <= NEAR_LINES else None


class BareState:
    def __init__(self) -> None:
        self.widths: dict[int, _Rows] = {}
        self.checked: object = None  # the collector's last record already compared with the rows

    def finish(self, col: Collector) -> None:
        finish(col, self)


def read_line(r: Reading, state: BareState, line: str, low: str, lineno: int) -> bool:
    """Hold a row of bare numbers (or read a YOLO ``results.txt`` row); True when the line was one."""
    col = r.col
    if _ROW_RE.match(line) is None:
        return False
    cells = line.split()
    if "/" in cells[0]:
        return yolo.results_row(line, lineno, col)
    if len(cells) > MAX_CELLS:
        return False
    nums = [float(c) for c in cells]  # (every spelling of a cell is float's)
    rows = state.widths.get(len(nums))
    if rows is None:
        rows = state.widths[len(nums)] = _Rows(len(nums))
    rows.add(nums, lineno)
    _compare(col, state)
    return True


def finish(col: Collector, state: BareState) -> None:
    """Name the rows held (see the module's text) and record them; at the end of the file, after every other reader
    has recorded what it held (a record printed after a row names it too)."""
    if not state.widths:
        return
    _compare(col, state)
    names_loss = any(s.key.split == "train" and s.key.metric in ("loss", "loss_part") for s in col.read.series.values())
    for width, rows in state.widths.items():
        names = rows.names
        if names is None and width == 2 and rows.count >= MIN_PAIRS and rows.first_rises and not rows.second_whole:
            names = ({1: "loss"}, 0, None) if not names_loss else None
        if names is None:
            continue
        keys, step_col, split = names
        for i, key in keys.items():
            if col.add_out_of_order(key, split, rows.cols[i], with_steps=step_col is not None):
                col.read.formats.add("bare_rows")


def _compare(col: Collector, state: BareState) -> None:
    """Compare the collector's last record, if not done yet, with the rows near its line: the first that agrees
    names the rows of its width."""
    if col.before_change is not None:
        col.before_change()  # (records held back by text.py's templates go first: the last one may be beside the row)
    rec = col.last_record
    if rec is None or rec is state.checked:
        return
    state.checked = rec
    values, lineno, step, split = rec
    for width, rows in state.widths.items():
        if rows.names is not None:
            continue
        row = rows.near(lineno)
        if row is None:
            continue
        start = 0
        step_col = None
        if step is not None and width == len(values) + 1 and row[0] == step:
            start, step_col = 1, 0
        cols = _agreeing(row, list(values.values()), start)
        if cols is None:
            continue
        keys = dict(zip(cols, values))
        if not any(
            (info := classify_key(k)) is not None and info.metric in ("loss", "loss_part", "score")
            for k in keys.values()
        ):
            continue
        rows.names = (keys, step_col, split)


def _agreeing(row: list[float], shown: list[float], start: int) -> list[int] | None:
    """The columns of ``row`` (from ``start``) that the printed values ``shown`` are, in order; None unless every
    value is one, they show ``MIN_DIGITS`` significant digits together and one of them is not whole."""
    cols = []
    digits = 0
    fraction = False
    j = start
    for v in shown:
        while j < len(row) and not printed_as(row[j], v):
            j += 1
        if j == len(row):
            return None
        cols.append(j)
        digits += _digits(v)
        fraction = fraction or (math.isfinite(v) and not v.is_integer())
        j += 1
    return cols if cols and digits >= MIN_DIGITS and fraction else None


def _digits(v: float) -> int:
    if not math.isfinite(v):
        return 0
    try:
        return len(Decimal(repr(v)).normalize().as_tuple().digits)
    except InvalidOperation:
        return 0
