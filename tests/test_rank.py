"""The combination algebra of rank.py: bounds, order independence, known values."""

from __future__ import annotations

import itertools
import random

import pytest

from advisor.rank import combine, noisy_or


def test_known_values():
    assert combine([]) == 0.0
    assert combine([0.8]) == pytest.approx(0.8)
    assert combine([-0.5]) == pytest.approx(-0.5)
    assert combine([0.6, 0.6]) == pytest.approx(0.84)          # two independent supports beat one
    assert combine([0.8, -0.5]) == pytest.approx((0.8 - 0.5) / (1 - 0.5))
    assert combine([0.5, -0.5]) == pytest.approx(0.0)
    assert combine([1.0, 0.3]) == pytest.approx(1.0)          # a certain rule stays certain
    assert combine([1.0, -1.0]) == 0.0                         # certain both ways: undecided


def test_noisy_or_bounds_and_monotone():
    assert noisy_or([]) == 0.0
    assert noisy_or([0.3, 0.4]) == pytest.approx(1 - 0.7 * 0.6)
    assert noisy_or([0.3, 0.4, 0.1]) > noisy_or([0.3, 0.4])


def test_order_independent_and_bounded():
    rng = random.Random(7)
    for _ in range(200):
        cs = [rng.uniform(-1, 1) for _ in range(rng.randint(1, 6))]
        values = {round(combine(p), 12) for p in itertools.permutations(cs)}
        assert len(values) == 1
        v = values.pop()
        assert -1.0 <= v <= 1.0


def test_support_only_grows_and_opposition_only_shrinks():
    base = [0.4, -0.2]
    assert combine(base + [0.3]) > combine(base)
    assert combine(base + [-0.3]) < combine(base)


def _firing(rule_id: str, cause: str, confidence: float, facts: dict) -> "Firing":
    from advisor.rulebase.infer import Firing
    from advisor.rulebase.schema import Rule

    rule = Rule(id=rule_id, title=rule_id, severity="medium", confidence=confidence, mode="all", items=[],
                evidence="", remedies=[], doc={}, cause=cause)
    return Firing(rule=rule, facts=facts, evidence=rule_id)


def test_rules_reading_one_fact_count_once_at_their_strongest():
    from advisor.facts.loss_curve import LossCurve
    from advisor.rank import rank

    curve = LossCurve(split="train", metric_name="loss", x_unit="step", points=50, first_value=2.0,
                      last_value=1.0, min_value=1.0)
    other = LossCurve(split="eval", metric_name="loss", x_unit="step", points=5, first_value=2.0,
                      last_value=1.0, min_value=1.0)
    same = [_firing("a", "insufficient_epochs", 0.6, {"loss_curve": curve}),
            _firing("b", "insufficient_epochs", 0.5, {"loss_curve": curve})]
    causes, _ = rank(same)
    assert causes[0].raw_confidence == pytest.approx(0.6)      # not 1 - 0.4 * 0.5 = 0.8
    assert causes[0].rules == ["a", "b"]                       # both still shown as evidence
    independent = [_firing("a", "insufficient_epochs", 0.6, {"loss_curve": curve}),
                   _firing("b", "insufficient_epochs", 0.5, {"loss_curve": other})]
    causes, _ = rank(independent)
    assert causes[0].raw_confidence == pytest.approx(0.8)


def test_remedies_saying_the_same_first_thing_collapse():
    from advisor.rank import remedy_key

    assert remedy_key("Train longer (more epochs or steps, the schedule stretched with them) until it levels off.") \
        == remedy_key("Train longer until the eval loss levels off.")
    assert remedy_key("Lower the learning rate 3-10x.") != remedy_key("Raise the learning rate 3-10x.")
    assert remedy_key("Check the labels; then the loss.") == "check the labels"


def test_a_rule_on_a_subset_of_anothers_facts_is_absorbed():
    from advisor.facts.loss_curve import LossCurve
    from advisor.rank import rank

    lr = LossCurve(split="train", metric_name="lr", x_unit="step", points=5, first_value=1.0, last_value=1.0,
                   min_value=1.0)
    curve = LossCurve(split="train", metric_name="loss", x_unit="step", points=50, first_value=2.0,
                      last_value=1.0, min_value=1.0)
    dev = LossCurve(split="eval", metric_name="loss", x_unit="step", points=5, first_value=2.0, last_value=1.0,
                    min_value=1.0)
    firings = [_firing("lr-alone", "lr_too_low", 0.55, {"a": lr}),
               _firing("lr-and-curve", "lr_too_low", 0.5, {"a": lr, "b": curve}),
               _firing("lr-and-baseline", "lr_too_low", 0.6, {"a": lr, "b": dev})]
    causes, _ = rank(firings)
    # lr-alone is absorbed; lr-and-curve counts at no less than it (0.55); two observations remain
    assert causes[0].raw_confidence == pytest.approx(1 - 0.45 * 0.4)
