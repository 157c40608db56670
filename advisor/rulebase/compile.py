"""Checked rules -> durable-rules conditions (its dict ruleset form). No eval.

Each pattern becomes ``{alias: {"$and": [{"kind": K}, {"side": "run"}, ...]}}``;
operators map to durable's ``$gt $gte $lt $lte $neq $ex $nex $mt $or``;
references to another matched fact become durable's ``{alias: field}``
form; ``any`` becomes one durable rule per alternative (see
``_Compiler.compile``). ``not`` is not compiled: durable-rules decides
``$not`` when a fact arrives and never takes a firing back when the negated
fact comes later in the batch (measured), so ``infer.py`` drops the firings
whose negated pattern matches the complete fact set.
"""

from __future__ import annotations

from typing import Any, cast

from advisor.rulebase import schema as S
from advisor.rulebase.engine import CompiledRuleset, field_name, numeric_field

_CMP = {"gt": "$gt", "ge": "$gte", "lt": "$lt", "le": "$lte", "ne": "$neq"}
_REGEX_SPECIAL = set(".*+?(){}|$-/")


def _contains_regex(text: str) -> str:
    # durable's matcher has no backslash escapes, but character classes work
    return ".*" + "".join(f"[{c}]" if c in _REGEX_SPECIAL else c for c in text) + ".*"


class _Compiler:
    def __init__(self, rule: S.Rule, params: dict[str, Any]):
        self.rule = rule
        self.params = params
        self.engine_alias: dict[str, str] = {}  # rule alias -> engine alias
        self.guards: dict[str, set[str]] = {}  # rule alias -> fields other patterns refer to

    def value(self, v: S.Value, numeric: bool = False) -> Any:
        if isinstance(v, S.Literal_):
            return v.value
        if isinstance(v, S.Param):
            return self.params[v.name]
        if isinstance(v, S.Ref):
            self.guards.setdefault(v.alias, set()).add(numeric_field(v.field) if numeric else field_name(v.field))
            return {self.engine_alias[v.alias]: numeric_field(v.field) if numeric else field_name(v.field)}
        raise TypeError(v)

    def condition(self, c: S.Condition) -> list[Any]:
        f = field_name(c.field)
        n = numeric_field(c.field)
        one = cast(S.Value, c.value)  # in/between hold a tuple (load.py checks the shapes)
        many = cast("tuple[S.Value, ...]", c.value)
        if c.op == "eq":
            return [{f: self.value(one)}]
        if c.op == "ne":
            return [{"$ex": {f: 1}}, {"$neq": {f: self.value(one)}}]
        if c.op in _CMP:
            # ordering on the numeric twin, guarded: absent or non-numeric values never match
            return [{"$ex": {n: 1}}, {_CMP[c.op]: {n: self.value(one, numeric=True)}}]
        if c.op == "exists":
            return [{"$ex" if cast(S.Literal_, one).value else "$nex": {f: 1}}]
        if c.op == "in":
            return [{"$or": [{f: self.value(v)} for v in many]}]
        if c.op == "between":
            lo, hi = many
            return [
                {"$ex": {n: 1}},
                {"$gte": {n: self.value(lo, numeric=True)}},
                {"$lte": {n: self.value(hi, numeric=True)}},
            ]
        if c.op == "contains":
            return [{"$mt": {f: _contains_regex(str(self.value(one)))}}]
        raise ValueError(f"unknown operator {c.op}")

    def pattern(self, p: S.Pattern, guard: bool = True) -> dict[str, Any]:
        terms: list[Any] = [{"kind": p.kind}]
        if not any(c.field == "side" for c in p.conditions):
            terms.append({"side": "run"})
        for c in p.conditions:
            terms.extend(self.condition(c))
        if guard:
            # a field another pattern refers to must exist here (a reference to an absent field crashes the engine)
            terms.extend({"$ex": {f: 1}} for f in sorted(self.guards.get(p.alias, ())))
        return {"$and": terms}

    def compile(self) -> list[dict[str, Any]]:
        """One durable rule per alternative.

        Measured: a pattern holding ``$or`` never matches inside durable's ``any``
        (``in: [...]`` compiles to ``$or``), so ``any`` is not used at all: a
        top-level ``any`` becomes one rule per pattern and a nested ``any`` one
        rule per alternative; their firings are merged under the rule's id.
        """
        # name every positive pattern first, so references resolve whatever their order
        for p in self.rule.patterns():
            self.engine_alias[p.alias] = f"p{len(self.engine_alias)}"
        for p in self.rule.patterns():  # collect the fields referenced, for the guards
            for c in p.conditions:
                self.condition(c)
        if self.rule.mode == "any":
            return [{"all": [{self.engine_alias[p.alias]: self.pattern(p)}]} for p in self.rule.patterns()]
        variants: list[list[dict[str, Any]]] = [[]]
        for item in _referenced_first(self.rule.items):
            if isinstance(item, S.Pattern):
                term = {self.engine_alias[item.alias]: self.pattern(item)}
                variants = [v + [term] for v in variants]
            elif isinstance(item, S.Not):
                continue  # decided after matching, in infer.py (durable's $not depends on arrival order)
            elif isinstance(item, S.AnyOf):
                variants = [v + [{self.engine_alias[p.alias]: self.pattern(p)}] for v in variants for p in item.items]
        return [{"all": v} for v in variants]


