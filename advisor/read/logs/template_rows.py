"""Lines that templates match (repeat.py), taken a run at a time from a block of lines and recorded column by column.

``Rows.take`` matches the templates at a line start of a block, then at the next line start, and so on while one
matches: a cheap test of the templates' literal prefixes (one ``str.startswith``) turns most other lines away
first. The values of matched lines wait, as text, with those of the other templates' lines (train and evaluation
lines in turn), until the collector is next asked to record anything (its ``before_change``) or ``MAX_ROWS`` of a
template wait; then the numbers are read a table at a time (``decimals.py``) and go to their series in a few array
operations, in line order (``Collector.add_column_parts``).

Lines between them that the reader would read without any effect are skipped in the same run: *dead* lines (a line
the text reader found no trigger word in, remembered by its exact text: in this state its only possible effect is
ending a Keras bar's tail, ``keras.other_line``, which is applied) and lines of an inert template.

A Keras epoch (``Epoch 3/10`` and the bar's last line, the counter at its total) changes the Keras reader's state
as ``keras.parse`` would: the header records the epoch before (``keras.flush``), the bar's values wait as the new
epoch's pending values, and the counter at its total closes the epoch (phase "tail", set at once: a line after it
may end it). Within a run of such epochs
each one's values are recorded at the next header, so they are held here like other rows; the last one's become
the Keras state's pending values when the run ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from advisor.read.logs import keras
from advisor.read.logs.decimals import to_columns
from advisor.read.logs.records import Collector, ColumnPart
from advisor.read.logs.repeat import MAX_CHARS, MAX_INERT, MAX_TEMPLATES, Template, position, read_row

#: rows held before they are handed to the collector
MAX_ROWS = 4096
#: positions below this are exact in float64 after a product (``epoch * iterations per epoch + iteration``)
_EXACT = 2.0**26


class Rows:
    """Templates, and matched lines waiting to be recorded, all of one template, in file order."""

    def __init__(self, col: Collector, kstate: keras.KerasState) -> None:
        self.col = col
        self.kstate = kstate
        self.templates: list[Template] = []
        self.prefixes: tuple[str, ...] = ()  # the templates' literal prefixes
        self.epochs = False  # a template of Keras epochs (two lines) is kept
        self.last: Template | None = None  # the template that matched last
        #: the block being read holds only ASCII characters (the templates' ASCII regexes are used then)
        self.ascii = True
        #: rows held, by template (rows of several templates wait together: a flush records them in line order)
        self.held: dict[int, _Held] = {}
        self.tpl: Template | None = None  # the template rows are added to now, and its rows held:
        self.cells: list[str] = []  # the matched groups' text, row after row
        self.lines: list[int] = []  # the line number of each row
        self.texts: list[str] = []  # each row's line, for a template whose position is read from the line
        #: lines read in full that hold no trigger word (text.py adds them; warnings, code lines of tracebacks):
        #: they have no effect but the Keras tail's, and are skipped when seen again
        self.dead: set[str] = set()
        #: the Keras state's pending values as the last run of epochs left them, and that epoch's template row
        self.waiting: tuple[tuple, Template, tuple[str, ...], int] | None = None

    def add_template(self, tpl: Template) -> None:
        """Keep ``tpl`` first; beyond MAX_TEMPLATES record templates and MAX_INERT inert ones, the oldest go. A template
        learnt again stays the same object (rows held for it stay held)."""
        tpl = next((t for t in self.templates if t.pattern == tpl.pattern), tpl)
        others = [t for t in self.templates if t is not tpl]
        kept = [t for t in others if t.inert == tpl.inert][: (MAX_INERT if tpl.inert else MAX_TEMPLATES) - 1]
        self.templates[:] = [tpl, *kept, *[t for t in others if t.inert != tpl.inert]]
        self.prefixes = tuple({t.prefix for t in self.templates})
        self.epochs = any(t.kind == "keras" for t in self.templates)
        if self.last not in self.templates:
            self.last = None

    def keep(self, tpl: Template | None) -> bool:
        """Add a template just learnt (``None``: the line made none); says whether one was added."""
        if tpl is None:
            return False
        self.add_template(tpl)
        return True

    def take(self, block: str, pos: int, lineno: int) -> tuple[int, int]:
        """The lines from ``pos`` on that templates match, or that are dead (``dead``), one after another (``pos``: a
        line start of ``block``, which the caller reads with no traceback or table pending): held to be recorded, or
        skipped; returns the position and the line number after them (unchanged when the line at ``pos`` is none of
        these)."""
        templates, prefixes, dead = self.templates, self.prefixes, self.dead
        if not block.startswith(prefixes, pos):  # (no template can match: a dead line, or one the caller reads)
            end = block.find("\n", pos) + 1
            if not end or block[pos:end] not in dead:
                return pos, lineno
        kstate = self.kstate
        #: a bar at its total: a line that may be Keras output is read in full (or is an epoch of a template)
        tail = kstate.phase == "tail"
        use_ascii = self.ascii
        tpl = self.last or (templates[0] if templates else None)
        match = None if tpl is None else (tpl.ascii if use_ascii else tpl.regex).match  # type: ignore[union-attr]
        cells, lines = self.cells, self.lines
        epoch_before: tuple[Template, tuple[str, ...], int] | None = None  # the last Keras epoch of this run
        size = len(block)
        first_chars = keras.FIRST_CHARS
        failed = -1  # where the current template was just tried in vain
        stop = False  # a line the caller must read
        order: list | None = None  # each template's match, in their order (set when a tight loop starts)
        while pos < size:
            m = None if match is None or failed == pos else match(block, pos)
            if m is None and block.startswith(prefixes, pos):
                for t in templates:
                    if t is not tpl:
                        m = (t.ascii if use_ascii else t.regex).match(block, pos)  # type: ignore[union-attr]
                        if m is not None:
                            tpl = t
                            match = m.re.match
                            break
            if m is None:  # a line no template matches: skipped if dead, else the caller reads it
                end = block.find("\n", pos) + 1
                if not end or block[pos:end] not in dead:
                    break
                if tail and block[pos] not in first_chars:
                    keras.other_line(kstate)
                    tail = False
                lineno += 1
                pos = end
                continue
            end = m.end()
            kind = tpl.kind  # type: ignore[union-attr]
            if kind != "keras":
                if end - pos > MAX_CHARS:
                    break
                if tail:  # (a template line is plain text: its first character is the one the reader looks at)
                    if block[pos] in first_chars:
                        break  # (Keras may read it as output after the bar)
                    keras.other_line(kstate)
                    tail = False
                if kind == "record":
                    if tpl is not self.tpl:
                        self._switch(tpl)  # type: ignore[arg-type]
                        cells, lines = self.cells, self.lines
                    if not lines:
                        self.col.before_change = self.flush
                    cells.extend(m.groups())
                    lineno += 1
                    lines.append(lineno)
                    if tpl.position and tpl.where is None:  # type: ignore[union-attr]
                        self.texts.append(block[pos:end])
                    else:  # the lines after it that record templates take, and dead lines, in a tight loop
                        if order is None:
                            order = [((t.ascii if use_ascii else t.regex).match, t) for t in templates]  # type: ignore[union-attr]
                        end, lineno, failed, tpl, match = self._run(block, end, lineno, tpl, match, order)  # type: ignore[arg-type]
                        cells, lines = self.cells, self.lines
                    if len(lines) >= MAX_ROWS:
                        self.flush()
                        cells, lines = self.cells, self.lines
                else:
                    lineno += 1
            else:  # Keras epochs: this one, and the next ones the same template matches (dead lines between)
                if kstate.stepwise:  # (epochs read by step: each line is read in full, keras.flush)
                    break
                n, total = tpl.counter  # type: ignore[union-attr,misc]
                find = block.find
                while True:
                    mid = find("\n", pos) + 1
                    groups = m.groups()
                    if mid - pos > MAX_CHARS or end - mid > MAX_CHARS or groups[n - 1] != groups[total - 1]:
                        stop = True  # (a counter short of its total or past it: read in full)
                        break
                    if epoch_before is not None:  # the epoch before is recorded at this header
                        if epoch_before[0] is self.tpl and self.lines:  # (held in place: no call a row)
                            self.cells.extend(epoch_before[1])
                            self.lines.append(epoch_before[2])
                        else:
                            self._hold(*epoch_before)
                    elif self.waiting is not None and kstate.pending is self.waiting[0]:
                        kstate.pending = None  # (the last epoch of a run of ours: recorded as the rows are)
                        self._hold(*self.waiting[1:])
                    else:
                        keras.flush(self.col, kstate)
                        self.col.read.formats.add("keras")
                    lineno += 2
                    epoch_before = (tpl, groups, lineno)  # type: ignore[assignment]
                    tail = True
                    kstate.phase = "tail"  # (the bar at its total; a line after it may end that: keras.other_line)
                    pos = end
                    m = match(block, pos)  # type: ignore[misc]
                    while m is None:
                        end = find("\n", pos) + 1
                        if not end or block[pos:end] not in dead:
                            break
                        if tail and block[pos] not in first_chars:
                            keras.other_line(kstate)
                            tail = False
                        lineno += 1
                        pos = end
                        m = match(block, pos)  # type: ignore[misc]
                    if m is None:
                        failed = pos
                        break
                    end = m.end()
                if len(self.lines) >= MAX_ROWS:
                    self.flush()
                cells, lines = self.cells, self.lines
                if stop:
                    break
                continue
            pos = end
        self.last = tpl
        if epoch_before is not None:
            self._end_epochs(*epoch_before)
        return pos, lineno

    def _run(
        self, block: str, pos: int, lineno: int, tpl: Template, match: Callable, order: list[tuple[Callable, Template]]
    ) -> tuple[int, int, int, Template, Callable]:
        """The lines from ``pos`` on (a line start after a row of ``tpl``, ``match`` its regex's) that record templates
        take, and the dead and inert lines between them, in a tight loop: rows held, the others skipped. Returns the
        position and the line number after them, where a line no template of the loop takes is (-1: a line too long
        to be a template's), and the template and match in use there. ``order``: (match, template) of each template,
        in the order the caller tries them, after the one that took the last line the current template did not (a
        line has the shape of one template at most: which one is tried first changes nothing but the speed; a Keras
        template's line or one whose position is read from the line ends the loop)."""
        dead = self.dead
        cells, lines = self.cells, self.lines
        extend, append, find = cells.extend, lines.append, block.find
        recent = match, tpl
        while True:
            m = match(block, pos)
            if m is None:  # (no Keras tail here: a template line ended it)
                end = find("\n", pos) + 1
                if not end:
                    return pos, lineno, pos, tpl, match
                if block[pos:end] in dead:
                    lineno += 1
                    pos = end
                    continue
                if end - pos > MAX_CHARS:
                    return pos, lineno, pos, tpl, match
                # the template that took the last such line first (noise between rows: an INFO line, an eval line)
                other_match, other = recent
                if other is not tpl:
                    m = other_match(block, pos)
                if m is None:
                    for other_match, other in order:
                        if other is not tpl:
                            m = other_match(block, pos)
                            if m is not None:
                                break
                    if m is None:
                        return pos, lineno, pos, tpl, match
                    recent = other_match, other
                if other.kind == "inert":
                    lineno += 1
                    pos = end
                    continue
                if other.kind != "record" or (other.position and other.where is None):
                    return pos, lineno, pos, tpl, match  # (the caller takes it)
                tpl, match = other, other_match
                self._switch(tpl)
                cells, lines = self.cells, self.lines
                extend, append = cells.extend, lines.append
                if not lines:
                    self.col.before_change = self.flush
            end = m.end()
            if end - pos > MAX_CHARS:
                return pos, lineno, -1, tpl, match
            extend(m.groups())
            lineno += 1
            append(lineno)
            pos = end

    def _switch(self, tpl: Template) -> None:
        """Add the next rows to those held for ``tpl``."""
        held = self.held.get(id(tpl))
        if held is None:
            held = self.held[id(tpl)] = _Held(tpl)
        self.tpl = tpl
        self.cells, self.lines, self.texts = held.cells, held.lines, held.texts

    def _hold(self, tpl: Template, groups: tuple[str, ...], lineno: int) -> None:
        """Hold a Keras epoch's row. Its values are recorded at the next header, as ``keras.parse`` does: rows held
        since, which come after it in the file, are recorded first (a flush records rows in line order)."""
        if any(h.lines and h.lines[-1] > lineno for h in self.held.values()):
            self.flush()
        if tpl is not self.tpl:
            self._switch(tpl)
        if not self.lines:
            self.col.before_change = self.flush
        self.cells.extend(groups)
        self.lines.append(lineno)
        if len(self.lines) >= MAX_ROWS:
            self.flush()

    def _end_epochs(self, tpl: Template, groups: tuple[str, ...], lineno: int) -> None:
        """The Keras state after a run of epochs read by template: the last one's bar waits, at its total (its phase is
        set as each epoch is taken, and lines after the last one may have ended it)."""
        values, _, epoch = read_row(tpl, groups, "")
        state = self.kstate
        n, total = tpl.counter  # type: ignore[misc]
        state.pending = (values, lineno, epoch, None)
        state.trace = keras.trace_of(int(groups[n - 1]), values, lineno)  # (as keras.parse leaves it)
        state.partial = False  # (the counter at its total)
        self.waiting = (state.pending, tpl, groups, lineno)
        state.epoch = epoch
        state.last_n = int(groups[n - 1])
        state.seen = True
        self.col.read.steps_per_epoch = int(groups[total - 1])

    def flush(self) -> None:
        """Record the rows held back, in file order."""
        col = self.col
        col.before_change = None
        held = sorted((h for h in self.held.values() if h.lines), key=lambda h: h.lines[0])
        self.held = {}
        if self.tpl is not None:
            self._switch(self.tpl)
        if not held:
            return
        parts = [_columns(h) for h in held]
        for h, kept in zip(held, col.add_column_parts(parts)):
            if kept or h.tpl.position:
                col.read.formats.add(h.tpl.fmt)  # (a position prefix names its family whatever is kept)


class _Held:
    """The rows of one template waiting to be recorded."""

    def __init__(self, tpl: Template) -> None:
        self.tpl = tpl
        self.cells: list[str] = []
        self.lines: list[int] = []
        self.texts: list[str] = []


def _columns(held: _Held) -> ColumnPart:
    """The rows of ``held`` as the collector takes them: keys, value columns, lines, steps, epochs, split."""
    tpl, cells, lines, texts = held.tpl, held.cells, held.lines, held.texts
    n = len(lines)
    width = tpl.ascii.groups  # type: ignore[union-attr]
    table = to_columns(cells, width)  # (each number read as float() reads it)
    columns = []
    for _, g, pct in tpl.values:
        column = table[g - 1]
        columns.append(column / 100.0 if pct else column)
    nan = np.full(n, math.nan)
    steps = table[tpl.step - 1] if tpl.step is not None else nan
    epochs = table[tpl.epoch - 1] if tpl.epoch is not None else nan
    if tpl.where is not None:
        e, i, per, base = tpl.where
        if tpl.split == "eval":
            epochs = table[e - 1]
        elif float(np.max([table[g - 1].max() for g in (e, i, per)])) < _EXACT:
            epochs = table[e - 1]
            steps = (epochs - base) * table[per - 1] + table[i - 1]
        else:  # (integer arithmetic, as metriclogger.position does)
            where = [position(tpl, tuple(cells[r * width : (r + 1) * width]), None) for r in range(n)]
            steps = np.array([p[0] for p in where], dtype=np.float64)
            epochs = np.array([p[1] for p in where], dtype=np.float64)
    elif tpl.position:
        where = [position(tpl, tuple(cells[r * width : (r + 1) * width]), texts[r]) for r in range(n)]
        steps = np.array([math.nan if p[0] is None else p[0] for p in where], dtype=np.float64)
        epochs = np.array([math.nan if p[1] is None else p[1] for p in where], dtype=np.float64)
    keys = [key for key, _, _ in tpl.values]
    return ColumnPart(keys, columns, np.array(lines, dtype=np.int64), steps, epochs, tpl.split)
