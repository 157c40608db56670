"""Hostile rule files (a user's --rules): no hang, no memory blow-up, no leak; a rule error with
its position instead (issue #17: templates that loop, YAML alias bombs, deep nesting, --param leak)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.rulebase.evidence import render_evidence
from advisor.rulebase.load import load_rules, parse_rules_text

RULE = """id: hostile-template
cause: lr_too_high
title: A rule whose evidence template is hostile
severity: low
confidence: 0.6
when:
  all:
    - hyperparameter: {{name: learning_rate, value: {{gt: 0}}}}
evidence: >-
  {evidence}
remedies: [Do nothing.]
doc: {{what: w, why: y, fix: f, references: [https://jinja.palletsprojects.com/en/3.1.x/sandbox/]}}
tests:
  fires:
    - name: fires
      facts:
        - hyperparameter: {{name: learning_rate, value: 0.1}}
  quiet:
    - name: quiet
      facts:
        - hyperparameter: {{name: learning_rate, value: 0}}
"""

HOSTILE_TEMPLATES = {
    "nested-loops": "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}done",
    "huge-range": "{% for i in range(10**9) %}x{% endfor %}",
    "string-times": "{{ 'x' * 10**10 }}",
    "big-power": "{{ 7 ** 100000000 }}",
    "wide-format": "{{ '%0999999999d' % 1 }}{{ '{:>999999999}'.format(1) }}",
    "wide-filter": "{{ 'x' | center(999999999) }}",
    "wide-method": "{{ 'x'.ljust(999999999) }}",
    "output-flood": "{% for i in range(99999) %}{% for j in range(99999) %}xxxxxxxx{% endfor %}{% endfor %}",
    "list-times": "{{ ([1] * 10**6) * 10**6 }}",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_TEMPLATES))
def test_hostile_evidence_template_is_cut_not_a_hang(name):
    text = render_evidence(HOSTILE_TEMPLATES[name], {}, {})
    assert text.startswith("(evidence template failed") and len(text) < 2000, text[:300]


def test_ordinary_templates_still_render():
    assert render_evidence("{% for i in range(3) %}{{ i }}{% endfor %} {{ 2 ** 10 }} {{ 'ab' * 3 }}", {}, {}) == \
        "012 1024 ababab"


def test_rules_test_with_a_looping_template_fails_the_case(tmp_path, cli):
    f = tmp_path / "r.yaml"
    text = RULE.format(evidence=HOSTILE_TEMPLATES["nested-loops"])
    f.write_text(text.replace("value: 0.1}\n", "value: 0.1}\n      evidence_has: done\n", 1))
    code, out, _ = cli("rules", "test", f)
    assert code == 1 and "FAIL hostile-template::fires" in out and "over budget" in out


def test_diagnose_with_a_looping_template_goes_on(run_dir, tmp_path, cli):
    f = tmp_path / "r.yaml"
    f.write_text(RULE.format(evidence=HOSTILE_TEMPLATES["nested-loops"]))
    code, out, err = cli("diagnose", run_dir, "--rules", f, "-f", "json")
    assert code == 0, err
    report = json.loads(out)
    texts = [e["text"] for c in report["causes"] + report["smells"] for e in c["evidence"]]
    assert any("evidence template failed" in t for t in texts)


def _laughs(levels: int, width: int) -> str:
    lines = ["a0: &a0 [lol]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + f"\nid: laughs\ncause: lr_too_high\ntitle: t\nwhen: {{all: [{{hyperparameter: {{name: *a{levels - 1}}}}}]}}\n"


@pytest.mark.parametrize("levels,width", [(9, 9), (25, 2)])
def test_yaml_alias_bomb_in_a_rule_file_is_an_error(tmp_path, levels, width):
    f = tmp_path / "bomb.yaml"
    f.write_text(_laughs(levels, width).replace("when:", f"remedies: *a{levels - 1}\nwhen:"))
    rules, diags = load_rules([f])
    assert not rules
    assert any("alias" in d.message for d in diags), [d.message for d in diags]


def test_deeply_nested_rule_file_is_an_error_with_a_position():
    for text in ("id: x\nwhen: " + "[" * 5000 + "]" * 5000 + "\n", "id: x\nwhen: " + "{a: " * 5000 + "1" + "}" * 5000):
        rules, diags = parse_rules_text(text, "deep.yaml")
        assert not rules and diags and diags[0].line is not None
        assert any("nest" in d.message for d in diags), [d.message for d in diags]


def test_distinct_param_values_do_not_accumulate_rulesets(run_dir, monkeypatch):
    from advisor.diagnosis import diagnose
    from advisor.rulebase import engine

    rules = Path(__file__).resolve().parents[1] / "rulebase" / "data" / "diverge.yaml"
    monkeypatch.setattr(engine, "MAX_REGISTERED", 4)
    before = set(engine._REGISTERED)
    for i in range(12):  # a parameter value registers no ruleset of its own (the matcher runs such rules)
        diagnose(run_dir, rules=[rules], only_rules=True,
                 params={"test-loss-diverges-at-large-lr.max_safe_lr": 0.5 + i})
    assert len(set(engine._REGISTERED) - before) <= 1


def test_deeply_nested_evidence_template_is_a_rule_error():
    for evidence in ("{{ " + "[" * 3000 + "]" * 3000 + " }}", "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}"):
        rules, diags = parse_rules_text(RULE.format(evidence=evidence), "deep.yaml")
        assert not rules
        assert any(d.code == "evidence-template" and "deep" in d.message for d in diags), [d.format() for d in diags]


def test_odd_entries_of_a_rules_folder_are_refused(tmp_path):
    import os

    from advisor.rulebase.load import load_rules

    folder = tmp_path / "rules"
    folder.mkdir()
    os.mkfifo(folder / "pipe.yaml")  # opening it would block forever
    (folder / "loop.yaml").symlink_to(folder / "loop.yaml")
    (folder / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    rules, diags = load_rules([folder])
    assert rules == []
    why = {os.path.basename(d.path): d.message for d in diags}
    assert "named pipe" in why["pipe.yaml"] and "loop" in why["loop.yaml"] and "to nothing" in why["gone.yaml"]
    assert all(d.severity == "error" and d.message.startswith("refused:") for d in diags)
