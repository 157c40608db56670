"""Runs rules' inline tests (``tests: {fires: [...], quiet: [...]}``).

Used by pytest (one test per case over ``rules/``) and by ``advisor rules test``,
so a user's rules get exactly the same checks as the built-in ones. Each case
runs through the real engine with the rules of its file set compiled
together; only the rule under test is looked at.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.rulebase.infer import RuleBase
from advisor.rulebase.schema import Rule, TestCase


@dataclass
class CaseResult:
    rule: Rule
    expect: str  # "fires" | "quiet"
    case: TestCase
    passed: bool
    message: str = ""

    @property
    def test_id(self) -> str:
        return f"{self.rule.id}::{self.expect}::{self.case.name}"


def run_case(rulebase: RuleBase, rule: Rule, expect: str, case: TestCase) -> CaseResult:
    firings, _ = rulebase.infer(case.facts)
    mine = [f for f in firings if f.rule.id == rule.id]
    if expect == "fires":
        if not mine:
            return CaseResult(rule, expect, case, False, "expected the rule to fire; it did not")
        if case.evidence_has and not any(case.evidence_has in f.evidence for f in mine):
            return CaseResult(
                rule, expect, case, False, f"evidence {mine[0].evidence!r} does not contain {case.evidence_has!r}"
            )
        return CaseResult(rule, expect, case, True)
    if mine:
        return CaseResult(rule, expect, case, False, f"expected no firing; it fired: {mine[0].evidence!r}")
    return CaseResult(rule, expect, case, True)


def iter_cases(rules: list[Rule]):
    for rule in rules:
        for expect, cases in (("fires", rule.fires), ("quiet", rule.quiet)):
            for case in cases:
                yield rule, expect, case


def run_tests(rules: list[Rule], rulebase: RuleBase | None = None, engine: str | None = None) -> list[CaseResult]:
    rulebase = rulebase or RuleBase(rules, engine=engine)
    return [run_case(rulebase, r, e, c) for r, e, c in iter_cases(rules)]
