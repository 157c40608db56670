"""``*.jsonl`` metrics: one JSON object per line -> (line, record) pairs, streamed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator


def iter_records(path: Path, bad_lines: list[int] | None = None) -> Iterator[tuple[int, dict]]:
    """Yield (1-based line, object) for each line holding a JSON object.

    Lines that are not JSON objects are skipped and their numbers appended to
    ``bad_lines``. NaN/Infinity spellings are accepted (Python's json does).
    """
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                if bad_lines is not None:
                    bad_lines.append(lineno)
                continue
            if isinstance(obj, dict):
                yield lineno, obj
            elif bad_lines is not None:
                bad_lines.append(lineno)
