"""Megatron-LM's evaluation print (``megatron/training.py``, ``evaluate_and_print_results``).

``string = ' validation loss at {} | '.format(prefix)`` then, for each loss, ``'{} value: {:.6E} | '`` and
``'{} PPL: {:.6E} | '`` (the perplexity of that loss): ``validation loss at iteration 1000 | lm loss value:
6.512E+00 | lm loss PPL: 6.734E+02 |`` (Megatron-Core adds `` on validation set``). The prefix is ``iteration N``
during training (an evaluation at that step) and ``the end of training for val data`` / ``... for test data`` after
it (at the last step; the test data's is a test evaluation). The training lines (`` iteration 10/ 100 | ... | lm
loss: 6.5E+00 | ...``) are key/value pairs (``keyvalue``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs.keyvalue import NUM
from advisor.read.logs.keys import parse_number

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

_HEAD_RE = re.compile(r"\bvalidation loss at (?:iteration (\d+)|the end of training for (\w+) data)")
#: ``| lm loss value: 6.5E+00`` / ``| lm loss PPL: 6.7E+02``
_VALUE_RE = re.compile(r"\|\s*([A-Za-z][\w-]*(?: [\w-]+){0,4}) (value|PPL): (" + NUM + r")")


def read_line(r: Reading, state: None, line: str, low: str, lineno: int) -> bool:
    """True when the line was Megatron's evaluation print (recorded as evaluation, or test)."""
    col = r.col
    m = _HEAD_RE.search(line)
    if m is None:
        return False
    values = {}
    for name, kind, raw in _VALUE_RE.findall(line, m.end()):
        val = parse_number(raw)
        if val is not None:
            key = "_".join(name.split())
            values[key if kind == "value" else f"{key}_ppl"] = val
    if not values:
        return False
    if m.group(1) is not None:
        col.add_record(values, lineno, step=float(m.group(1)), split="eval")
    else:
        last = col.read.last_step
        col.add_record(
            values, lineno, step=last if last == last else None, split="test" if m.group(2) == "test" else "eval"
        )
    col.read.formats.add("megatron")
    return True
