"""The built-in matcher: a rule engine back-end in plain Python.

It runs the checked rules (``schema.Rule`` with their effective params) where
durable-rules does not import (Python 3.13 and later) or when asked
(``--engine python``); ``backends.py`` chooses. Its semantics are those of the
durable back-end, and the tests hold both to identical firings on every
built-in rule case and on random fact sets:

- a pattern matches facts of the run unless it names ``side``;
- a field that is None or non-finite matches nothing but ``exists: false``;
- ordering operators (gt, ge, lt, le, between) hold only on numbers;
- one fact fills at most one pattern of a rule;
- ``not:`` holds when no *other* fact (one the firing did not match) matches
  the negated pattern, references resolved against the firing's facts.

How it matches: the facts are indexed by kind once per evaluation (and by a
field's value where a pattern tests it for equality); each pattern's own
conditions (those without references) are compiled to value tests and select
its facts once per evaluation, shared by every rule with the same pattern; the
patterns are then joined by backtracking, fewest candidates first, each
reference checked as soon as the facts it names are bound; ``not:`` patterns
select their candidates once per rule. ``plain_evaluate`` is the
same semantics as one product over the filtered candidates: the yardstick of
``benchmarks/engine_bench.py`` and the oracle of the cross-check tests.
"""

from __future__ import annotations

import itertools
import math
import operator
from dataclasses import dataclass
from typing import Any, Callable, cast

from advisor.rulebase import schema as S

Binding = dict[str, int]  # pattern alias -> fact index


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _present(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and not math.isfinite(v))


def _same(x: Any, y: Any) -> bool:
    return x == y and isinstance(x, bool) == isinstance(y, bool)


def _cond(c: S.Condition, fact: dict, params: dict, bound: dict[str, dict]) -> bool:
    def val(v: S.Value) -> Any:
        if isinstance(v, S.Literal_):
            return v.value
        if isinstance(v, S.Param):
            return params[v.name]
        return bound.get(v.alias, {}).get(v.field)

    x = fact.get(c.field)
    if c.op == "exists":
        assert isinstance(c.value, S.Literal_)
        return _present(x) is c.value.value
    if not _present(x):
        return False
    if c.op in ("in", "between"):
        assert isinstance(c.value, tuple)
        values = [val(v) for v in c.value]
        if c.op == "in":
            return any(_same(x, y) for y in values)
        lo, hi = values
        return _num(x) and _num(lo) and _num(hi) and lo <= x <= hi
    assert not isinstance(c.value, tuple) and c.value is not None
    y = val(c.value)
    if c.op == "eq":
        return _present(y) and _same(x, y)
    if c.op == "ne":
        return _present(y) and x != y
    if c.op in ("gt", "ge", "lt", "le"):
        if not (_num(x) and _num(y)):
            return False
        return {"gt": x > y, "ge": x >= y, "lt": x < y, "le": x <= y}[c.op]
    if c.op == "contains":
        return isinstance(x, str) and _present(y) and str(y) in x
    raise ValueError(c.op)


def matches(p: S.Pattern, fact: dict, params: dict, bound: dict[str, dict]) -> bool:
    """Does ``fact`` match pattern ``p`` (``bound``: the facts other patterns matched, for references)?"""
    if fact.get("kind") != p.kind:
        return False
    if not any(c.field == "side" for c in p.conditions) and fact.get("side", "run") != "run":
        return False
    return all(_cond(c, fact, params, bound) for c in p.conditions)


def _refs(c: S.Condition) -> set[str]:
    vals = c.value if isinstance(c.value, tuple) else (c.value,)
    return {v.alias for v in vals if isinstance(v, S.Ref)}


def has_refs(p: S.Pattern) -> bool:
    return any(_refs(c) for c in p.conditions)


def local_pattern(p: S.Pattern) -> S.Pattern:
    """The pattern without its conditions that refer to other facts."""
    return S.Pattern(p.kind, p.alias, [c for c in p.conditions if not _refs(c)], p.pos)


def index_by_kind(facts: list[dict]) -> dict[str, list[int]]:
    by_kind: dict[str, list[int]] = {}
    for i, f in enumerate(facts):
        by_kind.setdefault(f.get("kind", ""), []).append(i)
    return by_kind


def _value_test(c: S.Condition, params: dict) -> Callable[[Any], bool]:
    """A condition without references as a test of the field's value (what ``_cond`` decides)."""

    def res(v: S.Value) -> Any:
        return v.value if isinstance(v, S.Literal_) else params[v.name] if isinstance(v, S.Param) else None

    op = c.op
    if op == "exists":
        want = cast(S.Literal_, c.value).value
        return lambda x: _present(x) is want
    if op in ("in", "between"):
        ys = [res(v) for v in cast("tuple[S.Value, ...]", c.value)]
        if op == "in":
            return lambda x: _present(x) and any(_same(x, y) for y in ys)
        lo, hi = ys
        if not (_num(lo) and _num(hi)):
            return lambda x: False
        return lambda x: _num(x) and lo <= x <= hi
    y = res(cast(S.Value, c.value))
    if not _present(y):
        return lambda x: False
    if op == "eq":
        return lambda x: _present(x) and _same(x, y)
    if op == "ne":
        return lambda x: _present(x) and x != y
    if op in _ORDER:
        cmp = _ORDER[op]
        return (lambda x: _num(x) and cmp(x, y)) if _num(y) else (lambda x: False)
    if op == "contains":
        text = str(y)
        return lambda x: isinstance(x, str) and text in x
    raise ValueError(op)


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "gt": operator.gt,
    "ge": operator.ge,
    "lt": operator.lt,
    "le": operator.le,
}


