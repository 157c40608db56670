"""Keras ``fit`` / ``evaluate`` progress output (Keras 2 and 3).

``Epoch 3/10`` starts an epoch; progress lines follow, each a state of the epoch's running averages:
Keras 2 ``100/100 [==============================] - 2s 20ms/step - loss: 0.5123 - accuracy: 0.81 - val_loss: 0.61``
(or ``100/100 - 2s - loss: ...`` with ``verbose=2``), Keras 3 ``12/12 ━━━━━━━━━━━━━━━━━━━━ 0s 10ms/step - accuracy:
0.55 - loss: 0.75 - val_accuracy: 0.66 - val_loss: 0.61`` (with colour codes and backspaces on a terminal; the text
reader removes those). The last progress line of an epoch holds its values: one point per epoch, whether the
in-progress updates were captured too or not, and whether the batch counter stopped at the total or ran past it
(``52/51``, a generator longer than ``steps_per_epoch``). When an epoch shows its bar at two or more batch counts
(Keras 3 on Linux writes every update of the bar, ``\r``-separated, into a redirected log; Keras 2 writes one
``ETA`` line per update when the output is not a terminal), its losses are read at each count too: the run's
step (counts and epochs from the bars) and the epoch's running mean there, as the bar prints it, so a loss that
turns NaN or climbs inside the first epoch shows where; the epoch's other metrics stay one point at its last
line. Once one epoch was read so, every later epoch is read by step as well. Progress lines outside a training epoch (after the
epoch's last line, with no new ``Epoch`` header: ``model.evaluate``) are a test evaluation, not one more epoch,
unless they carry ``val_*`` values or no ``Epoch`` header was seen at all (an excerpt of fit's epoch lines).
``TerminateOnNaN``'s ``Batch 3: Invalid loss, terminating training``, printed into the bar, is a non-finite event.
At the default verbosity ``evaluate`` writes its bar's final line twice (the last update, then the finalising one)
and scripts then print the same values (``print("Test loss:", score[0])``): one test point, kept at the printed
precision.
(Keras ``CSVLogger`` files are CSV: see ``advisor.read.logs.metrics_csv``.)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs import repeat
from advisor.read.logs.keyvalue import parse_pairs, split_record
from advisor.read.logs.records import Collector, LogEvent
from advisor.read.logs.keys import KeyInfo, classify_key, parse_number

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

_EPOCH_RE = re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")
#: counter, optional bar (``[===>...]`` or Keras 3's ``━━━━``), then ``- ETA``, a time (``2s``) or ``- loss``
_PROGRESS_RE = re.compile(r"^\s*(\d+)/(\d+)\s+(?:\[[=>.]*\]\s*|[^\s\w]+\s+)?(?:-\s*)?(?:ETA|\d+m?s\b|[a-z_]+: )")
#: a final ``Test loss: 0.031`` / ``Test accuracy: 0.99`` print after training (the Keras examples' convention)
TEST_RE = re.compile(r"^\s*Test (\w+)\s*:\s*(\S+)\s*$")

#: a Keras line starts with blanks, a digit or "Epoch"
FIRST_CHARS = frozenset(" \t0123456789E")


class KerasState:
    def __init__(self) -> None:
        self.epoch: float | None = None
        #: "fit": inside an epoch; "tail": the counter reached the total (an update past it may follow);
        #: "outside": no training epoch open (before the first header, or after an epoch's last line)
        self.phase = "outside"
        self.last_n = 0
        #: (values, line, epoch, split) of the latest progress line not yet recorded
        self.pending: tuple[dict[str, float], int, float | None, str | None] | None = None
        self.seen = False  # any Keras output seen (makes "Test loss:" a test point)
        #: line number and text of the last epoch header read in full (its epoch may become a template)
        self.header: tuple[int, str] = (0, "")
        #: (count, its losses, line) of each progress line of the open training bar
        self.trace: list[tuple[int, dict[str, float], int]] = []
        #: the open training bar showed a count short of its total (an update in progress, not only its end)
        self.partial = False
        #: an epoch showed its bar at two or more counts: epochs are recorded by step from then on
        self.stepwise = False

    def finish(self, col: Collector) -> None:
        flush(col, self)


def flush(col: Collector, state: KerasState) -> None:
    """Record the latest progress line of a bar (at a new epoch, a new bar and the end of the file)."""
    trace, state.trace = state.trace, []
    partial, state.partial = state.partial, False
    if state.pending is None:
        return
    values, lineno, epoch, split = state.pending
    state.pending = None
    col.read.formats.add("keras")
    if split is None and epoch is not None and trace and trace[-1][2] == lineno:
        final = trace[-1][0]
        if not state.stepwise and partial and any(n != final for n, _, _ in trace):
            state.stepwise = True
            col.read.notes.append("Keras losses inside each epoch read at every batch count its bar shows")
        if state.stepwise:
            for i, (n, losses, line) in enumerate(trace):
                if n != final and trace[i + 1][0] != n:  # (the last line of each count)
                    col.add_record(losses, line, step=float(n), epoch=epoch)
            col.add_record(values, lineno, step=float(final), epoch=epoch)
            return
    col.add_record(values, lineno, epoch=epoch, split=split)  # type: ignore[arg-type]


def trace_of(n: int, values: dict[str, float], lineno: int) -> list[tuple[int, dict[str, float], int]]:
    """The trace entry of a training bar's line at count ``n``: its train losses (``loss``, ``box_loss``: what the
    key vocabulary reads as a training loss or a part of one; none: no entry)."""
    losses = {k: v for k, v in values.items() if _is_train_loss(classify_key(k))}
    return [(n, losses, lineno)] if losses else []


def _is_train_loss(info: KeyInfo | None) -> bool:
    return info is not None and info.split == "train" and info.metric in ("loss", "loss_part")


def other_line(state: KerasState) -> None:
    """A line that is not Keras progress: an epoch whose counter reached the total is over."""
    if state.phase == "tail":
        state.phase = "outside"


def read_line(r: Reading, state: KerasState, line: str, low: str, lineno: int) -> bool:
    """Keras progress output (``parse``); an epoch header and its bar's last line right after it make a template
    (``repeat.learn_keras``): later epochs of that shape are read without the family chain."""
    if not parse(line, lineno, r.col, state):
        return False
    pend = state.pending
    if pend is None:
        if state.phase == "fit" and not state.last_n:
            state.header = (lineno, line)  # (a header, or a bar without values: learn_keras tells)
    elif (
        pend[1] == lineno
        and state.header[0] == lineno - 1
        and state.phase == "tail"
        and not state.stepwise
        and r.credit >= 1.0
    ):
        r.keep(repeat.learn_keras(state.header[1], line, pend[0]))
    return True


def read_test(r: Reading, state: KerasState, line: str, low: str, lineno: int) -> bool:
    """``Test loss: 0.031`` after Keras output (``parse_test``)."""
    return state.seen and line.startswith("Test") and parse_test(line, lineno, r.col, state)


def parse(line: str, lineno: int, col: Collector, state: KerasState) -> bool:
    """True when the line was Keras progress output (its values wait in ``state`` until the bar's last line)."""
    m = _EPOCH_RE.match(line)
    if m:
        flush(col, state)
        state.epoch = float(m.group(1))
        state.phase, state.last_n, state.seen = "fit", 0, True
        col.read.formats.add("keras")
        return True
    m = _PROGRESS_RE.match(line)
    if m is None:
        return False
    n, total = int(m.group(1)), int(m.group(2))
    at = line.find("Invalid loss")
    if at >= 0:  # TerminateOnNaN's "Batch 3: Invalid loss, terminating training", glued to the bar
        col.add_event(LogEvent(kind="nonfinite_message", line=lineno, text=line[max(0, at - 12) :].strip()[:300]))
    values, _, _, _ = split_record(parse_pairs(line[m.end(2) :]))
    pend = state.pending
    if pend is not None and n == state.last_n and values and values == pend[0]:
        return True  # the same update printed again (Keras 3 writes a bar's last update, then the finalising one)
    # the same count again with the values it had and more: the epoch's last line, after validation added val_*;
    # or an evaluate bar's final line printed twice (Keras 3 writes the last update, then the finalising one)
    again = (
        n == state.last_n
        and pend is not None
        and set(pend[0]) <= set(values)
        and (
            (state.phase == "tail" and pend[3] is None)
            or (state.phase == "outside" and pend[3] == "test" and n >= total)
        )
    )
    if state.phase == "outside" and n > state.last_n and pend is not None and pend[3] is None:
        state.phase = "tail"  # the epoch's counter going on past its total after another line
    if n <= state.last_n and state.phase != "fit" and not again:
        flush(col, state)  # the counter starts again: a new bar (model.evaluate)
        state.phase = "outside"
    if state.phase == "fit" and n < state.last_n:
        flush(col, state)
    state.last_n = n
    if values:
        state.seen = True
        # outside an epoch: model.evaluate's bar, unless no fit header was ever seen (an excerpt of progress
        # lines only) or it carries val_* values (only fit prints those)
        in_fit = state.phase != "outside" or state.epoch is None or any(k.startswith("val_") for k in values)
        state.pending = (values, lineno, state.epoch if in_fit else None, None if in_fit else "test")
        if in_fit and (step := trace_of(n, values, lineno)):
            state.trace.extend(step)
            state.partial = state.partial or n < total
        else:
            state.trace.clear()
            state.partial = False
    if n >= total and state.phase == "fit":
        state.phase = "tail"
        col.read.steps_per_epoch = total  # the bar of a training epoch counts its optimizer steps
    return True


def parse_test(line: str, lineno: int, col: Collector, state: KerasState) -> bool:
    """``Test loss: 0.031`` after Keras training: a test point, not one more eval epoch."""
    if not state.seen:
        return False
    m = TEST_RE.match(line)
    if m is None:
        return False
    val = parse_number(m.group(2))
    if val is None:
        return False
    pend = state.pending
    if pend is not None and pend[3] == "test" and _same_printed(pend[0].get(m.group(1)), val):
        pend[0][m.group(1)] = val  # the script printing what evaluate's bar showed: one evaluation, full precision
        return True
    flush(col, state)
    col.add_record({m.group(1): val}, lineno, split="test")
    return True


def _same_printed(shown: float | None, val: float) -> bool:
    """``val`` rounds to ``shown``, a value the bar printed with four decimals (``.4f``, or ``.4e`` below 1e-3)."""
    if shown is None:
        return False
    return abs(shown - val) <= 5e-5 * max(1.0, abs(val)) if abs(val) > 1e-3 else abs(shown - val) <= 5e-5 * abs(val)
