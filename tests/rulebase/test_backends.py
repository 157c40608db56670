"""The one door to the rule engine: which back-end runs, and what a user is told when one cannot."""

from __future__ import annotations

import pytest

from advisor.facts.hparams import Hyperparameter
from advisor.facts.loss_curve import LossCurve
from advisor.rulebase import backends
from advisor.rulebase.infer import RuleBase
from advisor.rulebase.load import parse_rules_text

from .rule_text import rule_yaml


@pytest.fixture
def no_durable(monkeypatch):
    """This interpreter as Python 3.13 sees it: durable-rules does not import."""
    monkeypatch.setattr(backends, "durable_problem", lambda: "durable-rules does not import (ImportError: undefined symbol: PyEval_CallObject)")


def test_python_is_always_available(monkeypatch, no_durable):
    monkeypatch.delenv(backends.ENV_VAR, raising=False)
    assert backends.choose() == "python"  # auto falls back
    assert backends.choose("auto") == "python"
    assert backends.choose("python") == "python"


def test_asking_for_durable_where_it_cannot_run_says_why(no_durable):
    with pytest.raises(backends.EngineUnavailable, match="PyEval_CallObject.*--engine python"):
        backends.choose("durable")


def test_auto_takes_the_matcher_and_durable_runs_when_asked(monkeypatch):
    monkeypatch.delenv(backends.ENV_VAR, raising=False)
    assert backends.choose() == "python" and backends.choose("auto") == "python"
    if not backends.durable_problem():
        assert backends.choose("durable") == "durable"


def test_the_default_engine_survives_a_trimmed_heap(tmp_path):
    """durable-rules crashed (SIGSEGV) on examples/healthy under MALLOC_TRIM_THRESHOLD_=65536, which Dask sets for
    its workers: the default engine is the matcher, which has no heap of its own to corrupt."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "MALLOC_TRIM_THRESHOLD_": "65536", "ADVISOR_CACHE_DIR": str(tmp_path)}
    env.pop(backends.ENV_VAR, None)
    code = "import sys; from advisor.diagnosis import diagnose; print(len(diagnose(sys.argv[1]).inputs))"
    healthy = Path(__file__).resolve().parents[2] / "examples" / "healthy"
    done = subprocess.run([sys.executable, "-c", code, str(healthy)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_argument_beats_environment(monkeypatch):
    monkeypatch.setenv(backends.ENV_VAR, "durable")
    assert backends.choose("python") == "python"
    monkeypatch.setenv(backends.ENV_VAR, "python")
    assert backends.choose() == "python"


def test_unknown_engine_is_named():
    with pytest.raises(ValueError, match="unknown rule engine 'drools'.*auto, durable, python"):
        backends.choose("drools")


def test_matcher_joins_on_references_both_ways(engine_name):
    # the reference points forward (first pattern names the second's field): checked once both are bound
    when = ("  all:\n    - loss_curve: {split: eval, last_value: {gt: {ref: tr.last_value}}}\n"
            "    - loss_curve: {split: train}\n      as: tr")
    rules, diags = parse_rules_text(rule_yaml(when), "t.yaml")
    assert not [d for d in diags if d.severity == "error"]
    rb = RuleBase(rules, engine=engine_name)
    tr, ev_hi, ev_lo = (LossCurve(split="train", last_value=1.0), LossCurve(split="eval", last_value=2.0),
                        LossCurve(split="eval", last_value=0.5))
    firings, _ = rb.infer([ev_lo, tr, ev_hi])
    assert [(f.facts["loss_curve"].last_value, f.facts["tr"].last_value) for f in firings] == [(2.0, 1.0)]


def test_a_rule_without_facts_of_its_kind_never_fires(engine_name):
    rules, _ = parse_rules_text(rule_yaml("  all:\n    - loss_curve: {points: 1}\n    - hyperparameter: {name: x}"), "t.yaml")
    assert RuleBase(rules, engine=engine_name).infer([Hyperparameter(name="x", value=1.0)])[0] == []


def test_cli_engine_flag(tmp_path, capsys, no_durable):
    from advisor.cli import main

    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(f'{{"step": {i}, "loss": {2.0 / i}}}\n' for i in range(1, 30)))
    assert main(["diagnose", str(run), "--engine", "durable", "-q"]) == 2
    assert "--engine: durable-rules does not import" in capsys.readouterr().err
    assert main(["diagnose", str(run), "--engine", "python", "-q", "-f", "json"]) == 0
    assert '"causes"' in capsys.readouterr().out
