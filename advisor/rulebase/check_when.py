"""The checks of a rule's ``when`` (patterns, fields, conditions, values against the fact kinds' types), a part
of the rule checker (``load._RuleChecker``)."""

from __future__ import annotations

from typing import Any


import advisor.facts as vocabulary
from advisor.rulebase import schema as S
from advisor.rulebase.positions import PosList

from advisor.rulebase.load_common import CheckerBase, ALIAS_RE, CONTAINS_FORBIDDEN, value_category, suggest, field_types


class WhenChecks(CheckerBase):
    """``when`` clauses; the checker gives ``err``, ``_vpos``, ``_kpos``, ``path`` and ``rule_id``."""

    def check_when(self, when: Any) -> tuple[str, list[S.Item]]:
        if when is None:
            return "all", []
        pos = self._vpos(self.data, "when")
        if not isinstance(when, dict) or len(when) != 1 or next(iter(when)) not in ("all", "any"):
            self.err(
                pos,
                "'when' must hold exactly one of 'all' or 'any'",
                expected="when: {all: [...]} or when: {any: [...]}",
            )
            return "all", []
        mode = next(iter(when))
        raw = when[mode]
        if not isinstance(raw, list) or not raw:
            self.err(self._vpos(when, mode), f"'{mode}' needs a non-empty list of fact patterns")
            return mode, []
        self.aliases: dict[str, S.Pattern] = {}
        self.pending_refs: list[tuple[S.Ref, S.Pos, str, str]] = []
        items: list[S.Item] = []
        for i, item in enumerate(raw):
            ipos = raw.pos[i] if isinstance(raw, PosList) else pos
            parsed = self.check_item(item, ipos, top_mode=mode)
            if parsed is not None:
                items.append(parsed)
        for ref, rpos, _kind, _fname in self.pending_refs:
            target = self.aliases.get(ref.alias)
            if target is None:
                self.err(
                    rpos,
                    f"ref '{ref.alias}.{ref.field}' names no fact of this rule",
                    expected="one of: " + ", ".join(sorted(self.aliases)),
                    hint=suggest(ref.alias, self.aliases),
                )
            elif ref.field not in field_types(target.kind):
                self.err(
                    rpos,
                    f"fact kind '{target.kind}' has no field '{ref.field}'",
                    hint=suggest(ref.field, field_types(target.kind)),
                )
        if mode == "any" and any(not isinstance(i, S.Pattern) for i in items):
            self.err(pos, "'any' takes fact patterns only (no 'not' or nested 'any')")
        return mode, items

    def check_item(self, item: Any, pos: S.Pos, top_mode: str) -> S.Item | None:
        if not isinstance(item, dict) or not item:
            self.err(pos, f"a condition must be a mapping like {{loss_curve: {{split: train}}}}, got {item!r}")
            return None
        if "not" in item:
            if len(item) != 1:
                self.err(pos, "'not' stands alone in its list item")
            if top_mode != "all":
                self.err(pos, "'not' is allowed inside 'all' only")
            pat = self.check_pattern(item["not"], self._vpos(item, "not", pos), negated=True)
            return S.Not(pat) if pat else None
        if "any" in item:
            sub = item["any"]
            if len(item) != 1 or not isinstance(sub, list) or not sub:
                self.err(pos, "'any' inside 'all' needs a non-empty list of fact patterns")
                return None
            pats = []
            for j, s in enumerate(sub):
                p = self.check_pattern(s, sub.pos[j] if isinstance(sub, PosList) else pos)
                if p:
                    pats.append(p)
            return S.AnyOf(pats) if len(pats) == len(sub) else None
        return self.check_pattern(item, pos)

    def check_pattern(self, item: Any, pos: S.Pos, negated: bool = False) -> S.Pattern | None:
        if not isinstance(item, dict):
            self.err(pos, f"a fact pattern must be a mapping like {{loss_curve: {{split: train}}}}, got {item!r}")
            return None
        kinds = [k for k in item if k != "as"]
        if len(kinds) != 1:
            self.err(
                pos,
                f"a fact pattern names exactly one fact kind, got {', '.join(map(str, kinds)) or 'none'}",
                hint="use a separate list item for each fact",
            )
            return None
        kind = kinds[0]
        kpos = self._kpos(item, kind)
        if kind not in vocabulary.FACT_KINDS:
            self.err(
                kpos,
                f"unknown fact kind '{kind}'",
                expected="one of: " + ", ".join(vocabulary.FACT_KINDS),
                hint=suggest(kind, vocabulary.FACT_KINDS),
            )
            return None
        alias = item.get("as", kind)
        if not isinstance(alias, str) or not ALIAS_RE.match(alias):
            self.err(self._vpos(item, "as", pos), f"'as' must be a plain name, got {alias!r}")
            return None
        fields = item[kind] or {}
        if not isinstance(fields, dict):
            self.err(self._vpos(item, kind, pos), f"the fields of '{kind}' must be a mapping of field: condition")
            return None
        types_ = field_types(kind)
        conditions: list[S.Condition] = []
        for fname, cond in fields.items():
            fpos = self._kpos(fields, fname)
            if fname not in types_:
                self.err(
                    fpos,
                    f"fact kind '{kind}' has no field '{fname}'",
                    expected="one of: " + ", ".join(types_),
                    hint=suggest(fname, types_),
                )
                continue
            conditions.extend(self.check_condition(kind, fname, cond, self._vpos(fields, fname, fpos), types_[fname]))
        pattern = S.Pattern(kind=kind, alias=alias, conditions=conditions, pos=kpos)
        if not negated:
            if alias in self.aliases:
                self.err(
                    kpos,
                    f"two facts of kind '{kind}' in one rule need distinct names",
                    hint=f"add `as: other_{kind}` to one of them",
                )
            self.aliases[alias] = pattern
        return pattern

    def check_value(
        self, value: Any, pos: S.Pos, cats: set[str], choices: tuple | None, fname: str, kind: str
    ) -> S.Value | None:
        if isinstance(value, dict):
            if set(value) == {"ref"} and isinstance(value["ref"], str) and value["ref"].count(".") == 1:
                alias, f = value["ref"].split(".")
                ref = S.Ref(alias, f)
                self.pending_refs.append((ref, pos, kind, fname))
                return ref
            self.err(pos, f"'{fname}' compares with {value!r}", expected="a value, a $param or {ref: alias.field}")
            return None
        if isinstance(value, str) and value.startswith("$"):
            name = value[1:]
            if name not in self.params:
                self.err(pos, f"param '{value}' has no default in 'params'", hint=suggest(name, self.params))
                return None
            value_for_check = self.params[name]
            result: S.Value = S.Param(name)
        else:
            value_for_check = value
            result = S.Literal_(value)
        cat = value_category(value_for_check)
        if cat not in cats and "other" not in cats:
            self.err(
                pos,
                f"'{fname}' of '{kind}' holds {'/'.join(sorted(cats))}, compared with {cat} {value_for_check!r}",
                expected=f"a {' or '.join(sorted(cats))} value",
            )
            return None
        if choices and value_for_check not in choices:
            self.err(
                pos,
                f"'{fname}' of '{kind}' is never {value_for_check!r}",
                expected="one of: " + ", ".join(map(str, choices)),
                hint=suggest(value_for_check, map(str, choices)),
            )
            return None
        return result

    def check_condition(
        self, kind: str, fname: str, cond: Any, pos: S.Pos, types_: tuple[set[str], tuple | None]
    ) -> list[S.Condition]:
        cats, choices = types_
        if not isinstance(cond, dict) or set(cond) == {"ref"}:
            v = self.check_value(cond, pos, cats, choices, fname, kind)
            return [S.Condition(fname, "eq", v)] if v is not None else []
        out: list[S.Condition] = []
        for op, value in cond.items():
            opos = self._vpos(cond, op, pos)
            if op not in S.OPERATORS:
                self.err(
                    self._kpos(cond, op),
                    f"unknown operator '{op}'",
                    expected="one of: " + ", ".join(S.OPERATORS),
                    hint=suggest(op, S.OPERATORS),
                )
                continue
            if op == "exists":
                if not isinstance(value, bool):
                    self.err(opos, f"'exists' needs true or false, got {value!r}")
                    continue
                out.append(S.Condition(fname, "exists", S.Literal_(value)))
            elif op in ("in", "between"):
                if not isinstance(value, list) or (op == "between" and len(value) != 2) or not value:
                    self.err(
                        opos,
                        f"'{op}' needs a list" + (" of two values [low, high]" if op == "between" else ""),
                        expected="[low, high]" if op == "between" else "[value, ...]",
                    )
                    continue
                vals = [self.check_value(v, opos, cats, choices if op == "in" else None, fname, kind) for v in value]
                if op == "between" and not cats & {"number"}:
                    self.err(opos, f"'between' needs a numeric field; '{fname}' holds {'/'.join(sorted(cats))}")
                    continue
                if all(v is not None for v in vals):
                    out.append(S.Condition(fname, op, tuple(v for v in vals if v is not None)))
            elif op == "contains":
                if not isinstance(value, str) or not value:
                    self.err(opos, f"'contains' needs a text, got {value!r}")
                    continue
                if "string" not in cats:
                    self.err(opos, f"'contains' needs a text field; '{fname}' holds {'/'.join(sorted(cats))}")
                    continue
                bad = sorted(set(value) & CONTAINS_FORBIDDEN)
                if bad:
                    self.err(opos, f"'contains' text cannot hold {' '.join(bad)}")
                    continue
                out.append(S.Condition(fname, "contains", S.Literal_(value)))
            else:
                if op in ("gt", "ge", "lt", "le") and "number" not in cats:
                    self.err(
                        opos, f"'{op}' needs a numeric field; '{fname}' of '{kind}' holds {'/'.join(sorted(cats))}"
                    )
                    continue
                v = self.check_value(value, opos, cats, choices if op in ("eq", "ne") else None, fname, kind)
                if v is not None:
                    if (
                        op in ("gt", "ge", "lt", "le")
                        and isinstance(v, S.Literal_)
                        and value_category(v.value) != "number"
                    ):
                        self.err(opos, f"'{op}' needs a number, got {v.value!r}")
                        continue
                    out.append(S.Condition(fname, op, v))
        return out

    # -- evidence
