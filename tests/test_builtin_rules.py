"""The built-in rule base: valid as a whole, and every rule's inline cases pass.

One pytest case per inline test case, with ids like
``loss-diverges-at-large-lr::quiet::healthy curve``; ``advisor rules test``
uses the same runner (advisor/rulebase/testing.py). Every case runs on each
back-end that can run here (durable-rules, the built-in matcher), and both
must give identical firings.
"""

from __future__ import annotations

import pytest

from advisor.rulebase import backends, builtin_rules_dir
from advisor.rulebase.infer import RuleBase
from advisor.rulebase.load import load_rules
from advisor.rulebase.testing import iter_cases, run_case

RULES, DIAGS = load_rules([builtin_rules_dir()], display_root=builtin_rules_dir().parent, trusted=True)
CASES = list(iter_cases(RULES))
NO_DURABLE = backends.durable_problem()
ENGINES = [pytest.param("durable", marks=pytest.mark.skipif(NO_DURABLE is not None, reason=NO_DURABLE or "")),
           "python"]


@pytest.fixture(scope="module", params=ENGINES)
def rulebase(request) -> RuleBase:
    return RuleBase(RULES, engine=request.param)


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


@pytest.mark.slow
@pytest.mark.skipif(NO_DURABLE is not None, reason=NO_DURABLE or "")
def test_both_engines_give_identical_firings_on_every_case():
    durable, python = RuleBase(RULES, engine="durable"), RuleBase(RULES, engine="python")

    def firings(rb, facts):
        out, warnings = rb.infer(facts)
        return warnings, [(f.rule.id, sorted((a, facts.index(x) if x in facts else repr(x)) for a, x in f.facts.items()),
                           f.evidence) for f in out]

    differ = [f"{r.id}::{e}::{c.name}" for r, e, c in CASES if firings(durable, c.facts) != firings(python, c.facts)]
    assert differ == []
