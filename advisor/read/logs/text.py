"""The line loop over a text log, in bounded memory: each line to the log families of ``registry.FAMILIES``.

Lines are read in blocks (``blocks.py``) with a length cap (``MAX_LINE``): a file
without newlines (binary garbage, a truncated dump) cannot make one huge string.
Carriage returns end lines too, so progress bars give one line per update. At each
line start of a block, runs of lines with the shape of a line read before are taken
by templates, and lines without a trigger word seen before are skipped
(``template_rows.py``, ``repeat.py``). Every other line is read in full: its colour
codes and NUL bytes removed, an open traceback takes its body (``tracebacks.py``)
and an open table its rows (``table.py``); then the line goes to the rows of the
family table in their order (``registry.py``), until one takes it: the rows that
see every line; for a line holding one of ``TRIGGER_WORDS`` (a line without any is
remembered as dead), the others. Each family names its trigger and its reader
there; this loop knows only the states it looks at on every line (an open traceback,
an open table, a Keras bar at its total). The families' states are created for each
file (``reading.Reading`` holds them, the collector and the templates); those that
hold lines record them at the end.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import BinaryIO

from advisor.read.logs import keras, registry, table, template_rows, tracebacks
from advisor.read.logs.blocks import blocks
from advisor.read.logs.reading import MAX_CREDIT, Reading
from advisor.read.logs.records import Collector, LogRead
from advisor.read.safe import clean_log_line

MAX_LINE = 65536
#: lines without trigger words remembered (to skip them when they come again), and the longest remembered
MAX_DEAD = 1024
MAX_DEAD_CHARS = 300
#: a line without one of these (lower-cased) cannot hold anything we read
TRIGGER_WORDS = (
    "loss",
    "lr",
    "learn",
    "acc",
    "overflow",
    "scale",
    "norm",
    "epoch",
    "step",
    "iter",
    "nan",
    "inf",
    "traceback",
    "{",
    "top1",
    "top5",
    "map",
    "f1",
    "wer",
    "bleu",
    "precision",
    "recall",
    "perplex",
    "ppl",
    "auc",
    "iou",
    "dice",
    "error",
    "gpu_mem",  # YOLO's training table header, pasted without its Epoch column
)
#: terminal colour and cursor codes (Keras 3, rich, tqdm nested bars)
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

#: a run of digits longer than any float's (1.8e308 has 309) and its cheap length pre-check
_LONG_DIGITS_MIN = 320
_LONG_DIGITS_RE = re.compile(r"\d{%d,}" % _LONG_DIGITS_MIN)


def read_text(path: Path, shown: str, encoding: str = "utf-8", stream: BinaryIO | None = None) -> LogRead:
    """A text log -> series and events. ``stream``: the file, already open in binary mode at its start (then
    ``path`` is not opened again)."""
    col = Collector(shown)
    read = col.read
    read.encoding = encoding
    compiled = registry.TABLE
    states = compiled.new_states()
    by_first, others, slots = compiled.by_first, compiled.others, compiled.slots(states)
    words_stage, trigger_words = registry.WORDS, TRIGGER_WORDS
    # an open traceback and an open table read the next lines themselves (no template takes them), and any line
    # but Keras output ends a Keras bar at its total: the states of these families are looked at on every line
    tb: tracebacks.TracebackState = states[tracebacks.TracebackState]
    tstate: table.TableState = states[table.TableState]
    kstate: keras.KerasState = states[keras.KerasState]
    rows = template_rows.Rows(col, kstate)  # lines with the shape of a line read before (repeat.py)
    r = Reading(col, rows, states)
    dead = rows.dead  # lines read in full that hold no trigger word: skipped when seen again
    lineno = 0
    with (
        path.open("r", encoding=encoding, errors="replace", newline=None)
        if stream is None
        else io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline=None)
    ) as fh:
        pieces = blocks(fh, MAX_LINE)
        block = ""
        cur = size = 0
        overlong = False
        ahead: tuple[str, bool] | None = None  # the next piece, read before its turn
        while True:
            if cur >= size:
                piece = ahead if ahead is not None else next(pieces, None)
                ahead = None
                if piece is None:
                    break
                block, overlong = piece
                cur, size = 0, len(block)
                rows.ascii = block.isascii()
                if overlong:  # (a line cut at MAX_LINE comes alone)
                    read.overlong_lines += 1
            if not tb.line and tstate.columns is None and (dead or rows.templates):  # (see template_rows.py)
                nxt, now = rows.take(block, cur, lineno)
                if nxt != cur:
                    r.credit = min(MAX_CREDIT, r.credit + 0.05 * (now - lineno))  # (Reading.earn, inline)
                    cur, lineno = nxt, now
                    continue
            end = block.find("\n", cur) + 1 or size
            if (
                end == size
                and rows.epochs
                and not overlong
                and ahead is None
                and not tb.line
                and tstate.columns is None
            ):
                ahead = next(pieces, None)  # the block's last line: joined to the next block, where a Keras epoch
                if ahead is not None and not ahead[1]:  # that starts with it may be matched whole
                    block, ahead = block[cur:] + ahead[0], None
                    cur, size = 0, len(block)
                    rows.ascii = block.isascii()
                    continue
            line = block[cur:end]
            cur = end
            lineno += 1
            raw = line
            if "\x1b" in line or "\x00" in line:  # colour codes and NUL padding are not part of the values
                line = clean_log_line(line)
            if len(line) > _LONG_DIGITS_MIN and _LONG_DIGITS_RE.search(line):
                # a number of hundreds of digits is beyond any float: read it as inf (int() of thousands of
                # digits would raise, and every parser below would have to guard it)
                line = _LONG_DIGITS_RE.sub("inf", line)
            if tb.line and tracebacks.read_body(col, tb, line, lineno):
                continue
            if "\x1b" in line:
                line = _ANSI_RE.sub("", line)
            if tstate.columns is not None and table.row(line, lineno, col, tstate):
                continue
            if kstate.phase == "tail" and line[:1] not in keras.FIRST_CHARS:
                keras.other_line(kstate)  # (a line that is not Keras output: the bar at its total is over)
            low = line.lower()
            for words, lower, reader, slot in by_first.get(line[:1], others):  # (the family table: registry.py)
                if words:
                    hay = low if lower else line
                    for word in words:
                        if word in hay:
                            break
                    else:
                        continue
                elif reader is None:  # the start of a stage
                    if slot == words_stage:  # (a line without a trigger word: dead)
                        for word in trigger_words:
                            if word in low:
                                break
                        else:
                            if len(line) <= MAX_DEAD_CHARS and len(dead) < MAX_DEAD and line is raw:
                                dead.add(line)  # (nothing of it was read, whatever the state but the Keras tail's)
                            break
                    elif "\x08" in line:  # what the terminal shows: the text after the last backspace (Keras 3
                        line = line.rstrip("\r\n").rstrip("\x08").rsplit("\x08", 1)[-1] + "\n"  # erases at the end)
                    continue
                if reader(r, slots[slot], line, low, lineno):  # type: ignore[misc]  # (None: a stage row, above)
                    break
        rows.flush()
        read.lines = lineno
    for cls in compiled.at_end:
        states[cls].finish(col)
    return read
