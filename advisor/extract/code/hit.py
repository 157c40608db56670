"""What a code check returns: the place and what the code does there."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hit:
    """One finding of a check: its id, the line it points at, one sentence, and the framework it is about."""

    check: str
    line: int
    detail: str
    framework: str = "torch"
