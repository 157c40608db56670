"""Numbers written as text -> float64, a table at a time, exactly as ``float()`` reads each.

``float()`` of a short decimal costs ~0.17 us on the development machine (``numpy.array(strings, float64)`` calls
it for each), more than matching the line that holds it. The numbers of a template's rows (``template_rows.py``)
are mostly plain decimals (digits and at most one point: ``12``, ``0.4312``, ``5.``, ``.5``) whose rows have the
same length, or one of a few lengths (a counter gaining a digit). Such a table is read with a few array operations:

- the cells are joined, row after row, into one ASCII buffer; the rows of one length are a (rows x bytes) matrix;
- the first row gives the *layout*: which bytes are digits of which cell (the digits of a cell of 15 at most), and
  which must be the same in every row (the line feeds between cells, the points, the text of a cell that is not a
  plain decimal such as ``1.0e-03``: the same text in every row, read once by ``float()``). One comparison of the
  matrix with the layout's bounds checks every row;
- each cell's mantissa (``0.4312`` -> 4312) is the dot product of the row's digits with powers of ten: a whole
  number below 2**53, so exact in float64; the value is the mantissa divided by ten to its fraction digits. Both
  are exact, so the quotient is the correctly rounded value of the decimal, which is what ``float()`` returns: the
  same bits.

Anything else (rows of more than ``MAX_LAYOUTS`` lengths, a cell whose shape changes, other scripts' digits, a
number of more than ``MAX_DIGITS`` digits) is read by ``numpy.array(cells, float64)``, column by column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: tables of fewer cells are read cell by cell (the array path costs tens of microseconds whatever the size)
MIN_CELLS = 256
#: digits of a plain decimal read by the array path (10**15 < 2**53: every mantissa is a whole float64)
MAX_DIGITS = 15
#: row lengths of a table read by the array path (the rows of each length are read together)
MAX_LAYOUTS = 8
#: layouts remembered (the shapes a log's templates give)
MAX_REMEMBERED = 256

_ZERO, _NINE = ord("0"), ord("9")
_POW10 = 10.0 ** np.arange(MAX_DIGITS + 1)


@dataclass(frozen=True)
class Layout:
    """What every row of one length must look like, and how its bytes become the row's values."""

    low: np.ndarray  # per byte: the lowest value allowed ("0" for a digit, the byte itself elsewhere)
    span: np.ndarray  # per byte: how far above ``low`` it may be (9 for a digit, 0 elsewhere)
    weights: np.ndarray  # (bytes x cells): each digit's power of ten in its cell's mantissa
    scale: np.ndarray  # per cell: ten to its fraction digits
    constants: tuple[tuple[int, float], ...]  # (cell, value) of the cells that are the same text in every row


_layouts: dict[tuple, Layout | None] = {}


def to_columns(cells: list[str], width: int) -> list[np.ndarray]:
    """The columns of a table of ``width`` columns given row after row: ``float()`` of each cell, bit for bit."""
    if width and len(cells) >= MIN_CELLS:
        table = _table(cells, width)
        if table is not None:
            return [table[:, g] for g in range(width)]
    return [to_float64(cells[g::width]) for g in range(width)]


def to_float64(cells: list[str]) -> np.ndarray:
    """``numpy.array(cells, dtype=float64)``: ``float()`` of each cell, bit for bit."""
    if len(cells) >= MIN_CELLS:
        table = _table(cells, 1)
        if table is not None:
            return table[:, 0]
    return np.array(cells, dtype=np.float64)


def _table(cells: list[str], width: int) -> np.ndarray | None:
    """The (rows x ``width``) values, or None when the rows do not fit the array path."""
    try:
        raw = ("\n".join(cells) + "\n").encode("ascii")
    except (TypeError, UnicodeEncodeError):  # (a missing group; other scripts' digits, which float() reads too)
        return None
    if _layout(cells[:width]) is None:
        return None  # (the first row already cannot be read so)
    n = len(cells) // width
    buf = np.frombuffer(raw, dtype=np.uint8)
    if len(raw) % n == 0:  # (most often every row has one length: a matrix without a copy)
        table = _read_rows(buf.reshape(n, -1), cells[:width])
        if table is not None:
            return table
    return _table_by_length(buf, cells, width)


