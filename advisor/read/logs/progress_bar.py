"""tqdm and rich progress bars with a metrics postfix (Lightning's bar, hand-written loops), as text lines.

The bar's position (``| 40/100 [00:04<00:06, 9.5it/s, loss=0.41]``) is read by ``metriclogger.position`` and its
values by the key/value reader (``keyvalue_record.py``), which hands both to the ``BarState`` of the file: each
update prints a line, often twice per batch, so only a batch counter's last line is a point. A validation loop's
own bar (``read_validation_bar``) tells that the eval values shown next are a new evaluation.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs.records import Collector
from advisor.read.logs.keys import classify_key

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

#: a validation loop's own tqdm bar: Lightning's ``Validation DataLoader 0:``, ``Validation:`` (older: ``Validating:``),
#: with tqdm's bar and its timing bracket (``| 1/2 [00:00<00:00, 688.38it/s]``), so that a metrics line of a loop's own
#: (``Validation | loss: 0.41``) is still read
_VALIDATION_BAR_RE = re.compile(r"\s*Validat(?:ion|ing)\b[^|\n]*\|.*\|.*\[\d+:\d+<")
#: the first characters of a validation bar's line
FIRST_CHARS = frozenset("V \n")


class BarState:
    """A tqdm bar with a metrics postfix: each update prints a line, often twice per batch (before and after
    the postfix is set), and eval values (``val_loss``) stay on every line until the next validation. One
    point per batch counter: the counter's last line; an eval value only when it changes."""

    def __init__(self) -> None:
        self.pending: tuple[dict[str, float], int, float | None, float | None] | None = None
        self.last_eval: dict[str, float] = {}
        #: a validation bar (Lightning's ``Validation DataLoader 0: 100%|...| 2/2``) ran since the last eval values
        #: were kept: the next ones are a new evaluation even when they repeat the last (a model that stopped moving)
        self.validated = False

    def end_of_epoch(self, values: dict[str, float]) -> None:
        """A bar's first line of an epoch (counter 0): eval values new there are the validation run at the end of
        the epoch before: they join that epoch's last point."""
        if self.pending is None:
            return
        for k, v in values.items():
            info = classify_key(k)
            if info is not None and info.split == "eval" and (self.validated or self.last_eval.get(k) != v):
                self.pending[0][k] = v

    def flush(self, col: Collector) -> None:
        if self.pending is None:
            return
        values, lineno, step, epoch = self.pending
        self.pending = None
        evals = [k for k in values if (info := classify_key(k)) is not None and info.split == "eval"]
        for key in evals:
            if self.last_eval.get(key) == values[key] and not self.validated:
                del values[key]  # the same value shown again: not a new evaluation
            else:
                self.last_eval[key] = values[key]
        if evals:
            self.validated = False
        if values:
            col.add_record(values, lineno, step=step, epoch=epoch)

    def show(
        self, col: Collector, values: dict[str, float], lineno: int, step: float | None, epoch: float | None
    ) -> None:
        """A bar's line at batch ``step``: it replaces the pending line of the same counter, else records that."""
        if self.pending is not None and self.pending[2:4] != (step, epoch):
            self.flush(col)
        self.pending = (values, lineno, step, epoch)

    finish = flush


def read_validation_bar(r: Reading, state: BarState, line: str, low: str, lineno: int) -> bool:
    """A validation loop's bar: the eval values the epoch's bar shows next are new."""
    if _VALIDATION_BAR_RE.match(line) and "|" in line:
        state.validated = True
        return True
    return False
