"""Mixed-precision loss-scaler messages (DeepSpeed, apex, fairseq, Megatron, generic).

- DeepSpeed: ``[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4294967296, reducing to 2147483648``
  and the hysteresis form ``... Attempted loss scale: 4294967296, but hysteresis is 2. Reducing hysteresis to 1``
- apex / old DeepSpeed: ``Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0``
- fairseq: ``NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 64.0``
- generic: ``overflow ... skipping step``, ``loss scale reduced to 512``

Each message is one ``overflow`` event; the scale it moves to becomes a point of the ``train/loss_scale`` series.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs.keyvalue import NUM
from advisor.read.logs.records import Collector, LogEvent
from advisor.read.logs.keys import parse_number

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

_DS_RE = re.compile(r"Attempted loss scale:\s*(" + NUM + r")(?:,\s*reducing to\s*(" + NUM + r"))?", re.I)
_TO_RE = re.compile(
    r"(?:reducing|setting|reduced|decreas\w*|lower\w*|set)\s+(?:the\s+)?loss[ _]?scale\w*"
    r"(?:\s+(?:to|from\s+" + NUM + r"\s+to))?:?\s*(" + NUM + r")",
    re.I,
)
_SKIP_RE = re.compile(r"overflow.{0,80}skip|skip.{0,80}overflow|overflow detected", re.I)


def read_line(r: Reading, state: None, line: str, low: str, lineno: int) -> bool:
    """Read a loss-scaler message; True when the line was one (and holds nothing else to read)."""
    r.rows.flush()  # (held template rows first: the loss-scale readers look at the series and the last step)
    col = r.col
    m = _DS_RE.search(line)
    if m:
        before = parse_number(m.group(1))
        after = parse_number(m.group(2)) if m.group(2) else None
        _record(col, lineno, line, before, after, "deepspeed")
        return True
    low_has_overflow = _SKIP_RE.search(line) is not None
    m = _TO_RE.search(line)
    if m and (low_has_overflow or "overflow" in line.lower()):
        _record(col, lineno, line, None, parse_number(m.group(1)), "apex" if "scaler" in line else "fairseq")
        return True
    if low_has_overflow and "step" in line.lower() and not re.search(r"overflow\w*\s*[:=]?\s*(false|0)\b", line, re.I):
        _record(col, lineno, line, None, None, "overflow_message")
        return True
    return False


def _record(col: Collector, lineno: int, line: str, before: float | None, after: float | None, fmt: str) -> None:
    col.read.formats.add(fmt)
    scale = col.read.series.get("train/loss_scale")
    if before is not None and (scale is None or not len(scale.buf)):
        col.add_record({"loss_scale": before}, lineno, step=_step(col))
    col.add_event(
        LogEvent(kind="overflow", line=lineno, text=line.strip()[:200], scale_before=before, scale_after=after)
    )
    if after is not None:
        col.add_record({"loss_scale": after}, lineno, step=_step(col))


def _step(col: Collector) -> float | None:
    st = col.read.last_step
    return st if st == st else None