def _table_by_length(buf: np.ndarray, cells: list[str], width: int) -> np.ndarray | None:
    """The values of rows of a few lengths, the rows of each length read together."""
    ends = np.flatnonzero(buf == ord("\n"))
    if ends.size != len(cells):
        return None  # (a line feed inside a cell)
    n = len(cells) // width
    row_ends = ends[width - 1 :: width] + 1
    row_starts = np.zeros(n, dtype=np.int64)
    row_starts[1:] = row_ends[:-1]
    row_lengths = row_ends - row_starts
    shortest = int(row_lengths.min())
    lengths = np.flatnonzero(np.bincount(row_lengths - shortest)) + shortest
    if not 1 < lengths.size <= MAX_LAYOUTS:
        return None
    table = np.empty((n, width))
    for length in lengths.tolist():
        members = np.flatnonzero(row_lengths == length)
        first = int(members[0]) * width
        rows = buf[row_starts[members, None] + np.arange(length)]
        part = _read_rows(rows, cells[first : first + width])
        if part is None:
            return None
        table[members] = part
    return table


def _read_rows(rows: np.ndarray, first_cells: list[str]) -> np.ndarray | None:
    """The values of rows of bytes of one length whose first row's cells are ``first_cells``; None unless every row
    has the first row's layout."""
    layout = _layout(first_cells)
    if layout is None or layout.low.size != rows.shape[1]:
        return None
    if not bool(((rows - layout.low) <= layout.span).all()):  # (a byte below its low wraps round: too high)
        return None
    table = ((rows - _ZERO).astype(np.float64) @ layout.weights) / layout.scale  # (only digits weigh)
    for g, value in layout.constants:
        table[:, g] = value
    return table


def _layout(cells: list[str]) -> Layout | None:
    """The layout of rows shaped as the row of ``cells`` (remembered by shape), or None when the array path cannot
    read it: a cell that is neither a plain decimal of at most ``MAX_DIGITS`` digits nor text ``float()`` reads."""
    key = tuple(_cell_shape(c) for c in cells)
    if key in _layouts:
        return _layouts[key]
    layout = _new_layout(cells)
    if len(_layouts) >= MAX_REMEMBERED:
        _layouts.clear()
    _layouts[key] = layout
    return layout


def _cell_shape(cell: str) -> tuple[int, int] | str:
    """(length, where its point is) of a plain decimal; the text itself of any other cell."""
    if cell.isdigit():
        return len(cell), -1
    at = cell.find(".")
    if at >= 0 and (cell[:at] + cell[at + 1 :]).isdigit() and len(cell) > 1:
        return len(cell), at
    return cell


def _new_layout(cells: list[str]) -> Layout | None:
    size = sum(len(c) + 1 for c in cells)
    low = np.frombuffer(("\n".join(cells) + "\n").encode("ascii"), dtype=np.uint8).copy()
    span = np.zeros(size, dtype=np.uint8)
    weights = np.zeros((size, len(cells)))
    scale = np.ones(len(cells))
    constants = []
    start = 0
    for g, cell in enumerate(cells):
        shape = _cell_shape(cell)
        if isinstance(shape, str):  # the same text in every row
            try:
                constants.append((g, float(cell)))
            except ValueError:
                return None  # (numpy.array raises the same error)
        else:
            length, at = shape
            if at < 0:
                at = length
            frac_digits = max(length - at - 1, 0)
            if at + frac_digits > MAX_DIGITS:
                return None
            digits = [start + j for j in range(length) if j != at]
            low[digits] = _ZERO
            span[digits] = _NINE - _ZERO
            weights[start : start + at, g] = _POW10[frac_digits : frac_digits + at][::-1]
            weights[start + at + 1 : start + length, g] = _POW10[:frac_digits][::-1]
            scale[g] = _POW10[frac_digits]
        start += len(cell) + 1
    return Layout(low, span, weights, scale, tuple(constants))
