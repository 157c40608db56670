"""The short ways of the rule engine give exactly what the long ways give.

- ``engine.encode_json_fast`` (one json.dumps, numbers rewritten) against ``encode_json`` (a walk);
- ``engine.chunk_texts`` (rulesets put together from each rule's text) against ``encode_json(chunk(...))``;
- ``engine.can_fire`` (rules left out when no fact can match one of their patterns) against running
  every rule: the same firings;
- ``evidence._render_plain`` (plain ``{{ a.b | num }}`` templates filled without jinja) against
  rendering in jinja's sandbox.
"""

from __future__ import annotations

import math
import random
import re

import pytest

from advisor.facts.hparams import Hyperparameter
from advisor.facts.loss_curve import GeneralizationGap, LossCurve
from advisor.rulebase import engine
from advisor.rulebase.compile import compile_rules
from advisor.rulebase.evidence import (
    _compiled,
    _FactView,
    _plain_parts,
    _render_plain,
    render_budgeted,
    render_evidence,
)
from advisor.rulebase.load import parse_rules_text

from .rule_text import rule_yaml


@pytest.fixture(scope="module")
def builtin():
    from advisor.diagnosis import load_rule_set

    rules, _ = load_rule_set()
    return rules


# -- JSON for the engine -------------------------------------------------------------------
NUMBERS = [
    0,
    1,
    -1,
    7,
    2**40,
    -(2**53) - 1,
    10**15,
    10**17,
    0.1,
    -0.0,
    1e-5,
    2.5e-40,
    1e-30,
    1.5e16,
    3.0,
    1 / 3,
    -123.456e-7,
    5e-324,
    1.7976931348623157e308,
    True,
    False,
]
STRINGS = ["", "a", 'quo"te', "back\\slash", "1.5", "-3", "1e5", "ünï", "\u2028", "tab\t", "nl\n", "{[,:]}", "\x00"]


