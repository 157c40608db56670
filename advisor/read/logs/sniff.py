"""Recognise what a file holds from its first bytes, not its name.

``sniff(path)`` returns a ``Sniff``: the content kind (``text``, ``csv``, ``jsonl``,
``trainer_state``, ``tfevents``, ``empty``, ``binary``), the text encoding to read
it with, and for ``binary``/``empty`` the reason.
"""

from __future__ import annotations

import codecs
import re
import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from advisor.read.safe import loads_json

SAMPLE_BYTES = 65536
Kind = Literal["text", "csv", "jsonl", "trainer_state", "tfevents", "empty", "binary"]


@dataclass(frozen=True)
class Sniff:
    kind: Kind
    encoding: str = "utf-8"
    why: str | None = None


#: a run of this many NUL bytes is padding (a file system's hole after a crash, a preallocated tail); UTF-16
#: text never holds more than two in a row
PADDING_RUN = 64
_PADDING = re.compile(b"\x00{%d,}" % PADDING_RUN)


def _encoding(sample: bytes) -> tuple[str | None, str | None]:
    """(encoding, why-not-text) of a byte sample."""
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig", None
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", None
    if sample and not (sample := _PADDING.sub(b"", sample)):  # NUL padding (a crash, a sparse tail) is no encoding
        return None, "only NUL bytes at its start, not a text log"
    nul = sample.count(0)
    if nul:
        half = len(sample) // 2
        if half and sample[1::2].count(0) > 0.9 * half:
            return "utf-16-le", None
        if half and sample[0::2].count(0) > 0.9 * half:
            return "utf-16-be", None
        if nul > 0.1 * len(sample):  # a few NULs (padding left by a crash) do not make a log binary
            return None, f"binary data ({nul} NUL bytes in the first {len(sample)} bytes), not a text log"
        sample = sample.replace(b"\x00", b"")
    control = sum(sample.count(c) for c in range(32) if c not in (9, 10, 13, 8, 27, 12))
    if control > 0.05 * len(sample):
        return None, f"binary data ({control} control bytes in the first {len(sample)} bytes), not a text log"
    try:
        sample.decode("utf-8")
        return "utf-8", None
    except UnicodeDecodeError as exc:
        if exc.start >= len(sample) - 4:  # a character cut by the sample's end
            return "utf-8", None
        return "latin-1", None


def _first_lines(text: str, n: int) -> list[str]:
    lines = [ln.strip() for ln in text.splitlines()[: n + 20]]
    return [ln for ln in lines if ln][:n]


def _is_number(cell: str) -> bool:
    if cell == "":
        return True
    try:
        float(cell)
        return True
    except ValueError:
        return False


def sniff(path: Path) -> Sniff:
    if path.name.startswith("events.out.tfevents"):
        return Sniff("tfevents", encoding="binary")
    with path.open("rb") as fh:
        sample = fh.read(SAMPLE_BYTES)
    return sniff_sample(sample)


def sniff_sample(sample: bytes) -> Sniff:
    """What a file holds, from its first SAMPLE_BYTES bytes already read (not for TensorBoard events: by name)."""
    sample = sample[:SAMPLE_BYTES]
    if not sample.strip():
        return Sniff("empty", why="empty file" if not sample else "file holds only blank space")
    enc, why = _encoding(sample)
    if enc is None:
        return Sniff("binary", why=why)
    text = sample.decode(enc, errors="replace")
    lines = _first_lines(text, 5)
    head = text.lstrip()
    if head.startswith("{") and '"log_history"' in text:
        first = _json_obj(lines[0]) if lines and lines[0].endswith("}") else None
        if first is None or "log_history" in first:  # pretty-printed, or one line holding the state
            return Sniff("trainer_state", enc)
    if lines and sum(
        ln.startswith("{") and ln.endswith("}") and _json_obj(ln) is not None for ln in lines
    ) >= 0.6 * len(lines):
        return Sniff("jsonl", enc)
    if len(lines) >= 2 and lines[0].count(",") >= 1:
        try:  # quoted cells may hold commas ("a, b"); a text column beside the numbers is fine
            parsed = list(csv.reader(lines[:4]))
        except csv.Error:
            parsed = [ln.split(",") for ln in lines[:4]]
        header = [c.strip() for c in parsed[0]]
        rows = [[c.strip() for c in r] for r in parsed[1:4]]
        numeric = [sum(_is_number(c) for c in r) >= max(1, 0.5 * len(r)) for r in rows]
        if (
            all(c and not _is_number(c) for c in header)
            and all(len(r) == len(header) for r in rows)
            and sum(numeric) >= max(1, 0.5 * len(rows))
        ):
            return Sniff("csv", enc)
    return Sniff("text", enc)


def _json_obj(line: str) -> dict | None:
    try:
        obj = loads_json(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None
