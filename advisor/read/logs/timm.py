"""timm ``train.py`` lines (pytorch-image-models).

``train_one_epoch``: ``Train: {epoch} [{update_idx:>4d}/{updates_per_epoch} ({pct:>3.0f}%)]  Loss: {val:#.3g}
({avg:#.3g})  Time: ...  LR: {lr:.3e}  Data: ...``: epochs from 0; the first number is the batch's loss, the one
in parentheses the epoch's running mean; x = epoch * updates_per_epoch + update_idx.
``validate``: ``Test: [{batch_idx:>4d}/{last_idx}]  Time: ...  Loss: {val:>7.3f} ({avg:>6.3f})  Acc@1: {val:>7.3f}
({avg:>7.3f})  Acc@5: ...``: the running means of the last batch (``batch_idx == last_idx``) are the evaluation's
result, at the epoch just trained; the other batches are not points.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs.keyvalue import NUM
from advisor.read.logs.keys import parse_number

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

_TRAIN_RE = re.compile(r"\bTrain: (\d+) \[\s*(\d+)/(\d+)")
_TEST_RE = re.compile(r"\bTest: \[\s*(\d+)/(\d+)\]")
#: ``Name: value (mean)``
_PAIR_RE = re.compile(r"([A-Za-z][\w@]*):\s*(" + NUM + r")\s*\(\s*(" + NUM + r")\)")


class TimmState:
    def __init__(self) -> None:
        self.epoch: float | None = None
        self.steps = 0.0  # x of the last training line


def read_line(r: Reading, state: TimmState, line: str, low: str, lineno: int) -> bool:
    """True when the line was a timm training or validation line."""
    col = r.col
    m = _TRAIN_RE.search(line)
    if m:
        epoch, i, n = int(m.group(1)), int(m.group(2)), int(m.group(3))
        values = {}
        for key, val, _ in _PAIR_RE.findall(line, m.end()):
            v = parse_number(val)
            if v is not None and key in ("Loss",):
                values[key] = v
        lr = re.search(r"\bLR: (" + NUM + r")", line)
        if lr and parse_number(lr.group(1)) is not None:
            values["lr"] = parse_number(lr.group(1))  # type: ignore[assignment]
        state.epoch, state.steps = float(epoch), float(epoch * n + i)
        if values:
            col.add_record(values, lineno, step=state.steps, epoch=state.epoch)
            col.read.formats.add("timm")
        return True
    m = _TEST_RE.search(line)
    if m is None:
        return False
    if m.group(1) != m.group(2):
        return True  # a batch inside the evaluation: running means, not a result
    values = {}
    for key, _, avg in _PAIR_RE.findall(line, m.end()):
        v = parse_number(avg)
        if v is not None and key not in ("Time", "Data"):
            values["val_" + key] = v
    if values:
        col.add_record(
            values, lineno, step=state.steps if state.epoch is not None else None, epoch=state.epoch, split="eval"
        )
        col.read.formats.add("timm")
    return True
