"""What the rule checker's parts share: the types each fact field accepts (from the fact models), the
patterns of aliases and ``contains`` values, and the "did you mean" suggestion."""

from __future__ import annotations

import difflib
import re
import types
import typing
from typing import Any, Iterable, cast

import advisor.facts as vocabulary
from advisor.errors import Diagnostic
from advisor.rulebase import schema as S
from advisor.rulebase.positions import PosDict

ALIAS_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: characters `contains` cannot express in the engine's pattern language
CONTAINS_FORBIDDEN = set("[]\\^")


def _type_categories(annotation: Any) -> tuple[set[str], tuple[Any, ...] | None]:
    """Categories (number/string/bool) a fact field accepts, and its Literal choices if any."""
    cats: set[str] = set()
    choices: list[Any] = []
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            c, ch = _type_categories(arg)
            cats |= c
            if ch:
                choices.extend(ch)
        return cats, tuple(choices) or None
    if origin is typing.Literal:
        args = typing.get_args(annotation)
        for a in args:
            cats.add("bool" if isinstance(a, bool) else "number" if isinstance(a, (int, float)) else "string")
        return cats, args
    if annotation is bool:
        return {"bool"}, None
    if annotation in (int, float):
        return {"number"}, None
    if annotation is str:
        return {"string"}, None
    if annotation is type(None):
        return set(), None
    return {"other"}, None


def value_category(value: Any) -> str:
    """The category of a rule's value as the fact fields' types are checked: bool, number, string or its type's name."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def field_types(kind: str) -> dict[str, tuple[set[str], tuple[Any, ...] | None]]:
    model = vocabulary.FACT_KINDS[kind]
    return {
        name: _type_categories(f.annotation) for name, f in model.model_fields.items() if name not in ("kind", "source")
    }


def suggest(word: str, options: Iterable[str]) -> str | None:
    """The "did you mean" hint for ``word``: the closest of ``options``, or None when none is close."""
    match = difflib.get_close_matches(str(word), list(options), n=1, cutoff=0.6)
    return f"did you mean '{match[0]}'?" if match else None


class CheckerBase:
    """What every part of the rule checker uses: where the rule is, its problems, and node positions."""

    path: str
    data: PosDict
    diags: list[Diagnostic]
    rule_id: str | None
    errors: int
    params: dict[str, Any]

    def err(
        self,
        pos: S.Pos,
        message: str,
        code: str = "rule-schema",
        expected: str | None = None,
        hint: str | None = None,
        severity: str = "error",
    ) -> None:
        if severity == "error":
            self.errors += 1
        self.diags.append(
            Diagnostic(
                path=self.path,
                line=pos[0],
                column=pos[1],
                code=code,
                message=message,
                expected=expected,
                hint=hint,
                severity=severity,
                rule=self.rule_id,
            )
        )

    # -- helpers
    def _vpos(self, mapping: Any, key: Any, default: S.Pos | None = None) -> S.Pos:
        if isinstance(mapping, PosDict) and key in mapping.val_pos:
            return mapping.val_pos[key]
        return default or cast(S.Pos, getattr(mapping, "start", (1, 1)))

    def _kpos(self, mapping: Any, key: Any) -> S.Pos:
        if isinstance(mapping, PosDict) and key in mapping.key_pos:
            return mapping.key_pos[key]
        return getattr(mapping, "start", (1, 1))
