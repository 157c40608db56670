"""The built-in rules keep the house rules: rules/<stage id>/<rule id>.yaml."""

from __future__ import annotations

from advisor.rulebase import builtin_rules_dir
from advisor.rulebase.lint import lint
from advisor.rulebase.load import load_rules

from .rule_text import rule_yaml


def test_builtin_rules_lie_in_their_stage_folder_named_after_their_id():
    rules_dir = builtin_rules_dir()
    rules, _ = load_rules([rules_dir], display_root=rules_dir.parent, trusted=True)
    assert [d.format() for d in lint(rules, rules_dir)] == []


def test_a_rule_outside_a_stage_folder_or_misnamed_is_reported(tmp_path):
    rules_dir = tmp_path / "rules"
    (rules_dir / "floating_point").mkdir(parents=True)  # not a stage id (floating_point_exceptions is)
    (rules_dir / "floating_point" / "r.yaml").write_text(rule_yaml("  all:\n    - loss_curve: {points: 1}"))
    (rules_dir / "loss_curve").mkdir()
    (rules_dir / "loss_curve" / "other-name.yaml").write_text(rule_yaml("  all:\n    - loss_curve: {points: 1}", "q"))
    rules, diags = load_rules([rules_dir], display_root=tmp_path)
    assert not [d for d in diags if d.severity == "error"]
    problems = sorted(d.format().splitlines()[0] for d in lint(rules, rules_dir))
    assert problems == [
        "rules/floating_point/r.yaml:1:1: error[rule-lint]: rule 'r' is not in a stage folder (rules/<stage>/r.yaml)",
        "rules/loss_curve/other-name.yaml:1:1: error[rule-lint]: file of rule 'q' is named 'other-name.yaml'",
    ]
