"""The last row of the family table: a line no other family took, read as key/value pairs.

``step 100 loss: 2.31 lr: 0.01``, ``loss=2.31``, ``loss is 2.31`` (``keyvalue.py``), with the position a framework
logger's prefix gives (``metriclogger.position``: MetricLogger, mmdet/mmengine, the PyTorch examples, tqdm and
rich bars, whose lines go to the file's ``progress_bar.BarState``), fairseq's simple format (``fairseq.py``), an
evaluation named by the line (``valid on``, ``eval:``), ``Accuracy: 9837/10000 (98%)`` as a ratio, and MindSpore's
loss-scale line after a step. A line that only looks like a record (a settings print, ``Namespace(lr=0.01)``, a
loss that cannot be read) is not one. A record of a plain shape becomes a template (``repeat.learn``): later lines
of that shape are read without this chain.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs import fairseq, metriclogger, mindspore, repeat
from advisor.read.logs.keyvalue import is_settings_print, parse_pairs, split_record, unreadable_loss
from advisor.read.logs.progress_bar import BarState
from advisor.read.logs.keys import Split
from advisor.read.logs.tracebacks import NONFINITE_MSG_RE, nonfinite_message

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

_EVAL_LINE_RE = re.compile(
    r"\bvalid(?:ation)? on\b|\|\s*valid\s*\||\b(?:evaluation|eval)\b:|^\s*(?:val|valid|eval|test)\b", re.I
)
#: a count out of a total with its percentage after it: ``Accuracy: 9837/10000 (98%)``
_FRACTION_RE = re.compile(r"\b([A-Za-z_]\w*)\s*[:=]\s*(\d+)/(\d+)\s*\(")


class KeyValueState:
    def __init__(self) -> None:
        self.epoch_ctx: float | None = None  # the epoch a line without a position is at (``Epoch 3`` before it)


def read_line(r: Reading, state: KeyValueState, line: str, low: str, lineno: int) -> bool:
    """Record the line's values, if it holds any; True (the line is done with, whatever it held)."""
    col, read = r.col, r.read
    pos = (
        metriclogger.position(line)
        if ("Epoch" in line or "Iter(" in line or "it/s" in line or "s/it" in line or "Train: [" in line)
        else None
    )
    values, step, epoch, strong = split_record(parse_pairs(line, low))
    if values and pos is None and is_settings_print(line):
        return True  # the run's arguments (Ultralytics' "engine/trainer: amp=False, epochs=3, iou=0.7, ...")
    if values and " | " in line:
        values = fairseq.simple_record(line, values)  # (its epoch means, its best loss so far)
    split: Split | None = None
    if pos is not None:
        pstep, pepoch, split, fam = pos
        read.formats.add(fam)
        step = pstep if pstep is not None else step
        epoch = pepoch if pepoch is not None else epoch
        strong = strong or bool(values)
        if fam == "pytorch_example":
            state.epoch_ctx = epoch  # the epoch of the "Test set:" line that follows
        if fam in ("tqdm", "rich") and values:
            bar: BarState = r.states[BarState]
            if not step:  # no batch done yet: the postfix still shows the last epoch's,
                bar.end_of_epoch(values)  # with the validation run after it
            else:
                bar.show(col, values, lineno, step, epoch)
            return True
        if fam == "rich" and step:
            # a rich bar whose metrics all wrapped onto the next lines (only ``v_num`` left on its own line): they
            # take this frame's position
            r.states[BarState].show(col, {}, lineno, step, epoch)
            return True
    elif values and ("val" in low or "test" in low) and _EVAL_LINE_RE.search(line):
        split = "eval"
    if values and "%)" in line:
        for m in _FRACTION_RE.finditer(line):  # "Accuracy: 9837/10000 (98%)": the ratio
            if m.group(1) in values and int(m.group(3)):
                values[m.group(1)] = int(m.group(2)) / int(m.group(3))
    if pos is None and values and line[:1] in " \t" and step is None and epoch is None:
        pending = r.states[BarState].pending
        if pending is not None:
            pending[0].update(values)  # a bar's metrics wrapped onto the next line (rich, narrow terminal)
            return True
    if not strong and "loss" in low:
        token = unreadable_loss(line)
        if token is not None:
            col.bad(lineno, f"could not read a loss value in {line.strip()[:80]!r} ({token!r})")
            return True
    if not values:
        if epoch is not None and step is None:
            state.epoch_ctx = epoch
        elif pos is None and r.credit >= 1.0:
            # a line that had no effect at all (INFO lines, which pass the trigger words by "inf"): lines of its
            # shape are skipped from now on
            r.keep(repeat.learn_inert(line, low))
        if ("nan" in low or "inf" in low or "invalid loss" in low) and NONFINITE_MSG_RE.search(line):
            nonfinite_message(col, lineno, line)
        return True
    if not strong and step is None and epoch is None:
        r.rows.flush()
        last = read.last_step
        if mindspore.is_scale_line(line) and last is not None and last == last:
            col.add_record(values, lineno, step=last)  # the loss scale of the step just logged
        return True  # e.g. "Namespace(lr=0.01, ...)": a setting, not a logged value
    if epoch is None and step is None:
        epoch = state.epoch_ctx
    elif step is None and "it/s" in line:
        state.epoch_ctx = epoch  # a rich progress bar (Lightning): its wrapped metrics line has no epoch
    fmt = "mindspore" if "loss is" in low else "keyvalue"
    if col.add_record(values, lineno, step=step, epoch=epoch, split=split) and pos is None:
        read.formats.add(fmt)
    if strong and (pos is None or pos[3] not in ("tqdm", "rich", "pytorch_example")) and r.earn(0.005):
        r.keep(
            repeat.learn(line, low, values, step, epoch, split, pos[3], position=True)
            if pos is not None
            else repeat.learn(line, low, values, step, epoch, split, fmt)
        )
    return True
