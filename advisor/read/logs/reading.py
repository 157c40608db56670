"""One text log being read: what the line loop (``text.py``) shares with the families' line readers.

A family's reader (a row of ``registry.FAMILIES``) is called as ``read(reading, state, line, low, lineno)`` and
gets here the collector to record into, the templates (``template_rows.Rows``) with the credit that pays for
learning them, and the states of the other families (``states``, by class), created for this file.
"""

from __future__ import annotations

from typing import Any, Protocol

from advisor.read.logs.records import Collector
from advisor.read.logs.repeat import Template

#: the most template compilations allowed before they pay off (each costs ~10 lines' reading)
MAX_CREDIT = 8.0


class HeldRows(Protocol):
    """What a family reader asks of the templates' rows (``template_rows.Rows``, which replays Keras state)."""

    def keep(self, tpl: Template | None) -> bool:
        """Add a template just learnt (``None``: the line made none); says whether one was added."""
        ...

    def flush(self) -> None:
        """Record the rows held back, in file order."""
        ...


class Reading:
    """The collector, the templates and the families' states of one file."""

    __slots__ = ("col", "read", "rows", "credit", "states")

    def __init__(self, col: Collector, rows: HeldRows, states: dict[type, Any]) -> None:
        self.col = col
        self.read = col.read
        self.rows = rows  # lines with the shape of a line read before (repeat.py, template_rows.py)
        self.credit = MAX_CREDIT  # template compilations allowed now
        self.states = states  # each family's state for this file, by its class

    def earn(self, amount: float) -> bool:
        """Credit for lines a template read (or would have read); True when a template may be learnt now."""
        self.credit = min(MAX_CREDIT, self.credit + amount)
        return self.credit >= 1.0

    def keep(self, tpl: Template | None) -> None:
        """Keep a template just learnt (None: the line made none), paid from the credit."""
        if self.rows.keep(tpl):
            self.credit -= 1.0