def _referenced_first(items: list[S.Item]) -> list[S.Item]:
    """The items with each pattern after the patterns it refers to (stable otherwise).

    Measured: durable-rules matches a reference to a pattern written *later*
    in the rule against the wrong fact (it fired ``eval > train`` for an eval
    loss below the train loss), so references must point backwards. A cycle
    keeps the written order; the back-end re-checks references after matching.
    """

    def aliases(item: S.Item) -> set[str]:
        if isinstance(item, S.Pattern):
            return {item.alias}
        return {p.alias for p in item.items} if isinstance(item, S.AnyOf) else set()

    def refs(item: S.Item) -> set[str]:
        pats = [item] if isinstance(item, S.Pattern) else item.items if isinstance(item, S.AnyOf) else []
        return {
            v.alias
            for p in pats
            for c in p.conditions
            for v in (c.value if isinstance(c.value, tuple) else (c.value,))
            if isinstance(v, S.Ref)
        }

    todo, done, out = list(items), set[str](), list[S.Item]()
    while todo:
        ready = next((it for it in todo if refs(it) - aliases(it) <= done), None)
        if ready is None:  # a cycle: the rest in written order
            return out + todo
        todo.remove(ready)
        out.append(ready)
        done |= aliases(ready)
    return out


VARIANT_SEP = "#"


def effective_params(rule: S.Rule, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The rule's params with user overrides (``{"rule-id.param": value}`` or ``{"param": value}``)."""
    params = dict(rule.params)
    for key, value in (overrides or {}).items():
        rid, _, name = key.rpartition(".")
        if (rid == rule.id or rid == "") and name in params:
            params[name] = value
    return params


def overridden(rule: S.Rule, overrides: dict[str, Any] | None) -> bool:
    """Whether ``effective_params`` changes a parameter of the rule (then it compiles otherwise)."""
    for key in overrides or {}:
        rid, _, name = key.rpartition(".")
        if (rid == rule.id or rid == "") and name in rule.params:
            return True
    return False


def engine_aliases(rule: S.Rule) -> dict[str, str]:
    """engine alias (p0, p1, ...) -> the rule's alias (kind or `as:` name)."""
    return {f"p{i}": p.alias for i, p in enumerate(rule.patterns())}


def compile_rule(rule: S.Rule, overrides: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """One rule's durable conditions by name: its id, or ``id#k`` for each alternative of an ``any``."""
    variants = _Compiler(rule, effective_params(rule, overrides)).compile()
    if len(variants) == 1:
        return {rule.id: variants[0]}
    return {f"{rule.id}{VARIANT_SEP}{k}": v for k, v in enumerate(variants)}


def compile_rules(rules: list[S.Rule], overrides: dict[str, Any] | None = None) -> CompiledRuleset:
    compiled: dict[str, Any] = {}
    for rule in rules:
        compiled.update(compile_rule(rule, overrides))
    return CompiledRuleset(rules=compiled)
