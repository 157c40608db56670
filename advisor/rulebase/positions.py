"""Rule-file values that remember where they were written (line, column), for diagnostics."""

from __future__ import annotations

from typing import Any

from advisor.rulebase import schema as S


class PosDict(dict):
    """A mapping that remembers where its keys and values were written."""

    start: S.Pos = (1, 1)

    def __init__(self) -> None:
        super().__init__()
        self.key_pos: dict[Any, S.Pos] = {}
        self.val_pos: dict[Any, S.Pos] = {}


class PosList(list):
    start: S.Pos = (1, 1)

    def __init__(self) -> None:
        super().__init__()
        self.pos: list[S.Pos] = []
