"""Facts + rules -> firings, with chained findings computed to a fixed point.

Round 1 runs every rule on the extracted facts. Each firing of a
``finding:`` rule asserts a ``finding`` fact; if the set of findings changed,
the next round runs on the facts plus the findings, in a fresh session.
Running whole rounds (instead of asserting findings into a live session)
keeps negation sound: ``not: {finding: ...}`` is decided on the complete set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.facts.base import Fact
from advisor.facts.finding import Finding
from advisor.rulebase import engine
from advisor.rulebase.compile import VARIANT_SEP, compile_rules, effective_params, engine_aliases
from advisor.rulebase.evidence import render_evidence
from advisor.rulebase.reference import has_refs, local_pattern
from advisor.rulebase.reference import matches as pattern_matches
from advisor.rulebase.schema import Not, Rule

MAX_ROUNDS = 8


@dataclass
class Firing:
    """One match of one rule: the facts it matched (by alias) and its evidence text."""

    rule: Rule
    facts: dict[str, Fact]
    evidence: str


class RuleBase:
    """Rules compiled once; ``infer`` may be called many times (each call isolated)."""

    def __init__(self, rules: list[Rule], overrides: dict[str, Any] | None = None):
        self.rules = sorted(rules, key=lambda r: r.id)
        self.by_id = {r.id: r for r in self.rules}
        self.overrides = dict(overrides or {})
        self.compiled = compile_rules(self.rules, self.overrides)
        self.aliases = {r.id: engine_aliases(r) for r in self.rules}
        self.params = {r.id: effective_params(r, self.overrides) for r in self.rules}
        self.nots = {r.id: [i.pattern for i in r.items if isinstance(i, Not)] for r in self.rules}

    def infer(self, facts: list[Fact]) -> tuple[list[Firing], list[str]]:
        """All firings (sorted by rule id, then matched facts) and warnings."""
        warnings: list[str] = []
        base = list(facts)
        findings: dict[tuple, Finding] = {}
        keys: dict[int, tuple] = {}
        result: list[tuple[str, dict[str, int]]] = []
        all_facts: list[Fact] = base
        for round_no in range(MAX_ROUNDS):
            ordered = sorted(findings.items())
            all_facts = base + [f for _, f in ordered]
            keys = {i: ("b", i) for i in range(len(base))}
            keys.update({len(base) + j: k for j, (k, _) in enumerate(ordered)})
            dicts = [f.model_dump(exclude={"source"}) for f in all_facts]
            result = sorted({(rid.split(VARIANT_SEP, 1)[0], tuple(sorted(b.items())))
                             for rid, b in engine.evaluate(self.compiled, dicts)})
            result = [(rid, dict(b)) for rid, b in result]
            result = self._without_negated(result, dicts)
            new: dict[tuple, Finding] = {}
            for rule_id, binding in result:
                rule = self.by_id[rule_id]
                if rule.finding is None:
                    continue
                matched = self._matched(rule_id, binding, all_facts)
                key = ("f", rule_id, tuple(sorted((a, keys[i]) for a, i in binding.items())))
                new[key] = Finding(id=rule.finding, rule=rule_id, confidence=rule.confidence,
                                   text=render_evidence(rule.evidence, matched, self.params[rule_id]))
            if set(new) == set(findings):
                break
            findings = new
        else:
            warnings.append(f"chained findings did not settle after {MAX_ROUNDS} rounds "
                            "(rules that negate findings may contradict each other)")
        firings = []
        for rule_id, binding in result:
            rule = self.by_id[rule_id]
            matched = self._matched(rule_id, binding, all_facts)
            firings.append(Firing(rule=rule, facts=matched,
                                  evidence=render_evidence(rule.evidence, matched, self.params[rule_id])))
        return firings, warnings

    def _without_negated(self, result: list[tuple[str, dict[str, int]]], dicts: list[dict]) -> list[tuple[str, dict[str, int]]]:
        """Drop the firings for which a `not:` pattern of the rule matches another fact (with the firing's bindings)."""
        by_kind: dict[str, list[int]] = {}
        for j, d in enumerate(dicts):
            by_kind.setdefault(d.get("kind"), []).append(j)
        candidates: dict[tuple[str, int], list[int]] = {}  # (rule, not index) -> facts matching its own conditions
        out = []
        for rule_id, binding in result:
            nots = self.nots.get(rule_id)
            if nots:
                names = self.aliases[rule_id]
                bound = {names.get(a, a): dicts[i] for a, i in binding.items()}
                used = set(binding.values())
                params = self.params[rule_id]
                blocked = False
                for k, p in enumerate(nots):
                    key = (rule_id, k)
                    if key not in candidates:
                        candidates[key] = [j for j in by_kind.get(p.kind, ())
                                           if pattern_matches(local_pattern(p), dicts[j], params, {})]
                    cands = [j for j in candidates[key] if j not in used]
                    if has_refs(p):
                        cands = [j for j in cands if pattern_matches(p, dicts[j], params, bound)]
                    if cands:
                        blocked = True
                        break
                if blocked:
                    continue
            out.append((rule_id, binding))
        return out

    def _matched(self, rule_id: str, binding: dict[str, int], facts: list[Fact]) -> dict[str, Fact]:
        names = self.aliases[rule_id]
        return {names.get(a, a): facts[i] for a, i in sorted(binding.items())}
