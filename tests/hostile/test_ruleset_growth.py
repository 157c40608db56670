"""The Python API called with a new parameter value each time (issue 50): durable-rules keeps part of the memory
of every ruleset it ever made, so parameter values must not make rulesets; a rule whose parameter is overridden
is matched in Python, with the same firings."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.rulebase import backends, engine

RULES = Path(__file__).resolve().parents[1] / "rulebase" / "data" / "diverge.yaml"
PARAM = "test-loss-diverges-at-large-lr.max_safe_lr"


@pytest.fixture()
def durable():
    if backends.durable_problem():
        pytest.skip(backends.durable_problem() or "")
    engine.load()


def _causes(run_dir: Path, engine_name: str, value: float) -> list[str]:
    from advisor.diagnosis import diagnose

    report = diagnose(run_dir, rules=[RULES], only_rules=True, params={PARAM: value}, engine=engine_name)
    return sorted(c.id for c in report.causes)


def test_distinct_parameter_values_make_no_new_ruleset(run_dir: Path, durable, monkeypatch):
    made = []
    real = engine._DRE.create_ruleset

    def counted(name, text):
        made.append(name)
        return real(name, text)

    monkeypatch.setattr(engine._DRE, "create_ruleset", counted)
    _causes(run_dir, "durable", 0.5)
    first = len(made)
    for i in range(20):
        _causes(run_dir, "durable", 0.25 + i / 7)
    assert len(made) == first  # the rules no value touches were registered once; the others are matched


@pytest.mark.parametrize("value", [1e-9, 0.01, 0.1, 0.5, 1e9])
def test_overridden_rules_fire_as_with_the_matcher(durable, value: float):
    from advisor.facts.loss_curve import LossCurve
    from advisor.facts.hparams import Hyperparameter
    from advisor.rulebase.infer import RuleBase
    from advisor.rulebase.load import load_rules

    rules, _ = load_rules([RULES])
    facts = [
        LossCurve(split="train", diverged=True, first_nonfinite_step=260),
        Hyperparameter(name="learning_rate", value=0.1, raw_key="lr"),
    ]
    fired = {}
    for name in ("durable", "python"):
        firings, _ = RuleBase(rules, {PARAM: value}, engine=name).infer(facts)
        fired[name] = [(f.rule.id, f.evidence) for f in firings]
    assert fired["durable"] == fired["python"]
    assert bool(fired["durable"]) == (value < 0.1)