def _key(v: Any) -> tuple[str, Any]:
    return type(v).__name__, v  # True and 1 are equal keys for a dict, not for a rule


class FactIndex:
    """The facts by kind; by the value of one field within a kind, and the facts each
    pattern's own conditions select, built when first asked (rules share them)."""

    def __init__(self, facts: list[dict]):
        self.facts = facts
        self.by_kind = index_by_kind(facts)
        self._by_value: dict[tuple[str, str], dict[tuple[bool, Any], list[int]]] = {}
        self._selected: dict[tuple, list[int]] = {}

    def selected(self, local: S.Pattern, params: dict) -> list[int]:
        """The facts that pattern ``local`` (no references) matches, in fact order."""
        conds = []
        for c in local.conditions:
            vals = c.value if isinstance(c.value, tuple) else (c.value,)
            conds.append(
                (
                    c.field,
                    c.op,
                    tuple(
                        _key(v.value if isinstance(v, S.Literal_) else params[v.name])
                        for v in vals
                        if isinstance(v, (S.Literal_, S.Param))
                    ),
                )
            )
        key = (local.kind, tuple(conds))
        hit = self._selected.get(key)
        if hit is None:
            tests = [(c.field, _value_test(c, params)) for c in local.conditions]
            any_side = any(c.field == "side" for c in local.conditions)
            facts = self.facts
            hit = [
                i
                for i in self.candidates(local, params)
                if (any_side or facts[i].get("side", "run") == "run")
                and all(test(facts[i].get(f)) for f, test in tests)
            ]
            self._selected[key] = hit
        return hit

    def _values(self, kind: str, field: str) -> dict[tuple[bool, Any], list[int]]:
        key = (kind, field)
        if key not in self._by_value:
            table: dict[tuple[bool, Any], list[int]] = {}
            for i in self.by_kind.get(kind, ()):
                v = self.facts[i].get(field)
                if isinstance(v, (str, int, float)) and _present(v):  # bool is an int
                    table.setdefault((isinstance(v, bool), v), []).append(i)
            self._by_value[key] = table
        return self._by_value[key]

    def candidates(self, p: S.Pattern, params: dict) -> list[int] | tuple[int, ...]:
        """The facts of the pattern's kind, narrowed by one of its equality tests where it has one."""
        for c in p.conditions:
            if c.op == "eq" and isinstance(c.value, (S.Literal_, S.Param)):
                y = c.value.value if isinstance(c.value, S.Literal_) else params[c.value.name]
                if isinstance(y, (str, int, float)) and _present(y):
                    return self._values(p.kind, c.field).get((isinstance(y, bool), y), ())
        return self.by_kind.get(p.kind, ())


# --------------------------------------------------------------------------- compiled form
@dataclass(frozen=True)
class _Slot:
    """One positive place of a rule: a pattern, or the alternatives of an ``any:``."""

    alternatives: tuple[
        tuple[S.Pattern, S.Pattern, frozenset[str]], ...
    ]  # (pattern, its local part, aliases it refers to)


@dataclass(frozen=True)
class CompiledRule:
    rule_id: str
    mode: str  # "all" | "any"
    params: dict[str, Any]
    slots: tuple[_Slot, ...]
    nots: tuple[tuple[S.Pattern, S.Pattern], ...]  # (pattern, its local part)


def _alt(p: S.Pattern) -> tuple[S.Pattern, S.Pattern, frozenset[str]]:
    return p, local_pattern(p), frozenset(a for c in p.conditions for a in _refs(c))


def compile_rule(rule: S.Rule, params: dict[str, Any]) -> CompiledRule:
    slots: list[_Slot] = []
    nots: list[tuple[S.Pattern, S.Pattern]] = []
    for item in rule.items:
        if isinstance(item, S.Pattern):
            slots.append(_Slot((_alt(item),)))
        elif isinstance(item, S.AnyOf):
            slots.append(_Slot(tuple(_alt(p) for p in item.items)))
        elif isinstance(item, S.Not):
            nots.append((item.pattern, local_pattern(item.pattern)))
    return CompiledRule(rule.id, rule.mode, dict(params), tuple(slots), tuple(nots))


def compile_rules(rules: list[S.Rule], params: dict[str, dict[str, Any]]) -> list[CompiledRule]:
    """``params``: rule id -> effective params (defaults with the user's overrides)."""
    return [compile_rule(r, params[r.id]) for r in rules]


# --------------------------------------------------------------------------- evaluation
NotCandidates = list[
    tuple[S.Pattern, bool, list[int]]
]  # (negated pattern, has references, facts matching its own conditions)


