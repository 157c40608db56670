"""Cross-check: each back-end (durable-rules, the built-in matcher) gives the firings of the plain loop.

The conftest runs this once per back-end, so both agree with one oracle
(matcher.plain_evaluate) and with each other on every random fact set.
"""

from __future__ import annotations

import random

from advisor.facts.hparams import Hyperparameter
from advisor.facts.loss_curve import LossCurve
from advisor.rulebase import matcher
from advisor.rulebase.infer import RuleBase
from advisor.rulebase.load import parse_rules_text

from .rule_text import rule_yaml

WHENS = [  # `when:` bodies, see rule_yaml
    "  all:\n    - loss_curve: {split: train, diverged: true}",
    "  all:\n    - loss_curve: {points: {gt: 50}, min_value: {lt: 0.5}}",
    "  all:\n    - loss_curve: {last_value: {between: [0.1, 1.0]}}\n    - hyperparameter: {name: learning_rate, value: {ge: 0.01}}",
    "  all:\n    - loss_curve: {split: eval}\n    - not: {hyperparameter: {name: learning_rate, value: {lt: 0.001}}}",
    "    any:\n    - loss_curve: {first_nonfinite_step: {exists: true}}\n    - hyperparameter: {name: optimizer, value: {in: [sgd, adam]}}",
    "  all:\n    - hyperparameter: {name: optimizer, value: {contains: ad}}\n    - hyperparameter: {name: learning_rate, value: {gt: 0.0001}}\n      as: lr",
    "  all:\n    - loss_curve: {split: train}\n    - loss_curve: {split: eval, last_value: {gt: {ref: loss_curve.last_value}}}\n      as: ev",
    "  all:\n    - loss_curve: {first_nonfinite_step: {exists: false}, points: {ne: 10}}",
]


def _facts(rng: random.Random) -> list:
    facts = []
    for _ in range(rng.randint(0, 4)):
        facts.append(LossCurve(split=rng.choice(["train", "eval"]), points=rng.choice([10, 60, 200]),
                               diverged=rng.random() < 0.3,
                               last_value=rng.choice([None, 0.05, 0.3, 0.9, 3.0, float("nan")]),
                               min_value=rng.choice([None, 0.2, 0.7]),
                               first_nonfinite_step=rng.choice([None, None, 40]),
                               side=rng.choice(["run", "run", "baseline"])))
    for _ in range(rng.randint(0, 3)):
        name = rng.choice(["learning_rate", "optimizer"])
        value = rng.choice([0.1, 0.0005, 0.01]) if name == "learning_rate" else rng.choice(["adam", "sgd", "adamw", "rmsprop"])
        facts.append(Hyperparameter(name=name, value=value))
    return facts


def test_engine_agrees_with_reference_on_random_fact_sets(engine_name):
    text = "".join(rule_yaml(w, f"r{i}", as_list_item=True) for i, w in enumerate(WHENS))
    rules, diags = parse_rules_text(text, "x.yaml")
    assert len(rules) == len(WHENS), [d.format() for d in diags]
    rb = RuleBase(rules, engine=engine_name)
    assert rb.engine == engine_name
    rng = random.Random(11)
    for _ in range(120):
        facts = _facts(rng)
        dicts = [f.model_dump(exclude={"source"}) for f in facts]
        engine = sorted((f.rule.id, tuple(sorted((a, id(x)) for a, x in f.facts.items())))
                        for f in rb.infer(facts)[0])
        ref = sorted((r.id, tuple(sorted((a, id(facts[i])) for a, i in b.items())))
                     for r in rules for b in matcher.plain_evaluate(r, dicts))
        assert engine == ref, (facts, set(engine) ^ set(ref))
