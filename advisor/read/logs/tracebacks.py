"""Tracebacks, exception lines and messages of a non-finite loss, in a text log.

``Traceback (most recent call last):`` opens a traceback: its indented body is skipped and the exception line
that ends it (``FloatingPointError: Minimum loss scale reached (0.0001)``) is a ``traceback`` event. An exception
line on its own that names a non-finite loss or gradient, or a loss scaler that gave up, is one too; so is a
crash's printed loss dict (detectron2 ``loss_dict = {'loss_cls': tensor(nan, device='cuda:0'), ...}``), as a
``nonfinite_message`` event, not a logged point. ``nonfinite_message`` is also what the key/value reader records for
a line without values that names a non-finite loss (Keras ``TerminateOnNaN``, MindSpore ``loss is NAN or INF``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs.records import Collector, LogEvent

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

_EXC_RE = re.compile(r"^(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Interrupt|Exit)\b")
NONFINITE_MSG_RE = re.compile(
    r"\b(?:loss|gradient|grad)s?\b.{0,60}\b(?:nan|infinite|non-finite|inf)\b"
    r"|\b(?:nan|non-finite|infinite)\b.{0,40}\bloss\b"
    r"|\binvalid loss, terminating",
    re.I,
)  # Keras TerminateOnNaN
_AT_ITER_RE = re.compile(r"(?:iteration|iter|step)\s*[=:]?\s*(\d+)", re.I)
#: the epoch a message's step is counted in (``In epoch: 2 step: 1``)
_IN_EPOCH_RE = re.compile(r"\bepoch\s*[=:]?\s*(\d+)\s*,?\s*(?:iteration|iter|step)\b", re.I)
#: the loss scaler gave up (apex/fairseq ``FloatingPointError: Minimum loss scale reached (0.0001)``,
#: DeepSpeed ``Current loss scale already at minimum - cannot decrease scale anymore``)
_MIN_SCALE_RE = re.compile(r"minimum loss scale reached|loss scale already at minimum", re.I)
#: a printed dict of losses at a crash (detectron2 ``loss_dict = {'loss_cls': tensor(nan, device='cuda:0'), ...}``)
_CRASH_DICT_RE = re.compile(r"\b\w*loss\w*\s*=\s*\{", re.I)


class TracebackState:
    def __init__(self) -> None:
        self.line = 0  # line of a pending "Traceback (most recent call last):" (0: none)
        self.exc_line = -2  # line of the last exception read

    def finish(self, col: Collector) -> None:
        if self.line:
            col.add_event(LogEvent(kind="traceback", line=self.line, text="Traceback (truncated: no exception line)"))


def read_body(col: Collector, state: TracebackState, line: str, lineno: int) -> bool:
    """A line after an open traceback's first line: True when it is the traceback's (its body, or the exception
    line that ends it); otherwise the traceback is closed and the line is read as any other."""
    if line[:1] in (" ", "\t", "\n") or line.startswith("During handling") or line.startswith("The above"):
        return True
    text = line.strip()
    if _EXC_RE.match(text):
        _exception(col, state.line, lineno, text)
        state.line, state.exc_line = 0, lineno
        return True
    state.line = 0
    return False


def read_start(r: Reading, state: TracebackState, line: str, low: str, lineno: int) -> bool:
    """``Traceback (most recent call last):`` (its body follows: ``read_body``)."""
    if line.startswith("Traceback (most recent call last)"):
        state.line = lineno
        return True
    return False


def read_exception(r: Reading, state: TracebackState, line: str, low: str, lineno: int) -> bool:
    """An exception line without its traceback that names a non-finite value or a loss scaler that gave up."""
    if (
        ("nan" in low or "inf" in low or "scale" in low)
        and _EXC_RE.match(line)
        and (NONFINITE_MSG_RE.search(line) or _MIN_SCALE_RE.search(line))
    ):
        _exception(r.col, lineno, lineno, line.strip())
        state.exc_line = lineno
        return True
    return False


def read_crash_dict(r: Reading, state: TracebackState, line: str, low: str, lineno: int) -> bool:
    """A crash's printed dict of losses holding a non-finite value: an event, not a logged point."""
    if (
        ("nan" in low or "inf" in low)
        and _CRASH_DICT_RE.search(line)
        and NONFINITE_MSG_RE.search(line.replace("{", " loss ", 1))
    ):
        if lineno != state.exc_line + 1:  # not the second line of the exception just read (detectron2)
            nonfinite_message(r.col, lineno, line)
        return True
    return False


def _exception(col: Collector, tb_line: int, lineno: int, text: str) -> None:
    col.add_event(LogEvent(kind="traceback", line=tb_line, text=text[:300]))
    if NONFINITE_MSG_RE.search(text) or _MIN_SCALE_RE.search(text):
        nonfinite_message(col, lineno, text)


def nonfinite_message(col: Collector, lineno: int, text: str) -> None:
    """A ``nonfinite_message`` event at the step (and epoch) the message names."""
    m = _AT_ITER_RE.search(text)
    step = float(m.group(1)) if m else None
    e = _IN_EPOCH_RE.search(text) if step is not None else None
    if step is not None and e is not None:  # MindSpore LossMonitor: "In epoch: 2 step: 1, loss is NAN or INF"
        step = col.step_in_run(step, float(e.group(1)))  # counts steps inside each epoch
    col.add_event(LogEvent(kind="nonfinite_message", line=lineno, text=text.strip()[:300], step=step))
