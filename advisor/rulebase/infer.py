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
from advisor.rulebase import backends, cache
from advisor.rulebase.compile import effective_params
from advisor.rulebase.evidence import render_evidence
from advisor.rulebase.schema import Not, Rule

MAX_ROUNDS = 8


@dataclass
class Firing:
    """One match of one rule: the facts it matched (by alias) and its evidence text."""

    rule: Rule
    facts: dict[str, Fact]
    evidence: str


class RuleBase:
    """Rules compiled once; ``infer`` may be called many times (each call isolated).

    ``engine``: 'durable', 'python' or 'auto' (default: see backends.choose).
    """

    def __init__(self, rules: list[Rule], overrides: dict[str, Any] | None = None, engine: str | None = None):
        self.rules = sorted(rules, key=lambda r: r.id)
        self.by_id = {r.id: r for r in self.rules}
        self.overrides = dict(overrides or {})
        self.params = {r.id: effective_params(r, self.overrides) for r in self.rules}
        self.engine = backends.choose(engine)
        self.backend = backends.make(self.engine, self.rules, self.params, self.overrides)
        #: the shipped rules (as loaded from the rule-base cache): their plain evidence templates skip jinja
        self.shipped = {r.id for r in self.rules if cache.origin(r) is not None}
        #: whether a rule reads findings (a pattern or a `not:` of kind finding); when none does, a second
        #: round would fire the same rules on the same facts (a finding fact matches no other kind)
        self.reads_findings = any(
            p.kind == "finding"
            for r in self.rules
            for p in [*r.patterns(), *(i.pattern for i in r.items if isinstance(i, Not))]
        )

    def infer(self, facts: list[Fact]) -> tuple[list[Firing], list[str]]:
        """All firings (sorted by rule id, then matched facts) and warnings."""
        warnings: list[str] = []
        base = list(facts)
        findings: dict[tuple, Finding] = {}
        keys: dict[int, tuple] = {}
        result: list[tuple[str, dict[str, int]]] = []
        all_facts: list[Fact] = base
        for _round in range(MAX_ROUNDS):
            ordered = sorted(findings.items())
            all_facts = base + [f for _, f in ordered]
            keys = {i: ("b", i) for i in range(len(base))}
            keys.update({len(base) + j: k for j, (k, _) in enumerate(ordered)})
            dicts = [f.model_dump(exclude={"source"}) for f in all_facts]
            result = self.backend.evaluate(dicts) if self.rules and dicts else []
            new: dict[tuple, Finding] = {}
            for rule_id, binding in result:
                rule = self.by_id[rule_id]
                if rule.finding is None:
                    continue
                matched = self._matched(rule_id, binding, all_facts)
                key = ("f", rule_id, tuple(sorted((a, keys[i]) for a, i in binding.items())))
                new[key] = Finding(
                    id=rule.finding,
                    rule=rule_id,
                    confidence=rule.confidence,
                    text=render_evidence(rule.evidence, matched, self.params[rule_id], rule_id in self.shipped),
                )
            if set(new) == set(findings) or not self.reads_findings:
                break
            findings = new
        else:
            warnings.append(
                f"chained findings did not settle after {MAX_ROUNDS} rounds "
                "(rules that negate findings may contradict each other)"
            )
        firings = []
        for rule_id, binding in result:
            rule = self.by_id[rule_id]
            matched = self._matched(rule_id, binding, all_facts)
            firings.append(
                Firing(
                    rule=rule,
                    facts=matched,
                    evidence=render_evidence(rule.evidence, matched, self.params[rule_id], rule_id in self.shipped),
                )
            )
        return firings, warnings

    def _matched(self, rule_id: str, binding: dict[str, int], facts: list[Fact]) -> dict[str, Fact]:
        return {a: facts[i] for a, i in sorted(binding.items())}
