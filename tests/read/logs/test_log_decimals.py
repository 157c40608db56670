"""Numbers read a table at a time (advisor/read/logs/decimals.py): every cell gives the bits float() gives, or the
same error."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.read.logs import decimals

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: spellings a template's number groups hold, and some they never hold (the array path must refuse them)
_CELL = st.one_of(
    st.integers(0, 10**18).map(str),
    st.tuples(st.integers(0, 10**9), st.integers(0, 17)).map(lambda t: f"{t[0] / 10**4:.{t[1]}f}"),
    st.floats(0, 1e6, allow_nan=False).map(repr),
    st.sampled_from(["0", "00012.3400", ".5", "5.", "0.", "9" * 15, "9" * 16, "1" * 14 + ".5", "1e5", "1.0e-03"]),
    st.sampled_from(["-0.0", "+1", "nan", "inf", "1_0", " 1", "\u0663", "1.2.3", ".", ""]),
)


def _bits(make):
    """The float64 bits of what ``make()`` returns, or the type of the error it raises."""
    try:
        out = make()
    except (ValueError, TypeError) as exc:
        return type(exc).__name__
    return [np.asarray(c, dtype=np.float64).view(np.int64).tolist() for c in out]


@settings(max_examples=400, deadline=None)
@given(st.lists(_CELL, min_size=1, max_size=40), st.booleans())
def test_a_column_reads_as_float_reads_each_cell(cells, same):
    if same:
        cells = [cells[0]] * len(cells)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decimals, "MIN_CELLS", 1)
        assert _bits(lambda: [decimals.to_float64(cells)]) == _bits(lambda: [np.array(cells, dtype=np.float64)])


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_table_reads_as_float_reads_each_cell(data):
    width = data.draw(st.integers(1, 5))
    # each column a shape that repeats (a counter, a fixed format, a constant) or anything
    shapes = data.draw(st.lists(st.sampled_from(["int", "fixed", "g", "const", "any"]), min_size=width, max_size=width))
    consts = data.draw(st.lists(_CELL, min_size=width, max_size=width))
    cells = []
    for _ in range(data.draw(st.integers(1, 30))):
        for shape, const in zip(shapes, consts):
            if shape == "int":
                cells.append(str(data.draw(st.integers(0, 10**4))))
            elif shape == "fixed":
                cells.append(f"{data.draw(st.floats(0, 99)):.4f}")
            elif shape == "g":
                cells.append(f"{data.draw(st.floats(0, 99)):.4g}")
            elif shape == "const":
                cells.append(const)
            else:
                cells.append(data.draw(_CELL))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decimals, "MIN_CELLS", 1)
        got = _bits(lambda: decimals.to_columns(cells, width))
    assert got == _bits(lambda: [np.array(cells[g::width], dtype=np.float64) for g in range(width)])


def test_rows_of_a_few_lengths_are_read_by_the_array_path(monkeypatch):
    cells = [c for i in range(300) for c in (str(i * 7), f"{1 / (i + 1):.5f}", "1.0e-03")]
    calls = []
    monkeypatch.setattr(decimals, "to_float64", lambda c: calls.append(c) or np.array(c, dtype=np.float64))
    columns = decimals.to_columns(cells, 3)
    assert not calls  # (no column fell back to float() of each cell)
    for g in range(3):
        assert columns[g].tolist() == [float(c) for c in cells[g::3]]
