"""Every shipped rule file (rules/**/*.yaml) conforms to the JSON Schema that ``advisor rules schema`` prints.

Editors validate rule files with that schema; a shipped rule it rejects would be underlined as wrong in the
user's editor, and a schema that drifts from the rule format (a new key, a new fact field) would go unseen.
``jsonschema`` is not a dependency of the project, so a small validator of the keywords the schema uses
checks the rules; a keyword it does not know fails the test (the schema grew: teach the validator).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from advisor.rulebase import builtin_rules_dir

RULES_DIR = builtin_rules_dir()
RULE_FILES = sorted(RULES_DIR.rglob("*.yaml"))

# keywords that only describe; everything else in the schema must be one _errors checks
ANNOTATIONS = {"$schema", "title", "description", "$defs"}
CHECKED = {
    "$ref", "type", "enum", "pattern", "minimum", "maximum", "properties", "additionalProperties", "required",
    "minProperties", "maxProperties", "items", "minItems", "maxItems", "anyOf", "oneOf",
}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def _errors(value, schema: dict, path: str, first: bool = False) -> list[str]:
    """The ways ``value`` breaks ``schema`` (draft 2020-12, the keywords in CHECKED), each with where;
    with ``first``, only the first found (enough to tell whether an anyOf alternative matches)."""
    unknown = set(schema) - CHECKED - ANNOTATIONS
    assert not unknown, f"the schema uses {sorted(unknown)} at {path}: teach this test's validator"
    if "$ref" in schema:  # a definition of $defs (the only references the schema makes: "#/$defs/NAME")
        ref = schema["$ref"]
        assert ref.startswith("#/$defs/"), f"the schema refers to {ref!r} at {path}: teach this test's validator"
        target = printed_schema()["$defs"][ref.removeprefix("#/$defs/")]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[t](value) for t in types):
            return [f"{path}: {value!r} is not of type {' or '.join(types)}"]
    out: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        out.append(f"{path}: {value!r} does not match {schema['pattern']!r}")
    if TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: {value!r} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: {value!r} is above the maximum {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out += [f"{path}: required key {k!r} is missing" for k in schema.get("required", ()) if k not in value]
        if len(value) < schema.get("minProperties", 0) or len(value) > schema.get("maxProperties", len(value)):
            out.append(f"{path}: {len(value)} keys, not between {schema.get('minProperties')} and "
                       f"{schema.get('maxProperties')}")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if first and out:
                return out
            where = f"{path}.{key}"
            if key in props:
                out += _errors(item, props[key], where, first)
            elif extra is False:
                out.append(f"{path}: unknown key {key!r} (allowed: {', '.join(sorted(props))})")
            elif isinstance(extra, dict):
                out += _errors(item, extra, where, first)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            out.append(f"{path}: {len(value)} items, not between {schema.get('minItems')} and {schema.get('maxItems')}")
        if "items" in schema:
            for i, item in enumerate(value):
                if first and out:
                    return out
                out += _errors(item, schema["items"], f"{path}[{i}]", first)
    for keyword in ("anyOf", "oneOf"):
        if keyword not in schema or first and out:
            continue
        alternatives = schema[keyword]
        passed = sum(1 for alternative in alternatives if not _errors(value, alternative, path, first=True))
        if keyword == "anyOf" and not passed or keyword == "oneOf" and passed != 1:
            # the alternative that got furthest (its first error deepest) says best what is wrong
            tries = [t for t in (_errors(value, a, path, first=True) for a in alternatives) if t]
            closest = max(tries, key=lambda t: len(t[0].split(": ")[0]), default=[])
            out.append(f"{path}: matches {passed} of the {keyword} alternatives, not {'one' if passed else 'any'}"
                       + (f"; closest: {closest[0]}" if closest else ""))
    return out


@lru_cache(maxsize=1)
def printed_schema() -> dict:
    """The schema ``advisor rules schema`` prints: the function and argument the command calls
    (advisor/cli_rules.py), through JSON as the command writes it."""
    from advisor.facts import FACT_KINDS
    from advisor.rulebase.schema import json_schema

    return json.loads(json.dumps(json_schema(FACT_KINDS)))


def rule_documents(path: Path) -> list:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return data if isinstance(data, list) else [data]


def test_rule_files_are_found():
    assert len(RULE_FILES) > 100, f"only {len(RULE_FILES)} rule files under {RULES_DIR}"


def test_every_shipped_rule_file_matches_the_printed_schema():
    schema = printed_schema()
    problems = []
    for path in RULE_FILES:
        for i, doc in enumerate(rule_documents(path)):
            where = f"{path.relative_to(RULES_DIR.parent)}" + (f"[{i}]" if i else "")
            problems += [f"{where}: {e}" for e in _errors(doc, schema, "rule")]
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("change,expected", [
    (lambda r: r.update(colour="red"), "unknown key 'colour'"),
    (lambda r: r.update(confidence="high"), "'high' is not of type number"),
    (lambda r: r.update(severity="urgent"), "'urgent' is not one of"),
    (lambda r: r.pop("title"), "required key 'title' is missing"),
    (lambda r: r["when"]["all"].append({"symptom": {"no_such_field": 1}}), "unknown key 'no_such_field'"),
    (lambda r: r["when"]["all"].append({"no_such_fact_kind": {}}), "matches 0 of the anyOf alternatives"),
])
def test_the_check_rejects_a_broken_rule(change, expected):
    """The validator is not vacuous: a shipped rule with one thing broken fails it, saying what."""
    rule = next(r for path in RULE_FILES for r in rule_documents(path) if "all" in r.get("when", {}))
    assert not _errors(rule, printed_schema(), "rule")
    change(rule)
    problems = _errors(rule, printed_schema(), "rule")
    assert any(expected in p for p in problems), problems


def test_the_printed_schema_defines_what_it_repeats_once():
    """The conditions of every fact field share one definition ($defs), so the schema an editor loads stays small
    (it was 32 MB when each field repeated them)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "advisor", "rules", "schema"], capture_output=True, text=True,
                         check=True).stdout
    assert len(out) < 1_000_000
    schema = json.loads(out)
    assert set(schema["$defs"]) == {"value", "condition", "pattern", "test_case"}
