"""``*.jsonl`` metrics: one JSON object per line -> (line, record) pairs, streamed.

Also mmdetection/mmengine ``.log.json`` / ``scalars.json`` (``"mode": "val"`` marks evaluation records).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO, Iterator, Literal

from advisor.read.logs.records import Collector, LogRead
from advisor.read.logs.keys import EPOCH_KEYS, STEP_KEYS
from advisor.read.bounded import numbered_bounded_lines, padding_note
from advisor.read.safe import loads_json

MAX_LINE = 1_000_000


def iter_records(
    path: Path,
    bad_lines: list[int] | None = None,
    encoding: str = "utf-8",
    stream: BinaryIO | None = None,
    padding: list[int] | None = None,
) -> Iterator[tuple[int, dict]]:
    """Yield (1-based line, object) for each line holding a JSON object (``stream``: the file, already open in
    binary mode at its start; then ``path`` is not opened again).

    Lines that are not JSON objects are skipped and their numbers appended to
    ``bad_lines``. NaN/Infinity spellings are accepted (Python's json does).
    Lines longer than ``MAX_LINE`` characters are skipped as bad. Where NUL padding (a sparse file's zeros) ends
    the reading, its line number is appended to ``padding``.
    """
    with (
        path.open("r", encoding=encoding, errors="replace")
        if stream is None
        else io.TextIOWrapper(stream, encoding=encoding, errors="replace")
    ) as fh:
        on_long = bad_lines.append if bad_lines is not None else None
        on_padding = padding.append if padding is not None else None
        for lineno, line in numbered_bounded_lines(fh, MAX_LINE, on_long, on_padding):
            line = line.strip()
            if not line:
                continue
            try:
                obj = loads_json(line)  # depth-limited; huge numbers read as +-inf
            except ValueError:
                if bad_lines is not None:
                    bad_lines.append(lineno)
                continue
            if isinstance(obj, dict):
                yield lineno, obj
            elif bad_lines is not None:
                bad_lines.append(lineno)


def read_jsonl(path: Path, shown: str, encoding: str = "utf-8", stream: BinaryIO | None = None) -> LogRead:
    col = Collector(shown, "jsonl")
    bad: list[int] = []
    padding: list[int] = []
    last = 0
    for lineno, obj in iter_records(path, bad, encoding, stream, padding):
        last = lineno
        step = epoch = None
        values: dict[str, float] = {}
        for key, val in obj.items():
            if isinstance(val, bool) or not isinstance(val, (int, float)):
                continue
            low = key.lower()
            if low in STEP_KEYS and step is None:
                step = float(val)
            elif low in EPOCH_KEYS and epoch is None:
                epoch = float(val)
            else:
                values[key] = float(val)
        mode = obj.get("mode")
        split: Literal["eval"] | None = "eval" if mode in ("val", "eval", "test", "valid") else None
        col.add_record(values, lineno, step=step, epoch=epoch, split=split)
    for b in bad:
        col.bad(b, "not a JSON object")
    col.read.notes += [padding_note(line) for line in padding]
    col.read.lines = max(last, bad[-1] if bad else 0)
    return col.read
