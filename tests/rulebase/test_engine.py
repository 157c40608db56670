"""The durable-rules engine module: number encoding, operators, joins, negation, isolation."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from advisor.facts.hparams import Hyperparameter
from advisor.facts.loss_curve import LossCurve
from advisor.rulebase import engine
from advisor.rulebase.infer import RuleBase
from advisor.rulebase.load import load_rules, parse_rules_text

from .rule_text import rule_yaml

DATA = Path(__file__).parent / "data"
#: every test here runs once per back-end (RuleBase() takes the one of the engine_name fixture)
pytestmark = pytest.mark.usefixtures("engine_name")


@pytest.mark.parametrize("x,text", [
    (0.1, "0.1"), (1e-5, "0.00001"), (-3, "-3."), (0, "0.0"), (1e20, "1000000000000000."), (2.5e-40, "0.0"),
])
def test_numbers_are_positional(x, text):
    out = engine.encode_number(x)
    assert "e" not in out.lower()
    assert out.startswith(text.rstrip("."))
    assert json.loads(out) == pytest.approx(max(min(x, 1e15), -1e15), abs=1e-30)


def test_non_finite_values_never_enter_the_engine():
    f = engine.engine_fact(3, {"kind": "loss_curve", "a": float("nan"), "b": float("inf"), "c": 1.0, "id": "x", "d": None})
    assert f == {"_fid": 3, "kind": "loss_curve", "c": 1.0, "c__n": 1.0, "f_id": "x"}


@pytest.mark.parametrize("value,expected", [("100", False), (True, False), (200.0, True), (None, False)])
def test_ordering_only_on_numbers(value, expected):
    # durable itself would say "100" > 50 and crash on an absent field: the numeric twin prevents both
    assert _fires("  all:\n    - hyperparameter: {name: x, value: {gt: 50}}", [HP("x", value)]) is expected


def _rule(when: str, name: str = "r") -> str:
    return rule_yaml(when, name)


def _fires(when: str, facts) -> bool:
    rules, diags = parse_rules_text(_rule(when), "t.yaml")
    assert not [d for d in diags if d.severity == "error"], [d.format() for d in diags]
    firings, _ = RuleBase(rules).infer(facts)
    return bool(firings)


LC = lambda **kw: LossCurve(split="train", **kw)  # noqa: E731
HP = lambda name, value, **kw: Hyperparameter(name=name, value=value, **kw)  # noqa: E731


@pytest.mark.parametrize("cond,fact,expected", [
    ("{points: {between: [10, 20]}}", LC(points=15), True),
    ("{points: {between: [10, 20]}}", LC(points=25), False),
    ("{points: {in: [1, 2, 3]}}", LC(points=2), True),
    ("{points: {in: [1, 2, 3]}}", LC(points=4), False),
    ("{points: {ne: 4}}", LC(points=4), False),
    ("{points: {ge: 4, le: 4}}", LC(points=4), True),
    ("{first_nonfinite_step: {exists: false}}", LC(), True),
    ("{first_nonfinite_step: {exists: false}}", LC(first_nonfinite_step=3), False),
    ("{first_nonfinite_step: {lt: 100}}", LC(), False),  # not measured matches nothing
    ("{min_value: {lt: 0.00001}}", LC(min_value=1e-7), True),
    ("{min_value: {gt: 1000000000000}}", LC(min_value=1e30), True),
    ("{min_value: {gt: 1000000000000}}", LC(min_value=float("inf")), False),
    ("{diverged: true}", LC(diverged=False), False),
])
def test_operators(cond, fact, expected):
    assert _fires(f"  all:\n    - loss_curve: {cond}", [fact]) is expected


@pytest.mark.parametrize("text,expected", [("sgd (momentum).x", True), ("adam", False)])
def test_contains_with_regex_characters(text, expected):
    assert _fires("  all:\n    - hyperparameter: {name: optimizer, value: {contains: '(momentum).'}}",
                  [HP("optimizer", text)]) is expected


def test_join_by_reference_and_baseline_side():
    when = ("  all:\n    - hyperparameter: {name: learning_rate}\n"
            "    - hyperparameter: {name: learning_rate, side: baseline, value: {lt: {ref: hyperparameter.value}}}\n"
            "      as: base")
    assert _fires(when, [HP("learning_rate", 0.1), HP("learning_rate", 0.01, side="baseline")])
    assert not _fires(when, [HP("learning_rate", 0.01), HP("learning_rate", 0.1, side="baseline")])
    # without side: baseline a pattern only sees the run's facts
    assert not _fires("  all:\n    - hyperparameter: {name: learning_rate}", [HP("learning_rate", 0.1, side="baseline")])


def test_not_is_order_independent():
    when = "  all:\n    - loss_curve: {diverged: true}\n    - not: {hyperparameter: {name: learning_rate}}"
    lc, hp = LC(diverged=True), HP("learning_rate", 0.1)
    assert not _fires(when, [lc, hp])
    assert not _fires(when, [hp, lc])
    assert _fires(when, [lc])


def test_not_on_the_same_kind_as_a_positive_pattern():
    # "a learning rate above 0.01, and no other learning-rate fact below it"
    when = ("  all:\n    - hyperparameter: {name: learning_rate, value: {gt: 0.01}}\n"
            "    - not: {hyperparameter: {name: learning_rate, value: {lt: {ref: hyperparameter.value}}}}")
    a, b = HP("learning_rate", 0.1), HP("learning_rate", 0.05)
    assert _fires(when, [a])            # the matched fact itself does not block its own rule
    assert _fires(when, [b])
    rules, _ = parse_rules_text(_rule(when), "t.yaml")
    firings, _ = RuleBase(rules).infer([a, b])
    assert [f.facts["hyperparameter"].value for f in firings] == [0.05]
    firings, _ = RuleBase(rules).infer([b, a])
    assert [f.facts["hyperparameter"].value for f in firings] == [0.05]


def test_any_top_level_and_nested():
    assert _fires("  any:\n    - loss_curve: {points: 1}\n    - hyperparameter: {name: lr}", [HP("lr", 1.0)])
    nested = "  all:\n    - loss_curve: {points: 1}\n    - any:\n      - hyperparameter: {name: a}\n      - hyperparameter: {name: b}\n        as: hb"
    assert _fires(nested, [LC(points=1), HP("b", 1.0)])
    assert not _fires(nested, [LC(points=1), HP("c", 1.0)])


def test_identical_facts_do_not_collide_and_unmatched_kinds_are_fine():
    facts = [LC(points=1), LC(points=1), HP("unrelated", "x")]
    assert _fires("  all:\n    - loss_curve: {points: 1}", facts)


def test_rule_base_larger_than_one_ruleset():
    text = "".join(rule_yaml(f"  all:\n    - loss_curve: {{points: {{ge: {i}}}}}", f"r{i:03d}", as_list_item=True)
                   for i in range(150))
    rules, diags = parse_rules_text(text, "many.yaml")
    assert len(rules) == 150 and not [d for d in diags if d.severity == "error"]
    firings, _ = RuleBase(rules).infer([LC(points=100)])
    assert sorted(f.rule.id for f in firings) == [f"r{i:03d}" for i in range(101)]


def test_chained_findings_and_isolation():
    rules, diags = load_rules([DATA / "chain.yaml"])
    assert not diags
    rb = RuleBase(rules)
    facts = [LC(first_nonfinite_step=7)]
    first, _ = rb.infer(facts)
    ids = sorted(f.rule.id for f in first)
    assert ids == ["test-finding-nonfinite", "test-nonfinite-without-lr"]
    chained = next(f for f in first if f.rule.id == "test-nonfinite-without-lr")
    assert chained.evidence == "loss non-finite from step 7"
    # a diagnosis with a learning rate in between must not leak into the next one
    with_lr, _ = rb.infer(facts + [HP("learning_rate", 0.0001)])
    assert sorted(f.rule.id for f in with_lr) == ["test-finding-nonfinite", "test-small-lr-argues-against"]
    again, _ = rb.infer(facts)
    assert [(f.rule.id, f.evidence) for f in again] == [(f.rule.id, f.evidence) for f in first]


def test_concurrent_diagnoses_are_isolated():
    rules, _ = load_rules([DATA / "diverge.yaml"])
    rb = RuleBase(rules)
    results = {}

    def work(i):
        lr = 0.1 if i % 2 else 0.0001
        out = []
        for _ in range(5):
            f, _ = rb.infer([LC(diverged=True, first_nonfinite_step=i), HP("learning_rate", lr)])
            out.append([x.evidence for x in f])
        results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, out in results.items():
        expected = [f"train loss became non-finite at step {i} with learning_rate=0.1 (above 0.01)"] if i % 2 else []
        assert out == [expected] * 5


def test_evidence_reads_an_unmeasured_field_as_question_mark_and_false():
    from advisor.facts.loss_curve import GeneralizationGap
    from advisor.rulebase.evidence import render_evidence

    text = "best {{ g.eval_min }}{% if g.score_name %}; {{ g.score_name }} {{ g.score_last }}{% endif %} of {{ g.score_best }}"
    gap = GeneralizationGap(eval_points=3, eval_min=0.5)
    assert render_evidence(text, {"g": gap}, {}) == "best 0.5 of ?"
    scored = GeneralizationGap(eval_points=3, eval_min=0.5, score_name="val_acc", score_last=0.9, score_best=0.9)
    assert render_evidence(text, {"g": scored}, {}) == "best 0.5; val_acc 0.9 of 0.9"
