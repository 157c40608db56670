"""A plain-Python evaluator of the same checked rules, without durable-rules.

It is the yardstick of ``benchmarks/engine_bench.py`` (engine time as a ratio
against this loop) and the cross-check of the engine's results in the tests.
It is not used to diagnose. Semantics match the compiled engine: a pattern
matches facts of the run unless it names ``side``; a field that is None or
non-finite matches nothing but ``exists: false``; ordering operators hold only
on numbers.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

from advisor.rulebase import schema as S


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _present(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and not math.isfinite(v))


def _cond(c: S.Condition, fact: dict, params: dict, bound: dict[str, dict]) -> bool:
    def val(v: S.Value):
        if isinstance(v, S.Literal_):
            return v.value
        if isinstance(v, S.Param):
            return params[v.name]
        return bound[v.alias].get(v.field)

    x = fact.get(c.field)
    if c.op == "exists":
        return _present(x) is c.value.value
    if not _present(x):
        return False
    if c.op == "eq":
        y = val(c.value)
        return _present(y) and x == y and isinstance(x, bool) == isinstance(y, bool)
    if c.op == "ne":
        y = val(c.value)
        return _present(y) and x != y
    if c.op in ("gt", "ge", "lt", "le"):
        y = val(c.value)
        if not (_num(x) and _num(y)):
            return False
        return {"gt": x > y, "ge": x >= y, "lt": x < y, "le": x <= y}[c.op]
    if c.op == "in":
        return any(x == val(v) and isinstance(x, bool) == isinstance(val(v), bool) for v in c.value)
    if c.op == "between":
        lo, hi = (val(v) for v in c.value)
        return _num(x) and lo <= x <= hi
    if c.op == "contains":
        return isinstance(x, str) and re.search(re.escape(str(val(c.value))), x) is not None
    raise ValueError(c.op)


def matches(p: S.Pattern, fact: dict, params: dict, bound: dict[str, dict]) -> bool:
    """Does ``fact`` match pattern ``p`` (``bound``: the facts other patterns matched, for references)?"""
    if fact.get("kind") != p.kind:
        return False
    if not any(c.field == "side" for c in p.conditions) and fact.get("side", "run") != "run":
        return False
    return all(_cond(c, fact, params, bound) for c in p.conditions)


def evaluate(rule: S.Rule, facts: list[dict], params: dict | None = None) -> list[dict[str, int]]:
    """Every binding (pattern alias -> fact index) for which the rule fires."""
    params = dict(rule.params if params is None else params)
    by_kind: dict[str, list[int]] = {}
    for i, f in enumerate(facts):
        by_kind.setdefault(f.get("kind"), []).append(i)
    if rule.mode == "any":
        out = []
        for p in rule.items:
            out.extend({p.alias: i} for i in by_kind.get(p.kind, []) if matches(p, facts[i], params, {}))
        return out
    positives = [i for i in rule.items if isinstance(i, S.Pattern)]
    anys = [i for i in rule.items if isinstance(i, S.AnyOf)]
    nots = [i for i in rule.items if isinstance(i, S.Not)]

    def local(p: S.Pattern, f: dict) -> bool:  # the pattern's own conditions, references left for the join
        return matches(local_pattern(p), f, params, {})

    # filter each pattern's candidates on its own conditions first, then join (a hand-written loop would)
    slots: list[list[tuple[S.Pattern, int]]] = [
        [(p, i) for i in by_kind.get(p.kind, []) if local(p, facts[i])] for p in positives]
    slots += [[(p, i) for p in a.items for i in by_kind.get(p.kind, []) if local(p, facts[i])] for a in anys]
    out = []
    for combo in itertools.product(*slots):
        if len({i for _, i in combo}) < len(combo):
            continue  # one fact fills one pattern of a rule
        bound = {p.alias: facts[i] for p, i in combo}
        if not all(matches(p, facts[i], params, bound) for p, i in combo):
            continue
        used = {i for _, i in combo}  # `not` looks at the other facts
        if any(matches(n.pattern, facts[j], params, bound) for n in nots
               for j in by_kind.get(n.pattern.kind, []) if j not in used):
            continue
        out.append({p.alias: i for p, i in combo})
    return out


def _has_ref(c: S.Condition) -> bool:
    vals = c.value if isinstance(c.value, tuple) else (c.value,)
    return any(isinstance(v, S.Ref) for v in vals)


def has_refs(p: S.Pattern) -> bool:
    return any(_has_ref(c) for c in p.conditions)


def local_pattern(p: S.Pattern) -> S.Pattern:
    """The pattern without its conditions that refer to other facts."""
    return S.Pattern(p.kind, p.alias, [c for c in p.conditions if not _has_ref(c)], p.pos)
