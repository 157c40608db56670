"""Metrics CSV files -> series: Lightning ``metrics.csv`` (sparse rows), Keras ``CSVLogger``,
Ultralytics ``results.csv``, and any CSV with a step or epoch column.

Streamed row by row. Empty cells are "not logged in this row"; a cell that is
not a number is counted as bad (the rest of the row is used).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import BinaryIO

from advisor.read.bounded import MAX_CSV_LINE, bounded_lines, padding_note
from advisor.read.logs.records import Collector, LogRead
from advisor.read.logs.keys import EPOCH_KEYS, STEP_KEYS, parse_number


def read_csv(path: Path, shown: str, encoding: str = "utf-8", stream: BinaryIO | None = None) -> LogRead:
    """A metrics CSV -> series. ``stream``: the file, already open in binary mode at its start (then ``path`` is
    not opened again)."""
    col = Collector(shown, "csv")
    read = col.read
    read.encoding = encoding
    with (
        path.open("r", encoding=encoding, errors="replace", newline="")
        if stream is None
        else io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline="")
    ) as fh:
        long_lines: list[int] = []
        padding: list[int] = []
        reader = csv.reader(bounded_lines(fh, MAX_CSV_LINE, long_lines.append, padding.append))
        try:
            header = next(reader)
        except (StopIteration, csv.Error) as exc:
            read.problem = f"no CSV header ({exc})" if str(exc) else "no CSV header"
            if long_lines:
                read.problem = f"no CSV header: line {long_lines[0]} is longer than {MAX_CSV_LINE} characters"
            return read
        names = [h.strip() for h in header]
        low = [n.lower() for n in names]
        step_col = next((i for i, n in enumerate(low) if n in STEP_KEYS), None)
        epoch_col = next((i for i, n in enumerate(low) if n in EPOCH_KEYS), None)
        if "train/box_loss" in low:
            read.formats.add("ultralytics")
        elif step_col is not None and (epoch_col is not None or any(n.endswith(("_step", "_epoch")) for n in low)):
            read.formats.add("lightning")  # Keras' CSVLogger writes no step column
        elif epoch_col is not None and any(n.startswith("val_") for n in low):
            read.formats.add("keras_csvlogger")
        value_cols = [i for i in range(len(names)) if i not in (step_col, epoch_col)]
        rowno = 1
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                rowno += 1
                col.bad(rowno, f"CSV error: {exc}")
                continue
            rowno += 1
            if not row:
                continue
            step = _cell(row, step_col)
            epoch = _cell(row, epoch_col)
            values: dict[str, float] = {}
            for i in value_cols:
                if i >= len(row):
                    break
                cell = row[i].strip()
                if not cell:
                    continue
                val = parse_number(cell)
                if val is None:
                    col.bad(rowno, f"column {names[i]!r}: {cell[:40]!r} is not a number")
                    continue
                values[names[i]] = val
            if values:
                col.add_record(values, rowno, step=step, epoch=epoch)
        for line in long_lines:
            col.bad(line, f"line longer than {MAX_CSV_LINE} characters, skipped")
        read.notes += [padding_note(line) for line in padding]
        read.lines = rowno + len(long_lines)
    return read


def _cell(row: list[str], i: int | None) -> float | None:
    if i is None or i >= len(row) or not row[i].strip():
        return None
    return parse_number(row[i])