def _value(rng: random.Random, depth: int = 0):
    r = rng.random()
    if depth > 3 or r < 0.4:
        return rng.choice(NUMBERS + STRINGS + [None])
    if r < 0.7:
        return {rng.choice(STRINGS) + str(i): _value(rng, depth + 1) for i in range(rng.randint(0, 4))}
    seq = [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return tuple(seq) if rng.random() < 0.3 else seq


def test_fast_json_is_the_walks_text_on_random_values():
    rng = random.Random(11)
    for _ in range(3000):
        v = _value(rng)
        assert engine.encode_json_fast(v) == engine.encode_json(v), v


@pytest.mark.parametrize("bad", [float("nan"), [1.0, float("inf")], {"a": {"b": -math.inf}}, [2**2000], [object()]])
def test_fast_json_fails_as_the_walk_does(bad):
    with pytest.raises(Exception) as slow:
        engine.encode_json(bad)
    with pytest.raises(type(slow.value), match=str(slow.value)):
        engine.encode_json_fast(bad)


def test_rulesets_are_encoded_as_the_walk_encodes_them(builtin):
    compiled = compile_rules(builtin, {"max_safe_lr": 1e-7})
    parts = engine.chunk(compiled.rules)
    assert len(parts) > 1
    assert compiled.chunk_ids == [list(p) for p in parts]
    assert [compiled.chunk_text(i) for i in range(len(parts))] == [engine.encode_json(p) for p in parts]


# -- rules left out when they cannot fire -----------------------------------------------------
WHENS = [
    "  all:\n    - loss_curve: {split: train, diverged: true}",
    "  all:\n    - loss_curve: {split: eval}\n    - hyperparameter: {name: learning_rate, value: {gt: 0.01}}",
    "  all:\n    - loss_curve: {split: train}\n    - not: {hyperparameter: {name: learning_rate}}",
    "  all:\n    - not: {hyperparameter: {name: optimizer}}\n    - loss_curve: {points: {gt: 5}}",
    "    any:\n    - generalization_gap: {eval_points: {gt: 1}}\n    - hyperparameter: {name: optimizer, value: adam}",
    "  all:\n    - hyperparameter: {name: optimizer, value: {in: [sgd, adam]}}",
    "  all:\n    - loss_curve: {side: baseline}\n    - loss_curve: {side: run, last_value: {gt: {ref: loss_curve.last_value}}}\n"
    "      as: run",
    "  all:\n    - hyperparameter: {name: batch_size, value: {ne: 32}}",
    "  all:\n    - loss_curve: {split: train}\n    - any:\n      - hyperparameter: {name: learning_rate}\n"
    "      - generalization_gap: {eval_points: {ge: 2}}",
]


def _fact_sets(rng: random.Random):
    for _ in range(60):
        facts = []
        for _ in range(rng.randint(0, 3)):
            facts.append(
                LossCurve(
                    split=rng.choice(["train", "eval"]),
                    points=rng.choice([3, 10]),
                    diverged=rng.random() < 0.4,
                    last_value=rng.choice([None, 0.5, 2.0]),
                    side=rng.choice(["run", "baseline"]),
                )
            )
        for _ in range(rng.randint(0, 3)):
            name = rng.choice(["learning_rate", "optimizer", "batch_size"])
            value = {
                "learning_rate": rng.choice([0.1, 0.001]),
                "optimizer": rng.choice(["adam", "sgd", "adamw"]),
                "batch_size": rng.choice([32, 64, "32"]),
            }[name]
            facts.append(Hyperparameter(name=name, value=value))
        if rng.random() < 0.3:
            facts.append(GeneralizationGap(eval_points=rng.choice([1, 2, 5])))
        yield facts


def test_rulesets_left_out_change_no_firing(monkeypatch):
    """Rules in three chunks (one per kind of fact): firings with the chunks that cannot fire left out
    are the firings with every chunk run."""
    from advisor.rulebase.infer import RuleBase

    if not _durable():
        pytest.skip("durable-rules does not import here")
    n = engine.MAX_RULES_PER_RULESET
    text = "".join(
        rule_yaml(w, f"{chr(97 + k)}{j:03d}-{i}", as_list_item=True)
        for k, group in enumerate((WHENS[:4], WHENS[4:7], WHENS[7:]))
        for j in range(n // len(group))
        for i, w in enumerate(group)
    )
    rules, diags = parse_rules_text(text, "w.yaml")
    assert len(rules) > 2 * n and not [d for d in diags if d.severity == "error"]
    rb = RuleBase(rules, engine="durable")
    assert len(rb.backend.compiled.chunk_ids) >= 3
    left_out = 0
    for facts in _fact_sets(random.Random(5)):
        fast = rb.infer(facts)[0]
        dicts = [engine.engine_fact(i, f.model_dump(exclude={"source"})) for i, f in enumerate(facts)]
        live = set(engine.can_fire(rb.backend.compiled, dicts))
        left_out += sum(live.isdisjoint(ids) for ids in rb.backend.compiled.chunk_ids)
        with monkeypatch.context() as m:
            m.setattr(engine, "can_fire", lambda compiled, facts: [r for ids in compiled.chunk_ids for r in ids])
            full = rb.infer(facts)[0]
        assert [(f.rule.id, f.facts, f.evidence) for f in fast] == [(f.rule.id, f.facts, f.evidence) for f in full]
    assert left_out > 0  # the short way was taken


def _durable() -> bool:
    from advisor.rulebase import backends

    return backends.durable_problem() is None


def test_can_fire_keeps_a_rule_when_a_fact_may_match():
    compiled = engine.CompiledRuleset(
        rules={
            "a": {"all": [{"p0": {"$and": [{"kind": "loss_curve"}, {"side": "run"}, {"split": "eval"}]}}]},
            "b": {"all": [{"p0": {"$and": [{"kind": "hyperparameter"}, {"$ex": {"value": 1}}]}}]},
            "c": {"any": [{"p0": {"$and": [{"kind": "nothing_here"}]}}]},  # another shape: always kept
        }
    )
    train = {"_fid": 0, "kind": "loss_curve", "side": "run", "split": "train"}
    assert engine.can_fire(compiled, [train]) == ["c"]
    assert engine.can_fire(compiled, [train, {"_fid": 1, "kind": "loss_curve", "side": "run"}]) == ["a", "c"]
    assert engine.can_fire(compiled, [{"_fid": 0, "kind": "hyperparameter", "side": "run"}]) == ["b", "c"]
    assert engine.can_fire(compiled, [{"_fid": 0, "split": "eval"}]) == ["a", "b", "c"]  # no kind: may match


# -- evidence templates ----------------------------------------------------------------------
TEMPLATES = [
    "plain text only",
    "{{ lc.last_value }}",
    "loss {{ lc.last_value | num }} at {{lc.first_nonfinite_step|step}} of {{ lc . points }}",
    "{{ g.eval_rise_ratio | pct }} / {{ g.eval_rise_ratio|num|pct }} {{ max_lr }} {{ params.max_lr }}",
    "{{ lc.items }} {{ lc.keys }}",  # dict methods: jinja's way
    "{{ lc.source.path }} {{ lc.source }}",
    "{{ nothere }} {{ lc.nothere }} {{ lc.nothere.deeper }} {{ params.nothere }}",
    "{{ true }} {{ none }} {{ range }} {{ lc.split.upper }}",
    "{{ lc.split }}{% if lc.diverged %} diverged{% endif %}",
    "{{- lc.split }} {{ lc.split -}} {# c #}",
    "{{ lc.split }}}} {{ lc.split }",
    "line\r\nend {{ lc.split }}\n",
    "{{ hp.value | num }} {{ hp.name }} {{ hp }}",
    "{{ lc.last_value | num(2) }} {{ 'x' }} {{ lc.points + 1 }}",
    "{{ huge }}",
    "{{ _x }} {{ lc._private }} {{ lc.__class__ }}",
    "{% if lc.diverged %}diverged at {{ lc.first_nonfinite_step | step }}{% endif %} done",
    "a{% if lc.split != 'train' %} eval {{ lc.points }}{% if lc.nothere %} x {{ lc.nothere.deeper }}{% endif %}{% endif %}b",
    "{% if lc.first_nonfinite_step != '?' %}step {{ lc.first_nonfinite_step }}{% endif %}",
    '{% if hp.name == "learning_rate" %}lr {{ hp.value | num }}{% endif %}{%if hp.value%}!{%endif%}',
    "{% if g.eval_rise_ratio %}{{ g.eval_rise_ratio | pct }}{% if g.nothere != '?' %} never{% endif %}{% endif %}",
    "{% if nothere %}x{% endif %} {% if params.max_lr %}{{ max_lr }}{% endif %}",
    "{% if lc.split %}x{% else %}y{% endif %}",
    "{% if lc.split %}unclosed",
    "closed {% endif %}",
    "{% if lc.items %}x{% endif %}",
    "{%- if lc.split %}x{% endif -%}",
    "{% if lc.points == 7 %}seven{% endif %}",
    "{{ lc.points }} value{% if lc.points != 1 %}s{% endif %}{% if hp.value == 3 %} three{% endif %}",
    "{% if lc.points != 1.5 %}x{% endif %} {% if lc.points == 01 %}y{% endif %}",
    "{% if lc.split != 'it\\'s' %}x{% endif %}",
]


def _contexts(rng: random.Random):
    for _ in range(60):
        lc = LossCurve(
            split=rng.choice(["train", "eval"]),
            points=rng.choice([0, 7]),
            last_value=rng.choice([None, 0.000012, 3.0, 123456789.5, float("nan")]),
            first_nonfinite_step=rng.choice([None, 40]),
            diverged=rng.random() < 0.5,
        )
        g = GeneralizationGap(eval_points=2, eval_rise_ratio=rng.choice([None, 0.25]))
        hp = Hyperparameter(name="learning_rate", value=rng.choice([0.1, "1e-3", True, 3]))
        params = {"max_lr": rng.choice([0.01, 5]), "huge": "x" * rng.choice([10, 30_000])}
        yield {"lc": lc, "g": g, "hp": hp}, params


_ADDRESS = re.compile(r"0x[0-9a-f]+")


def _jinja(text: str, facts: dict, params: dict) -> str:
    ctx = dict(params)
    ctx["params"] = dict(params)
    for alias, fact in facts.items():
        ctx[alias] = _FactView(fact.model_dump())
    try:
        return " ".join(render_budgeted(_compiled(text), ctx).split())
    except Exception as exc:  # noqa: BLE001 - the same texts render_evidence gives
        from advisor.rulebase.evidence import TemplateBudgetError

        if isinstance(exc, TemplateBudgetError):
            return f"(evidence template failed: over budget, {exc}; cut)"
        return f"(evidence template failed: {exc})"


def _same(text: str, facts: dict, params: dict) -> bool:
    got, want = render_evidence(text, facts, params, shipped=True), _jinja(text, facts, params)
    assert _ADDRESS.sub("0x", got) == _ADDRESS.sub("0x", want), text  # a method's repr names its object
    ctx = {**params, "params": dict(params), **{a: _FactView(f.model_dump()) for a, f in facts.items()}}
    return _render_plain(text, ctx) is not None


def test_plain_templates_render_as_jinja_renders_them():
    plain = sum(_same(text, facts, params) for facts, params in _contexts(random.Random(3)) for text in TEMPLATES)
    assert plain > 300


def test_builtin_evidence_renders_as_jinja_renders_it(builtin):
    """Each built-in rule's evidence over the facts of its own test cases (by the kind of each pattern)."""
    plain = 0
    for rule in builtin:
        for case in [*rule.fires, *rule.quiet]:
            facts = {}
            for p in rule.patterns():
                fact = next((f for f in case.facts if f.kind == p.kind and f not in facts.values()), None)
                if fact is not None:
                    facts[p.alias] = fact
            plain += _same(rule.evidence, facts, dict(rule.params))
    assert plain > len(builtin)


def test_templates_with_more_than_substitutions_go_to_jinja(builtin):
    for text in [
        "{% if a %}x{% else %}y{% endif %}",
        "{% if a %}x",
        "{% endif %}",
        "{% if a.b > 1 %}x{% endif %}",
        "{% if a.b != 1.5 %}x{% endif %}",
        "{% if a.b != -1 %}x{% endif %}",
        "{% if a | num %}x{% endif %}",
        "{% for a in b %}x{% endfor %}",
        "{{ a ~ b }}",
        "{{ a.b() }}",
        "{{ a['b'] }}",
        "{{ a | upper }}",
        "{{ not a }}",
        "{{ 1 }}",
        "{# x #}",
        "{{ a.0 }}",
        "{{ a }}\n",
        "{{ a",
        "{{ a }} {{",
    ]:
        assert _plain_parts(text) is None, text
    assert _plain_parts("a {{ b.c | num | pct }} d") == (("text", "a "), ("out", ("b", "c"), ("num", "pct")), ("text", " d"))
    assert _plain_parts("{% if b.c != '?' %}x{% endif %}") == (("if", ("b", "c"), "!=", "?"), ("text", "x"), ("endif",))
    assert _plain_parts("{% if b.c != 1 %}s{% endif %}") == (("if", ("b", "c"), "!=", 1), ("text", "s"), ("endif",))
    plain = sum(_plain_parts(r.evidence) is not None for r in builtin)
    assert plain > len(builtin) / 2  # most built-in evidence is plain substitution


def test_only_shipped_rules_skip_jinja(builtin, monkeypatch):
    """A user's template always renders in the sandbox; a shipped rule's plain one is filled directly."""
    from advisor.rulebase import evidence
    from advisor.rulebase.infer import RuleBase

    calls = []
    real = evidence._render_plain
    monkeypatch.setattr(evidence, "_render_plain", lambda text, ctx: calls.append(text) or real(text, ctx))
    text = rule_yaml("  all:\n    - loss_curve: {split: train}", "user-rule").replace(
        "evidence: fired", "evidence: 'points {{ loss_curve.points }}'"
    )
    user, _ = parse_rules_text(text, "user.yaml")
    firings, _ = RuleBase(user).infer([LossCurve(split="train", points=7)])
    assert [f.evidence for f in firings] == ["points 7"] and calls == []
    rule = next(r for r in builtin if r.id == "init-std-too-large")
    from advisor.rulebase import cache

    if cache.origin(rule) is None:
        pytest.skip("the rule-base cache is turned off (ADVISOR_NO_CACHE)")
    firings, _ = RuleBase(builtin).infer(rule.fires[0].facts)
    assert "init-std-too-large" in {f.rule.id for f in firings} and rule.evidence in calls


# -- rounds of chained findings -----------------------------------------------------------------
@pytest.mark.parametrize("engine_name_", ["durable", "python"])
def test_one_round_when_no_rule_reads_findings(engine_name_, monkeypatch):
    """Without a rule on findings, a second round fires the same rules on the same facts: it is skipped."""
    from pathlib import Path

    from advisor.rulebase.infer import RuleBase
    from advisor.rulebase.load import load_rules

    if engine_name_ == "durable" and not _durable():
        pytest.skip("durable-rules does not import here")
    rules, _ = load_rules([Path(__file__).parent / "data" / "chain.yaml"])
    facts = [LossCurve(split="train", first_nonfinite_step=7), Hyperparameter(name="learning_rate", value=0.0001)]
    readers = RuleBase(rules, engine=engine_name_)
    assert readers.reads_findings
    without = RuleBase([r for r in rules if r.id != "test-nonfinite-without-lr"], engine=engine_name_)
    assert not without.reads_findings
    calls = []
    real = without.backend.evaluate
    monkeypatch.setattr(without.backend, "evaluate", lambda dicts: calls.append(len(dicts)) or real(dicts))
    once = without.infer(facts)
    assert calls == [2]  # one round, on the two facts
    monkeypatch.setattr(without, "reads_findings", True)
    twice = without.infer(facts)
    assert calls == [2, 2, 3]  # the rounds as before: the same firings with the finding added
    assert [(f.rule.id, f.facts, f.evidence) for f in once[0]] == [(f.rule.id, f.facts, f.evidence) for f in twice[0]]
    assert once[1] == twice[1] == []
    assert {f.rule.id for f in once[0]} == {"test-finding-nonfinite", "test-small-lr-argues-against"}
