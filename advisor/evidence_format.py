"""Number formatting shared by evidence texts and reports (filters num, pct, step)."""

from __future__ import annotations

import math
from typing import Any


def _undefined(value: Any) -> bool:
    return value is None or type(value).__name__.endswith("Undefined")


def fmt_num(value: Any, digits: int = 4) -> str:
    """0.000123 -> '1.23e-04', 1234567 -> '1.23e+06', 12.5 -> '12.5', 3.0 -> '3', nan -> 'nan'."""
    if _undefined(value):
        return "?"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-4:
        return f"{value:.{max(digits - 2, 1)}e}"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.{digits}g}"


def fmt_pct(value: Any, digits: int = 1) -> str:
    if _undefined(value) or isinstance(value, bool) or not isinstance(value, (int, float)):
        return "?"
    return f"{100 * value:.{digits}f}%"


def fmt_step(value: Any) -> str:
    if _undefined(value):
        return "?"
    return str(int(value)) if isinstance(value, (int, float)) and math.isfinite(value) else str(value)


#: the filters evidence texts and report templates use, by name (one table: the sandbox, the plain evidence path
#: and the report environments register these same functions)
FILTERS = {"num": fmt_num, "pct": fmt_pct, "step": fmt_step}
