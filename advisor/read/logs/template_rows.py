"""Lines that templates match (repeat.py), taken a run at a time from a block of lines and recorded column by column.

``Rows.take`` matches the templates at a line start of a block, then at the next line start, and so on while one
matches: a cheap test of the templates' literal prefixes (one ``str.startswith``) turns most other lines away
first. The values of matched lines wait, as text, until the collector is next asked to record anything (its
``before_change``) or ``MAX_ROWS`` wait; then each column is converted with one numpy call and goes to its series
in a few array operations (``Collector.add_columns``), in file order.

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

import numpy as np

from advisor.read.logs import keras
from advisor.read.logs.records import Collector
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
        self.tpl: Template | None = None  # the template of the rows held
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
        tpl = next((t for t in self.templates if t.regex.pattern == tpl.regex.pattern), tpl)
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
        inert: list | None = None  # the inert templates' match (set when a tight loop starts)
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
                        self.flush()
                        self.tpl = tpl
                        cells, lines = self.cells, self.lines
                    if not lines:
                        self.col.before_change = self.flush
                    cells.extend(m.groups())
                    if tpl.position and tpl.where is None:  # type: ignore[union-attr]
                        self.texts.append(block[pos:end])
                        lineno += 1
                        lines.append(lineno)
                    else:  # the lines after it that the same template matches, and dead lines, in a tight loop
                        extend, append, find = cells.extend, lines.append, block.find
                        if inert is None:
                            inert = [(t.ascii if use_ascii else t.regex).match for t in templates if t.inert]  # type: ignore[union-attr]
                        lineno += 1
                        append(lineno)
                        pos = end
                        while True:
                            m = match(block, pos)  # type: ignore[misc]
                            if m is None:
                                # a line skipped as dead or inert (no Keras tail here: the template line ended it)
                                end = find("\n", pos) + 1
                                if end and (
                                    block[pos:end] in dead
                                    or (end - pos <= MAX_CHARS and any(skip(block, pos) for skip in inert))
                                ):
                                    lineno += 1
                                    pos = end
                                    continue
                                failed = pos
                                break
                            end = m.end()
                            if end - pos > MAX_CHARS:
                                m = None
                                break
                            extend(m.groups())
                            lineno += 1
                            append(lineno)
                            pos = end
                        end = pos
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
                        if epoch_before[0] is self.tpl:
                            if not self.lines:
                                self.col.before_change = self.flush
                            self.cells.extend(epoch_before[1])
                            self.lines.append(epoch_before[2])
                        else:  # (rows of another template were held since)
                            self._hold(*epoch_before)
                    else:
                        if self.waiting is not None and kstate.pending is self.waiting[0]:
                            kstate.pending = None  # (the last epoch of a run of ours: recorded as the rows are)
                            self._hold(*self.waiting[1:])
                        else:
                            keras.flush(self.col, kstate)
                            self.col.read.formats.add("keras")
                        if tpl is not self.tpl:
                            self.flush()
                            self.tpl = tpl
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

    def _hold(self, tpl: Template, groups: tuple[str, ...], lineno: int) -> None:
        if tpl is not self.tpl:
            self.flush()
            self.tpl = tpl
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
        tpl, lines = self.tpl, self.lines
        if tpl is None or not lines:
            return
        cells, texts = self.cells, self.texts
        self.cells, self.lines, self.texts = [], [], []
        n = len(lines)
        width = tpl.regex.groups
        table = np.array(cells, dtype=np.float64).reshape(n, width)  # (parses as float() does)
        columns = []
        for _, g, pct in tpl.values:
            column = table[:, g - 1]
            columns.append(column / 100.0 if pct else column)
        nan = np.full(n, math.nan)
        steps = table[:, tpl.step - 1] if tpl.step is not None else nan
        epochs = table[:, tpl.epoch - 1] if tpl.epoch is not None else nan
        if tpl.where is not None:
            e, i, per, base = tpl.where
            if tpl.split == "eval":
                epochs = table[:, e - 1]
            elif float(table[:, [e - 1, i - 1, per - 1]].max()) < _EXACT:
                epochs = table[:, e - 1]
                steps = (epochs - base) * table[:, per - 1] + table[:, i - 1]
            else:  # (integer arithmetic, as metriclogger.position does)
                where = [position(tpl, tuple(cells[r * width : (r + 1) * width]), None) for r in range(n)]
                steps = np.array([p[0] for p in where], dtype=np.float64)
                epochs = np.array([p[1] for p in where], dtype=np.float64)
        elif tpl.position:
            where = [position(tpl, tuple(cells[r * width : (r + 1) * width]), texts[r]) for r in range(n)]
            steps = np.array([math.nan if p[0] is None else p[0] for p in where], dtype=np.float64)
            epochs = np.array([math.nan if p[1] is None else p[1] for p in where], dtype=np.float64)
        keys = [key for key, _, _ in tpl.values]
        if col.add_columns(keys, columns, np.array(lines, dtype=np.int64), steps, epochs, tpl.split) or tpl.position:
            col.read.formats.add(tpl.fmt)  # (a position prefix names its family whatever is kept)
