"""Lines that repeat the shape of a key/value line already read: read with one regex match each.

Most of a training log is the same print again and again with other numbers
(``step 120 loss 0.4312 lr 0.01``). When the text reader has read such a line
through the whole family chain and found a plain record (values with a step or
an epoch, no state of a stateful family involved), ``learn`` turns the line into
a *template*: a regex that is the line's text literally, except that

- each number the key/value scan read becomes a capture group of the same
  spelling class (``0.4312`` -> ``\\d+\\.\\d+``, ``1e-05`` -> ``\\d+e-\\d+``), and
- each other stand-alone run of digits (a clock, a counter's total) becomes ``\\d+``.

A later line that the template matches in full has the same keys, separators
and punctuation as the learned one, and its digits sit in runs of the same
classes, so every substring test, regex and branch of the reader (none of which
looks at which digits a number has, only at where digit runs are) takes the
same path for it: the record is the learned one's with the new numbers. Digits
inside words (``top1``, ``lr/pg0``) stay literal, as the key they belong to
decides how it is named; lines that a family reads statefully, or whose
reading depends on something beyond the line (``Test ...`` after Keras output,
a ``{`` dict, an overflow message, a phrase such as ``learning rate``, a tqdm
bar, a fraction ``9837/10000 (98%)``, colour codes, very long lines, an error
line naming NaN or a loss scale, which the reader tells by how many characters
apart its words are) are never learned.

``Rows`` holds matched lines back and hands them to the collector as records,
in file order, before the collector records anything else (its
``before_change``), so that lines which record nothing (noise, warnings) do not
cut a block; the records of a block go in column by column.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from advisor.read.logs import hf_trainer, metriclogger
from advisor.read.logs.keyvalue import _PHRASES, KV_RE, _role
from advisor.read.logs.records import Collector, Split, parse_number

#: the longest line a template is learned from or matched on (the text reader rewrites digit runs of more
#: than 320 characters; a line this short cannot hold one)
MAX_CHARS = 300
#: templates kept (several prints interleave: train and eval lines), and of lines without effect
MAX_TEMPLATES = 4
MAX_INERT = 2
#: rows held before they are handed to the collector
MAX_ROWS = 4096
#: text that makes a line's reading depend on more than the line, or on a family's state
_NEVER = ("{", "#", "%)", "%|", "it/s", "s/it", "\x1b", "\x00", "\x08")
_DIGITS_RE = re.compile(r"\d+")
#: the finite spellings of the key/value scan's numbers
_FINITE_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Template:
    regex: re.Pattern[str]
    #: (key, group index, is a percentage) of each value, in the order the line gives them
    values: tuple[tuple[str, int, bool], ...]
    step: int | None  # group of the step, if any
    epoch: int | None
    split: Split | None
    fmt: str  # the format family a kept record adds ("keyvalue", "mindspore", or the position prefix's)
    #: the line has a framework logger's position prefix (metriclogger.py): its step and epoch come from that
    position: bool = False
    #: a line that records nothing and changes nothing (``learn_inert``): skipped
    inert: bool = False


def learn(
    line: str,
    low: str,
    values: dict[str, float],
    step: float | None,
    epoch: float | None,
    split: Split | None,
    fmt: str,
    position: bool = False,
) -> Template | None:
    """The template of a line the reader took as a plain key/value record, or None when it cannot have one.
    ``position``: the line has a position prefix, of family ``fmt`` (not a progress bar's or the PyTorch
    examples', whose reading keeps state)."""
    if len(line) > MAX_CHARS or line.startswith("Test") or "overflow" in low or (step is None and epoch is None):
        return None
    if any(s in line for s in _NEVER) or any(p in low for p in _PHRASES):
        return None
    if ("error" in low or "exception" in low) and ("nan" in low or "inf" in low or "scale" in low):
        return None  # an exception line is told by how far words are apart (text.py): numbers' lengths count
    found: list[tuple[str, int, bool]] = []  # (key, value index, pct) of every pair the key/value scan reads
    values_at: list[tuple[int, int]] = []
    keys: list[tuple[int, int]] = []
    for m in KV_RE.finditer(line):
        if not _FINITE_RE.fullmatch(m.group(2)):
            return None  # a number spelled otherwise (nan, 1.#INF): not a template line
        keys.append(m.span(1))
        values_at.append(m.span(2))
        found.append((m.group(1), len(values_at), bool(m.group(3))))
    pattern, groups = _pattern(line, values_at, keys)
    found = [(k, groups[i], pct) for k, i, pct in found]
    # which group gives each output: as split_record takes them (the first of each key wins)
    out_values: list[tuple[str, int, bool]] = []
    seen: set[str] = set()
    step_g = epoch_g = None
    for key, g, pct in found:
        role = _role(key)
        if role is None:
            continue
        if role == "step":
            step_g = g if step_g is None else step_g
        elif role == "epoch":
            epoch_g = g if epoch_g is None else epoch_g
        elif key not in seen:
            seen.add(key)
            out_values.append((key, g, pct))
    tpl = Template(re.compile(pattern), tuple(out_values), step_g, epoch_g, split, fmt, position)
    check = tpl.regex.fullmatch(line)
    if check is None or _as_items(read_row(tpl, check.groups(), line)) != _as_items((values, step, epoch)):
        return None  # not the reader's own record of the line: never replay it
    return tpl


def _pattern(
    line: str, values_at: list[tuple[int, int]], keys: list[tuple[int, int]], word_digits: bool = False
) -> tuple[str, dict[int, int]]:
    """The line as a regex: each value span a group of its spelling class, other free digit runs ``\\d+``, the rest
    literal; and value index (1-based) -> group."""
    spans = [(a, b, True) for a, b in values_at]
    for d in _DIGITS_RE.finditer(line):
        at = d.start()
        if any(a <= at < b for a, b in values_at) or any(a <= at < b for a, b in keys):
            continue  # inside a value (handled with it) or a key (literal: the key's name)
        if not word_digits and at and (line[at - 1].isalpha() or line[at - 1] == "_"):
            continue  # part of a word: literal (it may name a key)
        spans.append((at, d.end(), False))
    spans.sort()
    parts: list[str] = []
    pos = 0
    group = 0
    groups: dict[int, int] = {}
    order = {a: i + 1 for i, (a, _) in enumerate(values_at)}
    for start, end, is_value in spans:
        parts.append(re.escape(line[pos:start]))
        if is_value:
            group += 1
            groups[order[start]] = group
            parts.append("(" + _DIGITS_RE.sub(r"\\d+", re.escape(line[start:end])) + ")")
        else:
            parts.append(r"\d+")
        pos = end
    parts.append(re.escape(line[pos:]))
    return "".join(parts), groups


def learn_dict(
    line: str, low: str, values: dict[str, float], step: float | None, epoch: float | None
) -> Template | None:
    """The template of a printed metrics dict (``{'loss': 0.4, 'epoch': 1.2}``) the reader recorded, or None."""
    if len(line) > MAX_CHARS or "overflow" in low or "nan" in low or "inf" in low:
        return None  # (a crash's loss dict is told by how far words are apart)
    if any(s in line for s in _NEVER if s != "{") or (("error" in low or "exception" in low) and "scale" in low):
        return None
    start = line.find("{")
    items = list(hf_trainer._ITEM_RE.finditer(line, start))
    names = [m.group(1) for m in items]
    if len(set(names)) != len(names):
        return None  # a key twice: the last value, at the first one's place
    values_at: list[tuple[int, int]] = []
    keys: list[tuple[int, int]] = []
    outputs: list[tuple[str, int]] = []  # (name, value index) of each number
    for m in items:
        keys.append(m.span(1))
        if _FINITE_RE.fullmatch(m.group(2)):
            values_at.append(m.span(2))
            outputs.append((m.group(1), len(values_at)))
        elif parse_number(m.group(2)) is not None:
            return None  # a number spelled otherwise ('0.5', tensor(0.5), nan)
    pattern, groups = _pattern(line, values_at, keys)
    step_g = epoch_g = None
    out_values: list[tuple[str, int, bool]] = []
    for name, i in outputs:
        if name in ("step", "global_step"):
            step_g = groups[i]
        elif name == "epoch":
            epoch_g = groups[i]
        else:
            out_values.append((name, groups[i], False))
    tpl = Template(re.compile(pattern), tuple(out_values), step_g, epoch_g, None, "hf_trainer_print")
    check = tpl.regex.fullmatch(line)
    if check is None or _as_items(read_row(tpl, check.groups(), line)) != _as_items((values, step, epoch)):
        return None
    return tpl


def learn_inert(line: str, low: str) -> Template | None:
    """The template of a line the whole chain read without any effect (no value, event, format or state: an
    ``INFO`` line passes the trigger words by its "inf"), or None when lines of its shape could have one."""
    if len(line) > MAX_CHARS or line.startswith(("Test", "Traceback")) or any(s in line for s in _NEVER):
        return None
    if any(w in low for w in ("loss", "grad", "error", "exception", "overflow", "nan", "scale")):
        return None  # (words some reader looks at, or looks for how far apart they are)
    keys = [m.span(1) for m in KV_RE.finditer(line)]  # (their digits stay: 'top7: 0.5' is not 'top1: 0.5')
    pattern, _ = _pattern(line, [], keys, word_digits=True)  # model_5.pth, step_12.ckpt
    return Template(re.compile(pattern), (), None, None, None, "", inert=True)


def _as_items(row: tuple[dict[str, float], float | None, float | None]) -> tuple:
    return list(row[0].items()), row[1], row[2]


def read_row(tpl: Template, groups: tuple[str, ...], line: str) -> tuple[dict[str, float], float | None, float | None]:
    """(values, step, epoch) of a matched line."""
    values = {}
    for key, g, pct in tpl.values:
        v = float(groups[g - 1])
        values[key] = v / 100.0 if pct else v
    step, epoch = _position(tpl, groups, line)
    return values, step, epoch


def _position(tpl: Template, groups: tuple[str, ...], line: str | None) -> tuple[float | None, float | None]:
    step = float(groups[tpl.step - 1]) if tpl.step is not None else None
    epoch = float(groups[tpl.epoch - 1]) if tpl.epoch is not None else None
    if tpl.position and line is not None:
        pos = metriclogger.position(line)
        if pos is not None:  # always, for a line of the template's shape
            step = pos[0] if pos[0] is not None else step
            epoch = pos[1] if pos[1] is not None else epoch
    return step, epoch


class Rows:
    """Matched lines waiting to be recorded, all of one template, in file order."""

    def __init__(self, col: Collector) -> None:
        self.col = col
        self.templates: list[Template] = []
        self.tpl: Template | None = None
        #: (groups, line number, the line when its position is read from it)
        self.rows: list[tuple[tuple[str, ...], int, str | None]] = []

    def add_template(self, tpl: Template) -> None:
        """Keep ``tpl`` first; beyond MAX_TEMPLATES record templates and MAX_INERT inert ones, the oldest go."""
        others = [t for t in self.templates if t.regex.pattern != tpl.regex.pattern]
        kept = [t for t in others if t.inert == tpl.inert][: (MAX_INERT if tpl.inert else MAX_TEMPLATES) - 1]
        self.templates[:] = [tpl, *kept, *[t for t in others if t.inert != tpl.inert]]

    def keep(self, tpl: Template | None) -> bool:
        """Add a template just learnt (``None``: the line made none); says whether one was added."""
        if tpl is None:
            return False
        self.add_template(tpl)
        return True

    def add(self, tpl: Template, groups: tuple[str, ...], lineno: int, line: str) -> None:
        """A matched line, recorded later: before the collector records anything else (``before_change``)."""
        if tpl is not self.tpl:
            self.flush()
            self.tpl = tpl
        if not self.rows:
            self.col.before_change = self.flush
        self.rows.append((groups, lineno, line if tpl.position else None))
        if len(self.rows) >= MAX_ROWS:
            self.flush()

    def flush(self) -> None:
        """Record the rows held back, in file order."""
        col = self.col
        col.before_change = None
        tpl, rows = self.tpl, self.rows
        if tpl is None or not rows:
            return
        self.rows = []
        spec = tpl.values
        cells = list(zip(*[r[0] for r in rows]))  # the matched text, group by group
        lines = np.array([r[1] for r in rows], dtype=np.int64)
        columns = []
        for _, g, pct in spec:
            column = np.array(cells[g - 1], dtype=np.float64)  # (parses as float() does)
            columns.append(column / 100.0 if pct else column)
        if tpl.position:
            where = [_position(tpl, r[0], r[2]) for r in rows]
            steps = np.array([math.nan if p[0] is None else p[0] for p in where], dtype=np.float64)
            epochs = np.array([math.nan if p[1] is None else p[1] for p in where], dtype=np.float64)
        else:
            n = len(rows)
            steps = np.array(cells[tpl.step - 1], dtype=np.float64) if tpl.step is not None else np.full(n, math.nan)
            epochs = np.array(cells[tpl.epoch - 1], dtype=np.float64) if tpl.epoch is not None else np.full(n, math.nan)
        if col.add_columns([key for key, _, _ in spec], columns, lines, steps, epochs, tpl.split) or tpl.position:
            col.read.formats.add(tpl.fmt)  # (a position prefix names its family whatever is kept)
