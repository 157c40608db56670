"""The rule format as data: what a YAML rule file becomes once checked.

See docs/writing-rules.md for the format a user writes. ``json_schema()``
gives a JSON Schema of it for editors (``advisor rules schema``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Union

SEVERITIES = ("low", "medium", "high")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
OPERATORS = ("eq", "ne", "gt", "ge", "lt", "le", "in", "contains", "between", "exists")
TOP_KEYS = (
    "id",
    "cause",
    "finding",
    "title",
    "severity",
    "confidence",
    "params",
    "when",
    "evidence",
    "remedies",
    "doc",
    "tests",
    "tags",
)
REQUIRED_KEYS = ("id", "title", "severity", "confidence", "when", "evidence", "doc", "tests")
DOC_KEYS = ("what", "why", "fix")
DOC_OPTIONAL = ("references",)
TEST_CASE_KEYS = ("name", "facts", "evidence_has")

Pos = tuple[int, int]  # 1-based line, column


@dataclass(frozen=True)
class Literal_:
    value: Any


@dataclass(frozen=True)
class Param:
    name: str


@dataclass(frozen=True)
class Ref:
    alias: str
    field: str


Value = Union[Literal_, Param, Ref]


@dataclass(frozen=True)
class Condition:
    field: str
    op: str
    value: Value | tuple[Value, ...] | None  # tuple for in/between; None for exists handled by value


@dataclass
class Pattern:
    kind: str
    alias: str  # name in the evidence template (the kind, or `as:`)
    conditions: list[Condition]
    pos: Pos = (0, 0)


@dataclass
class Not:
    pattern: Pattern


@dataclass
class AnyOf:
    items: list[Pattern]


Item = Union[Pattern, Not, AnyOf]


@dataclass
class TestCase:
    name: str
    facts: list[Any]  # validated Fact objects
    evidence_has: str | None = None
    pos: Pos = (0, 0)


@dataclass
class Rule:
    id: str
    title: str
    severity: Literal["low", "medium", "high"]
    confidence: float
    mode: Literal["all", "any"]
    items: list[Item]
    evidence: str
    remedies: list[str]
    doc: dict[str, Any]
    cause: str | None = None
    finding: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    fires: list[TestCase] = field(default_factory=list)
    quiet: list[TestCase] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    path: str = ""
    pos: Pos = (1, 1)
    #: the title a causes.yaml beside the rule file declares for its custom cause id
    cause_title: str | None = None

    @property
    def concludes(self) -> str:
        return self.cause or self.finding or ""

    def patterns(self) -> list[Pattern]:
        out: list[Pattern] = []
        for item in self.items:
            if isinstance(item, Pattern):
                out.append(item)
            elif isinstance(item, AnyOf):
                out.extend(item.items)
        return out

    def negated_kinds(self) -> set[str]:
        return {i.pattern.kind for i in self.items if isinstance(i, Not)}


def json_schema(fact_kinds: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of a rule file, with the known fact kinds and fields; what several places
    share (a value, a condition on a field, a fact pattern, a test case) is defined once under ``$defs``."""
    value = {
        "anyOf": [
            {"type": ["number", "string", "boolean"]},
            {
                "type": "object",
                "properties": {"ref": {"type": "string", "pattern": r"^\w+\.\w+$"}},
                "required": ["ref"],
                "additionalProperties": False,
            },
        ]
    }
    ref = {"$ref": "#/$defs/value"}
    ops = {
        "eq": ref,
        "ne": ref,
        "gt": ref,
        "ge": ref,
        "lt": ref,
        "le": ref,
        "in": {"type": "array", "items": ref},
        "contains": {"type": "string"},
        "between": {"type": "array", "items": ref, "minItems": 2, "maxItems": 2},
        "exists": {"type": "boolean"},
    }
    cond = {"anyOf": [{"$ref": "#/$defs/value"}, {"type": "object", "properties": ops, "additionalProperties": False}]}
    patterns = []
    for kind, model in fact_kinds.items():
        props = {
            name: {"$ref": "#/$defs/condition", "description": (f.description or "")}
            for name, f in model.model_fields.items()
            if name not in ("kind", "source")
        }
        patterns.append(
            {
                "type": "object",
                "properties": {
                    kind: {
                        "type": "object",
                        "properties": props,
                        "additionalProperties": False,
                        "description": getattr(model, "doc", ""),
                    },
                    "as": {"type": "string"},
                },
                "required": [kind],
                "additionalProperties": False,
            }
        )
    pattern = {"$ref": "#/$defs/pattern"}
    item = {
        "anyOf": [
            pattern,
            {"type": "object", "properties": {"not": pattern}, "required": ["not"], "additionalProperties": False},
            {
                "type": "object",
                "properties": {"any": {"type": "array", "items": pattern}},
                "required": ["any"],
                "additionalProperties": False,
            },
        ]
    }
    fact_item = {
        "anyOf": [
            {"type": "object", "properties": {k: {"type": "object"}}, "required": [k], "additionalProperties": False}
            for k in fact_kinds
        ]
    }
    case = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "facts": {"type": "array", "items": fact_item},
            "evidence_has": {"type": "string"},
        },
        "required": ["name", "facts"],
        "additionalProperties": False,
    }
    defs = {"value": value, "condition": cond, "pattern": {"anyOf": patterns}, "test_case": case}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "advisor rule",
        "$defs": defs,
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9_.-]*$"},
            "cause": {"type": "string"},
            "finding": {"type": "string"},
            "title": {"type": "string"},
            "severity": {"enum": list(SEVERITIES)},
            "confidence": {"type": "number", "minimum": -1, "maximum": 1},
            "params": {"type": "object", "additionalProperties": {"type": ["number", "string", "boolean"]}},
            "when": {
                "type": "object",
                "properties": {"all": {"type": "array", "items": item}, "any": {"type": "array", "items": pattern}},
                "minProperties": 1,
                "maxProperties": 1,
                "additionalProperties": False,
            },
            "evidence": {"type": "string"},
            "remedies": {"type": "array", "items": {"type": "string"}},
            "doc": {
                "type": "object",
                "properties": {k: {"type": "string"} for k in DOC_KEYS}
                | {"references": {"type": "array", "items": {"type": "string"}}},
                "required": list(DOC_KEYS),
                "additionalProperties": False,
            },
            "tests": {
                "type": "object",
                "properties": {
                    "fires": {"type": "array", "items": {"$ref": "#/$defs/test_case"}, "minItems": 1},
                    "quiet": {"type": "array", "items": {"$ref": "#/$defs/test_case"}, "minItems": 1},
                },
                "required": ["fires", "quiet"],
                "additionalProperties": False,
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": list(REQUIRED_KEYS),
        "oneOf": [{"required": ["cause"]}, {"required": ["finding"]}],
        "additionalProperties": False,
    }
