"""MindSpore prints: ``LossMonitor`` lines and loss-scale / overflow prints.

``epoch: 1 step: 100, loss is 2.3025851`` (read by the key/value family: ``is`` is a separator),
``Epoch:[  0/ 10], step:[  100/ 1875], loss:[2.302/2.298]``, and from loss-scale training cells
(``TrainOneStepWithLossScaleCell`` returns loss, overflow flag, scale):
``epoch: 1 step: 7, loss is 2.30, overflow is True, loss scale is 65536.0``,
``overflow: True, loss_scale: 32768``, ``is_overflow=1 scale_sense=1024``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs.records import LogEvent

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

_FLAG_RE = re.compile(r"\b(?:is_)?overflow(?:ed)?\b\s*(?:[:=]|is)?\s*\(?(true|false|1|0)\b", re.I)
_LOSS_IS_RE = re.compile(r"\bloss is\b", re.I)
#: a loss-scale value (``loss scale is 32768.0``, ``loss_scale: 32768``, ``scale_sense=1024``)
SCALE_RE = re.compile(r"\bloss[ _]?scale\b|\bscale_sense\b", re.I)


def is_scale_line(line: str) -> bool:
    """A line of its own holding a loss-scale value: MindSpore prints it after the step's loss line."""
    return SCALE_RE.search(line) is not None


def read_overflow_flag(r: Reading, state: None, line: str, low: str, lineno: int) -> bool:
    """Record an overflow flag set to true as an ``overflow`` event; False: the values are the key/value reader's."""
    col = r.col
    m = _FLAG_RE.search(line)
    if m is not None:
        col.read.formats.add("mindspore")
        if m.group(1).lower() in ("true", "1"):
            col.add_event(LogEvent(kind="overflow", line=lineno, text=line.strip()[:200]))
    return False
