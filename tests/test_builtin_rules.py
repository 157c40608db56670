"""The built-in rule base: valid as a whole, and every rule's inline cases pass.

One pytest case per inline test case, with ids like
``loss-diverges-at-large-lr::quiet::healthy curve``; ``advisor rules test``
uses the same runner (advisor/rulebase/testing.py).
"""

from __future__ import annotations

import pytest

from advisor.rulebase import builtin_rules_dir
from advisor.rulebase.infer import RuleBase
from advisor.rulebase.load import load_rules
from advisor.rulebase.testing import iter_cases, run_case

RULES, DIAGS = load_rules([builtin_rules_dir()], display_root=builtin_rules_dir().parent, trusted=True)
CASES = list(iter_cases(RULES))


@pytest.fixture(scope="module")
def rulebase() -> RuleBase:
    return RuleBase(RULES)


def test_rule_base_is_valid():
    errors = [d.format() for d in DIAGS]
    assert errors == [], "\n".join(errors)
    assert RULES, "no built-in rule found"
    # what the trusted (start-up) load skips, e.g. evidence templates against fact fields, checked here in full
    full, diags = load_rules([builtin_rules_dir()], display_root=builtin_rules_dir().parent, trusted=False)
    assert [d.format() for d in diags] == []
    assert [r.id for r in full] == [r.id for r in RULES]


def test_every_rule_documents_itself_and_concludes_a_catalogue_cause():
    from advisor.causes import CAUSE_BY_ID

    for r in RULES:
        assert r.fires and r.quiet, r.id
        assert all(r.doc.get(k) for k in ("what", "why", "fix")), r.id
        assert r.cause is None or r.cause in CAUSE_BY_ID, f"{r.id}: {r.cause}"
        assert r.path.endswith(f"{r.id}.yaml"), f"{r.path} should be named after the rule id {r.id}"


@pytest.mark.parametrize("rule,expect,case", CASES, ids=[f"{r.id}::{e}::{c.name}" for r, e, c in CASES])
def test_inline_case(rulebase, rule, expect, case):
    result = run_case(rulebase, rule, expect, case)
    assert result.passed, f"{rule.path}:{case.pos[0]}: {result.message}"
