"""The budgets of one evidence text (a user's rule file is untrusted: a template must not hang or flood): the
limits, the error past them, and the checks that ``evidence.render_budgeted`` and the jinja sandbox
(``sandbox.py``) share."""

from __future__ import annotations

import re
from typing import Any

MAX_EVIDENCE_CHARS = 20_000
MAX_RENDER_SECONDS = 2.0
MAX_VALUE = 100_000  # characters or items of any value a template makes on the way
MAX_WIDTH = 10_000  # widths, repeat counts and exponents in a template
#: a width or precision of 10000 or more in a format spec
WIDE_FORMAT_SPEC = re.compile(r"\d{5,}")


class TemplateBudgetError(Exception):
    """An evidence template that ran past its time or size budget."""


def check_count(n: Any, what: str) -> None:
    """Raise TemplateBudgetError for an integer ``n`` (a width, a count) above MAX_WIDTH."""
    if isinstance(n, int) and not isinstance(n, bool) and abs(n) > MAX_WIDTH:
        raise TemplateBudgetError(f"{what} {n} is above the limit of {MAX_WIDTH}")


def check_size(value: Any) -> Any:
    """``value``, or TemplateBudgetError when it is a text or a collection above MAX_VALUE."""
    if isinstance(value, (str, list, tuple, dict)) and len(value) > MAX_VALUE:
        raise TemplateBudgetError(f"a value of {len(value)} items or characters, above the limit of {MAX_VALUE}")
    return value
