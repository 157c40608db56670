"""Rule validation: every problem at once, with file:line:column, rule id and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.rulebase.load import load_rules, parse_rules_text

DATA = Path(__file__).parent / "data"
GOOD = (DATA / "diverge.yaml").read_text()


def _diags(text: str):
    rules, diags = parse_rules_text(text, "r.yaml")
    return rules, [d for d in diags]


def test_good_rule_loads_without_diagnostics():
    rules, diags = _diags(GOOD)
    assert diags == []
    (rule,) = rules
    assert rule.id == "test-loss-diverges-at-large-lr" and rule.cause == "lr_too_high"
    assert rule.params == {"max_safe_lr": 0.01}
    assert [c.name for c in rule.fires] == ["NaN at step 260 with lr 0.1"]


def test_all_errors_reported_at_once_with_positions():
    bad = (GOOD.replace("confidence: 0.8", "confidance: 0.8")
               .replace("diverged: true}", "divergd: true}", 1)
               .replace("gt: $max_safe_lr", "gt: high")
               .replace("{{ loss_curve.first_nonfinite_step }}", "{{ loss_curve.first_nan }}"))
    rules, diags = _diags(bad)
    assert rules == []
    text = "\n".join(d.format() for d in diags)
    assert "r.yaml:5:1: error[rule-schema]: unknown key 'confidance' in rule 'test-loss-diverges-at-large-lr'" in text
    assert "did you mean 'confidence'?" in text
    assert "r.yaml:10:34: error[rule-schema]: fact kind 'loss_curve' has no field 'divergd'" in text
    assert "'gt' needs a number, got 'high'" in text
    assert "'loss_curve' has no field 'first_nan'" in text
    assert all(d.rule == "test-loss-diverges-at-large-lr" for d in diags)
    assert len([d for d in diags if d.severity == "error"]) == 5  # 4 + the missing 'confidence'


@pytest.mark.parametrize("old,new,message", [
    ("loss_curve: {split: train, diverged: true}", "loss_curv: {split: train}", "unknown fact kind 'loss_curv'"),
    ("value: {gt: $max_safe_lr}", "value: {greater: 1}", "unknown operator 'greater'"),
    ("value: {gt: $max_safe_lr}", "value: {gt: $nope}", "param '$nope' has no default"),
    ("split: train, diverged: true}", "split: training, diverged: true}", "'split' of 'loss_curve' is never 'training'"),
    ("diverged: true}", "diverged: {gt: 1}}", "'gt' needs a numeric field"),
    ("severity: high", "severity: critical", "severity must be one of low, medium, high"),
    ("confidence: 0.8", "confidence: 1.8", "confidence must be a number in -1..1"),
    ("(above {{ max_safe_lr }})", "(above {{ max_safe }})", "evidence uses 'max_safe'"),
    ("(above {{ max_safe_lr }})", "(above {{ max_safe_lr }", "evidence template error"),
    ("(above {{ max_safe_lr }})", "(above {{ max_safe_lr | numm }})", "No filter named 'numm'"),
    ("  quiet:", "  quiet_cases:", "unknown key 'quiet_cases' in tests"),
    ("first_nonfinite_step: 260}\n        - hyperparameter: {name: learning_rate, value: 0.1}",
     "first_nonfinite_stp: 260}\n        - hyperparameter: {name: learning_rate, value: 0.1}",
     "fact kind 'loss_curve' has no field 'first_nonfinite_stp'"),
])
def test_each_problem_is_named(old, new, message):
    assert old in GOOD
    _, diags = _diags(GOOD.replace(old, new, 1))
    assert any(message in d.format() for d in diags), [d.format() for d in diags]
    assert all(d.line is not None and d.line >= 1 for d in diags)


def test_unknown_cause_is_a_warning_not_an_error():
    rules, diags = _diags(GOOD.replace("cause: lr_too_high", "cause: my_custom_cause"))
    assert len(rules) == 1
    assert [d.severity for d in diags] == ["warning"]
    assert "cause 'my_custom_cause' is not in the cause catalogue" in diags[0].message


def test_duplicate_ids_across_files(tmp_path):
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    rules, diags = load_rules([tmp_path])
    assert len(rules) == 1
    (d,) = diags
    assert d.code == "duplicate-id" and d.path.endswith("b.yaml") and "first defined at" in d.hint


def test_missing_quiet_case_and_doc_part():
    text = GOOD.replace("  fix: Reduce the rate and rerun.\n", "")
    text = text[:text.index("  quiet:")]
    _, diags = _diags(text)
    msgs = [d.message for d in diags]
    assert "doc of rule 'test-loss-diverges-at-large-lr' has no 'fix' text" in msgs
    assert "rule 'test-loss-diverges-at-large-lr' has no 'quiet' test case" in msgs


def test_yaml_syntax_error_and_duplicate_key_and_tags():
    _, diags = _diags("id: x\n  bad: [\n")
    assert diags[0].code == "yaml" and diags[0].line is not None
    _, diags = _diags(GOOD + "severity: low\n")
    assert any("duplicate key 'severity'" in d.message for d in diags)
    _, diags = _diags("!!python/object/apply:os.system ['echo hi']\n")
    assert diags[0].code == "yaml"


def test_anchor_bomb_is_refused():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefg", "bcdefgh"))
    _, diags = _diags(bomb)
    assert diags and "anchor bomb" in diags[0].message


def test_refs_and_aliases_are_checked():
    text = GOOD.replace("- hyperparameter: {name: learning_rate, value: {gt: $max_safe_lr}}",
                        "- hyperparameter: {name: learning_rate, value: {gt: {ref: loss_curv.last_value}}}")
    _, diags = _diags(text)
    assert any("ref 'loss_curv.last_value' names no fact of this rule" in d.message for d in diags)
    text = GOOD.replace("- hyperparameter: {name: learning_rate, value: {gt: $max_safe_lr}}",
                        "- loss_curve: {split: eval}")
    _, diags = _diags(text)
    assert any("need distinct names" in d.message for d in diags)


def test_several_yaml_documents_in_one_file_get_a_plain_message():
    _, diags = _diags(GOOD + "\n---\n" + GOOD)
    assert [d.code for d in diags] == ["yaml"] and "several YAML documents" in diags[0].message
    assert "one rule per file" in diags[0].hint
