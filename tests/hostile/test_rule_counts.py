"""Rule files and rules are counted and bounded before they are parsed in full (issue #50): 100,000 rules in a
--rules folder took minutes to be refused. Past the limits, each is one ``file:line:column: error[rule-file]``
diagnostic, within seconds."""

from __future__ import annotations

import time

import pytest

from advisor.rulebase import load
from advisor.rulebase.load import MAX_RULE_FILE_BYTES, MAX_RULE_FILES, MAX_RULES, load_rules, parse_counted

#: a rule in flow style, about 140 bytes: 7,000 fit in one file under the size limit
RULE = (
    "- {{id: r{i}, cause: lr_too_high, title: t, severity: low, confidence: 0.5, "
    "when: {{all: [{{loss_curve: {{diverged: true}}}}]}}, remedies: [r]}}\n"
)


def _rules(first: int, n: int) -> str:
    return "".join(RULE.format(i=i) for i in range(first, first + n))


def test_one_file_past_the_rule_limit_is_refused_at_the_first_rule_too_many(tmp_path):
    text = _rules(0, 7000)
    assert len(text) < MAX_RULE_FILE_BYTES
    (tmp_path / "many.yaml").write_text(text)
    start = time.monotonic()
    rules, diags = load_rules([tmp_path / "many.yaml"])
    elapsed = time.monotonic() - start
    assert rules == []
    (d,) = [d for d in diags if d.code == "rule-file"]
    assert (d.line, d.column) == (MAX_RULES + 1, 3), d.format()  # the first rule too many
    assert f"more than {MAX_RULES:,} rules" in d.format() and d.format().startswith(f"{tmp_path / 'many.yaml'}:")
    assert elapsed < 3, elapsed


def test_a_folder_of_many_files_past_the_rule_limit_stops_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(load, "MAX_RULES", 30)
    for k in range(10):
        (tmp_path / f"part{k}.yaml").write_text(_rules(10 * k, 10))
    rules, diags = load_rules([tmp_path])
    errors = [d.format() for d in diags if d.code == "rule-file"]
    assert len(errors) == 2, errors
    assert "part3.yaml:1:3: error[rule-file]: more than 30 rules" in errors[0]
    assert "6 rule files not read" in errors[1]


def test_a_folder_of_too_many_rule_files_is_counted_before_any_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(load, "MAX_RULE_FILES", 20)
    for k in range(25):
        (tmp_path / f"r{k:03d}.yaml").write_text(_rules(k, 1))
    parsed = []
    monkeypatch.setattr(load, "parse_counted", lambda *a, **kw: parsed.append(a) or ([], [], 1))
    rules, diags = load_rules([tmp_path])
    assert parsed == [] and rules == []
    (d,) = diags
    assert d.code == "rule-file" and "more than 20 rule files" in d.message and d.path == str(tmp_path)


def test_the_shipped_limits_leave_room_for_the_rule_base():
    from advisor.rulebase.docs import builtin_rules_dir

    files, _ = load.rule_files([builtin_rules_dir()])
    assert len(files) * 3 < MAX_RULE_FILES and MAX_RULES >= 2000


def test_a_rules_folder_of_100000_rules_is_refused_quickly(tmp_path, cli):
    """The reported case, at its size: 100,000 rules in 17 files of 6,000 (each under the size limit)."""
    folder = tmp_path / "rules"
    folder.mkdir()
    for k in range(17):
        (folder / f"part{k:02d}.yaml").write_text(_rules(6000 * k, min(6000, 100_000 - 6000 * k)))
    start = time.monotonic()
    code, out, err = cli("rules", "validate", folder)
    elapsed = time.monotonic() - start
    assert code == 1
    assert f"more than {MAX_RULES:,} rules" in err and "rule files not read" in err
    assert elapsed < 15, elapsed


def test_parse_counted_counts_every_rule_valid_or_not():
    assert parse_counted(_rules(0, 5), "x.yaml")[2] == 5
    assert parse_counted("- {}\n- {}\n- 3\n", "x.yaml")[2] == 3
    assert parse_counted(RULE.format(i=0)[2:], "x.yaml")[2] == 1  # one rule as a mapping


@pytest.mark.parametrize("size", [MAX_RULE_FILE_BYTES + 1, 50 * MAX_RULE_FILE_BYTES])
def test_a_big_rule_file_is_not_read_whole(tmp_path, size):
    f = tmp_path / "big.yaml"
    with open(f, "wb") as fh:
        fh.truncate(size)  # sparse: reading it whole would cost what it announces
    rules, diags = load_rules([f])
    assert rules == [] and any("larger than" in d.message for d in diags)


def test_the_bytes_of_rule_text_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(load, "MAX_RULES_BYTES", 3_000)
    for k in range(5):
        (tmp_path / f"part{k}.yaml").write_text(_rules(10 * k, 10))  # about 1,400 bytes each
    rules, diags = load_rules([tmp_path])
    (d,) = [d for d in diags if d.code == "rule-file"]
    assert d.path.endswith("part2.yaml") and "past 3,000 bytes of rules" in d.message and "the 2 after it" in d.message
