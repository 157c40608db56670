"""Every rule example of docs/writing-rules.md does what the page says, as a user would run it.

The page's rule blocks are read from the page itself (a change to the docs is tested here); the team's
generic-setting example is then used as a team would: their own folder of rules with a causes.yaml, a run whose
config switches augmentation off, ``advisor diagnose --rules ... --fail-on``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from advisor.diagnosis import diagnose, load_rule_set
from advisor.rulebase.testing import run_tests

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "writing-rules.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
RULE_BLOCKS = [b for b in BLOCKS if re.search(r"^id: ", b, re.M)]


def _example(marker: str) -> str:
    [block] = [b for b in RULE_BLOCKS if b.startswith(f"# {marker}")]
    return block


def _healthy_run(folder: Path) -> Path:
    folder.mkdir()
    lines = [
        f"epoch {e} loss {2.3 * 0.7**e:.4f} val_loss {2.3 * 0.72**e:.4f} val_acc {min(0.5 + 0.05 * e, 0.96):.3f}"
        for e in range(1, 21)
    ]
    (folder / "train.log").write_text("\n".join(lines) + "\n")
    (folder / "hparams.yaml").write_text("optimizer: adam\nlr: 0.001\nbatch_size: 32\naugment: false\n")
    return folder


def test_the_page_has_rule_examples():
    assert len(RULE_BLOCKS) >= 2  # the shipped rule it quotes, and the generic-setting example


@pytest.mark.parametrize("block", RULE_BLOCKS, ids=lambda b: yaml.safe_load(b)["id"])
def test_every_rule_example_loads_and_passes_its_own_tests(tmp_path, block):
    f = tmp_path / "rule.yaml"
    f.write_text(block, encoding="utf-8")
    rules, diags = load_rule_set([f], only_rules=True)
    assert [d.format() for d in diags if d.severity == "error"] == []
    assert len(rules) == 1
    results = run_tests(rules)
    assert results and all(r.passed for r in results), [r.message for r in results if not r.passed]


@pytest.fixture()
def team_rules(tmp_path) -> Path:
    rules = tmp_path / "team-rules"
    rules.mkdir()
    (rules / "augmentation-switched-off.yaml").write_text(_example("generic-setting-example"), encoding="utf-8")
    return rules


def test_the_generic_setting_example_reports_what_its_author_wrote(tmp_path, team_rules):
    run = _healthy_run(tmp_path / "run")
    report = diagnose(run, rules=[team_rules])
    [cause] = [c for c in report.causes if c.id == "augmentation_off"]
    # the rule says 0.5: the report says 50 %, though the run trains well and the rule reads a setting only
    assert cause.confidence == 0.5 and cause.user_rules_only
    assert cause in report.found()
    # {{ setting.source }} is the file and line, as the report cites sources, not a Python dict
    [item] = cause.evidence
    assert item.text.startswith("augment is False (hparams.yaml:4);"), item.text
    assert "{" not in item.text


def test_a_custom_cause_declared_in_causes_yaml_draws_no_warning_and_keeps_its_title(tmp_path, team_rules):
    run = _healthy_run(tmp_path / "run")
    undeclared = diagnose(run, rules=[team_rules])
    assert any("augmentation_off" in w and "causes.yaml" in w for w in undeclared.warnings), undeclared.warnings
    (team_rules / "causes.yaml").write_text("augmentation_off: Data augmentation switched off\n")
    declared = diagnose(run, rules=[team_rules])
    assert not [w for w in declared.warnings if "augmentation_off" in w]
    [cause] = [c for c in declared.causes if c.id == "augmentation_off"]
    assert cause.title == "Data augmentation switched off"


def test_a_broken_causes_yaml_is_named_and_the_rules_still_run(tmp_path, team_rules):
    run = _healthy_run(tmp_path / "run")
    (team_rules / "causes.yaml").write_text("- augmentation_off\n")
    report = diagnose(run, rules=[team_rules])
    assert any("causes.yaml" in w and "map each cause id" in w for w in report.warnings), report.warnings
    assert "augmentation_off" in {c.id for c in report.causes}


def test_fail_on_acts_on_the_users_cause_at_the_default_threshold(tmp_path, team_rules):
    run = _healthy_run(tmp_path / "run")
    (team_rules / "causes.yaml").write_text("augmentation_off: Data augmentation switched off\n")
    cmd = [sys.executable, "-m", "advisor", "diagnose", str(run), "--rules", str(team_rules), "-f", "text"]
    gate = subprocess.run([*cmd, "--fail-on", "medium"], capture_output=True, text=True, cwd=tmp_path)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "Data augmentation switched off" in gate.stdout
    higher = subprocess.run([*cmd, "--fail-on", "high"], capture_output=True, text=True, cwd=tmp_path)
    assert higher.returncode == 0, higher.stdout + higher.stderr