def not_candidates(nots: tuple[tuple[S.Pattern, S.Pattern], ...], index: FactIndex, params: dict) -> NotCandidates:
    """For each ``not:`` pattern of a rule, the facts its own conditions match (once per rule and fact set)."""
    return [(p, has_refs(p), index.selected(local, params)) for p, local in nots]


def negated(cands: NotCandidates, binding: Binding, facts: list[dict], params: dict, bound: dict[str, dict]) -> bool:
    """Does some fact the firing did not match fill one of the rule's ``not:`` patterns?"""
    used = set(binding.values())
    for pattern, refs, js in cands:
        for j in js:
            if j not in used and (not refs or matches(pattern, facts[j], params, bound)):
                return True
    return False


def _evaluate_rule(rule: CompiledRule, index: FactIndex) -> list[Binding]:
    params, facts = rule.params, index.facts
    if rule.mode == "any":  # each alternative fires on its own
        out: list[Binding] = []
        for slot in rule.slots:
            for p, local, _ in slot.alternatives:
                out.extend(
                    {p.alias: i}
                    for i in index.selected(local, params)
                    if not has_refs(p) or matches(p, facts[i], params, {})
                )
        return out
    # candidates of each slot on the patterns' own conditions
    cands: list[list[tuple[S.Pattern, frozenset[str], int]]] = []
    for slot in rule.slots:
        cands.append([(p, refs, i) for p, local, refs in slot.alternatives for i in index.selected(local, params)])
        if not cands[-1]:
            return []
    order = sorted(range(len(cands)), key=lambda k: len(cands[k]))  # fewest candidates first
    nots = not_candidates(rule.nots, index, params)
    out = []
    chosen: list[tuple[S.Pattern, frozenset[str], int]] = []
    bound: dict[str, dict] = {}
    binding: Binding = {}

    def ready(refs: frozenset[str]) -> bool:
        return refs <= bound.keys()

    def extend(depth: int) -> None:
        if depth == len(order):
            # a reference to a fact no slot bound (another alternative of an `any:`) matches nothing
            if all(ready(qrefs) for _, qrefs, _ in chosen) and not negated(nots, binding, facts, params, bound):
                out.append(dict(binding))
            return
        for p, refs, i in cands[order[depth]]:
            if i in binding.values() or p.alias in bound:
                continue  # one fact fills one pattern
            bound[p.alias], binding[p.alias] = facts[i], i
            # check every pattern whose references just became complete
            ok = all(
                matches(q, facts[j], params, bound)
                for q, qrefs, j in chosen + [(p, refs, i)]
                if qrefs and ready(qrefs) and (q is p or p.alias in qrefs)
            )
            if ok:
                chosen.append((p, refs, i))
                extend(depth + 1)
                chosen.pop()
            del bound[p.alias], binding[p.alias]

    extend(0)
    return out


def evaluate(compiled: list[CompiledRule], facts: list[dict]) -> list[tuple[str, Binding]]:
    """Every firing: (rule id, pattern alias -> fact index), sorted."""
    index = FactIndex(facts)
    firings = {(r.rule_id, tuple(sorted(b.items()))) for r in compiled for b in _evaluate_rule(r, index)}
    return [(rid, dict(b)) for rid, b in sorted(firings)]


def plain_evaluate(rule: S.Rule, facts: list[dict], params: dict | None = None) -> list[Binding]:
    """The same semantics as one product over each pattern's filtered candidates.

    No join order, no early reference checks: the yardstick of the engine
    benchmark and the oracle of the cross-check tests.
    """
    params = dict(rule.params if params is None else params)
    index = FactIndex(facts)
    by_kind = index.by_kind
    if rule.mode == "any":
        out: list[Binding] = []
        for p in rule.items:
            assert isinstance(p, S.Pattern)
            out.extend({p.alias: i} for i in by_kind.get(p.kind, []) if matches(p, facts[i], params, {}))
        return out
    positives = [i for i in rule.items if isinstance(i, S.Pattern)]
    anys = [i for i in rule.items if isinstance(i, S.AnyOf)]
    nots = not_candidates(
        tuple((i.pattern, local_pattern(i.pattern)) for i in rule.items if isinstance(i, S.Not)), index, params
    )

    def local(p: S.Pattern, f: dict) -> bool:
        return matches(local_pattern(p), f, params, {})

    slots: list[list[tuple[S.Pattern, int]]] = [
        [(p, i) for i in by_kind.get(p.kind, []) if local(p, facts[i])] for p in positives
    ]
    slots += [[(p, i) for p in a.items for i in by_kind.get(p.kind, []) if local(p, facts[i])] for a in anys]
    out = []
    for combo in itertools.product(*slots):
        if len({i for _, i in combo}) < len(combo):
            continue  # one fact fills one pattern of a rule
        bound = {p.alias: facts[i] for p, i in combo}
        if not all(matches(p, facts[i], params, bound) for p, i in combo):
            continue
        binding = {p.alias: i for p, i in combo}
        if negated(nots, binding, facts, params, bound):
            continue
        out.append(binding)
    return out
