"""The line loop over a text log: every format family on every line, in bounded memory.

Lines are read with a length cap (``MAX_LINE``): a file without newlines (binary
garbage, a truncated dump) cannot make one huge string. Carriage returns
end lines too, so progress bars give one line per update. A cheap trigger
regex skips lines that cannot hold anything we read.
"""

from __future__ import annotations

import re
from pathlib import Path

from advisor.read.logs import hf_trainer, keras, metriclogger, mindspore, mixed_precision
from advisor.read.logs.keyvalue import parse_pairs, split_record, unreadable_loss
from advisor.read.logs.records import Collector, LogEvent, LogRead
from advisor.read.safe import clean_log_line

MAX_LINE = 65536
#: a line without one of these (lower-cased) cannot hold anything we read
TRIGGER_WORDS = ("loss", "lr", "learn", "acc", "overflow", "scale", "norm", "epoch", "step", "iter", "nan", "inf",
                 "traceback", "{", "top1", "top5", "map", "f1", "wer", "bleu", "precision", "recall", "perplex",
                 "ppl", "auc", "iou", "dice", "error")
_EVAL_LINE_RE = re.compile(r"\bvalid(?:ation)? on\b|\|\s*valid\s*\||\b(?:evaluation|eval)\b:|^\s*(?:val|valid|eval|test)\b",
                           re.I)
_EXC_RE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b")
_NONFINITE_MSG_RE = re.compile(r"\b(?:loss|gradient|grad)s?\b.{0,60}\b(?:nan|infinite|non-finite|inf)\b"
                               r"|\b(?:nan|non-finite|infinite)\b.{0,40}\bloss\b", re.I)
_AT_ITER_RE = re.compile(r"(?:iteration|iter|step)\s*[=:]?\s*(\d+)", re.I)


def read_text(path: Path, shown: str, encoding: str = "utf-8") -> LogRead:
    col = Collector(shown)
    read = col.read
    read.encoding = encoding
    kstate = keras.KerasState()
    tb_line = 0                  # line of a pending "Traceback (most recent call last):"
    epoch_ctx: float | None = None
    cut = False
    lineno = 0
    with path.open("r", encoding=encoding, errors="replace", newline=None) as fh:
        readline = fh.readline
        while True:
            line = readline(MAX_LINE)
            if not line:
                break
            if cut:                      # the rest of an overlong line
                cut = not line.endswith("\n") and len(line) == MAX_LINE
                continue
            lineno += 1
            if len(line) == MAX_LINE and not line.endswith("\n"):
                read.overlong_lines += 1
                cut = True
            if "\x1b" in line or "\x00" in line:  # colour codes and NUL padding are not part of the values
                line = clean_log_line(line)
            if tb_line:
                if line[:1] in (" ", "\t", "\n") or line.startswith("During handling") or line.startswith("The above"):
                    continue
                text = line.strip()
                if _EXC_RE.match(text):
                    _exception(col, tb_line, lineno, text)
                    tb_line = 0
                    continue
                tb_line = 0
            low = line.lower()
            for word in TRIGGER_WORDS:
                if word in low:
                    break
            else:
                continue
            if line.startswith("Traceback (most recent call last)"):
                tb_line = lineno
                continue
            if "\x08" in line:
                line = line.rsplit("\x08", 1)[-1]
            if "overflow" in low:
                if mixed_precision.parse(line, lineno, col):
                    continue
                mindspore.parse(line, lineno, col)
            if "{" in line and hf_trainer.parse_print(line, lineno, col):
                continue
            if (line[:1] in keras.FIRST_CHARS) and keras.parse(line, lineno, col, kstate):
                continue
            pos = (metriclogger.position(line) if ("Epoch" in line or "Iter(" in line or "it/s" in line
                                                   or "s/it" in line) else None)
            values, step, epoch, strong = split_record(parse_pairs(line, low))
            split = None
            if pos is not None:
                pstep, pepoch, split, fam = pos
                read.formats.add(fam)
                step = pstep if pstep is not None else step
                epoch = pepoch if pepoch is not None else epoch
                strong = strong or bool(values)
            elif values and ("val" in low or "test" in low) and _EVAL_LINE_RE.search(line):
                split = "eval"
            if not strong and "loss" in low:
                token = unreadable_loss(line)
                if token is not None:
                    col.bad(lineno, f"could not read a loss value in {line.strip()[:80]!r} ({token!r})")
                    continue
            if not values:
                if epoch is not None and step is None:
                    epoch_ctx = epoch
                if ("nan" in low or "inf" in low) and _NONFINITE_MSG_RE.search(line):
                    _nonfinite_message(col, lineno, line)
                continue
            if not strong and step is None and epoch is None:
                continue             # e.g. "Namespace(lr=0.01, ...)": a setting, not a logged value
            if epoch is None and step is None:
                epoch = epoch_ctx
            if col.add_record(values, lineno, step=step, epoch=epoch, split=split) and pos is None:
                read.formats.add("mindspore" if "loss is" in low else "keyvalue")
        read.lines = lineno
    if tb_line:
        col.add_event(LogEvent(kind="traceback", line=tb_line, text="Traceback (truncated: no exception line)"))
    return read


def _exception(col: Collector, tb_line: int, lineno: int, text: str) -> None:
    col.add_event(LogEvent(kind="traceback", line=tb_line, text=text[:300]))
    if _NONFINITE_MSG_RE.search(text):
        _nonfinite_message(col, lineno, text)


def _nonfinite_message(col: Collector, lineno: int, text: str) -> None:
    m = _AT_ITER_RE.search(text)
    col.add_event(LogEvent(kind="nonfinite_message", line=lineno, text=text.strip()[:300],
                           step=float(m.group(1)) if m else None))
