"""The generated rule reference (docs/rules/, the rule quoted in docs/writing-rules.md) matches the rules."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from advisor.rulebase import docs

ROOT = Path(__file__).resolve().parents[2]


def test_generated_pages_are_up_to_date():
    stale = docs.drift(ROOT)
    assert stale == [], "run `python -m advisor.rulebase.docs`; out of date: " + ", ".join(stale)


@pytest.mark.slow  # copies and regenerates every page
def test_drift_is_seen_and_the_generator_repairs_it(tmp_path):
    for part in ("rules", "docs"):
        shutil.copytree(ROOT / part, tmp_path / part)
    page = tmp_path / "docs" / "rules" / "loss-diverges-at-large-lr.md"
    page.write_text(page.read_text().replace("How to fix it", "How to fix"))
    (tmp_path / "docs" / "rules" / "removed-rule.md").write_text("old")
    guide = tmp_path / "docs" / "writing-rules.md"
    guide.write_text(guide.read_text().replace("id: loss-diverges-at-large-lr\n", "id: hand-edited\n", 1))
    assert docs.drift(tmp_path) == ["docs/rules/loss-diverges-at-large-lr.md", "docs/rules/removed-rule.md (no such rule)",
                                    "docs/writing-rules.md"]
    assert docs.main(["--check", "--root", str(tmp_path)]) == 1
    assert docs.main(["--root", str(tmp_path)]) == 0
    assert docs.drift(tmp_path) == []


def test_writing_rules_quotes_the_real_rule_file():
    guide = (ROOT / "docs" / "writing-rules.md").read_text()
    assert (ROOT / docs.EXAMPLE_RULE).read_text().rstrip() in guide


def test_every_rule_page_carries_the_rule_doc():
    from advisor.rulebase import builtin_rules_dir
    from advisor.rulebase.load import load_rules

    rules, _ = load_rules([builtin_rules_dir()], trusted=True)
    for r in rules:
        text = (ROOT / "docs" / "rules" / f"{r.id}.md").read_text()
        assert str(r.doc["what"]).strip() in text and str(r.doc["fix"]).strip() in text, r.id
