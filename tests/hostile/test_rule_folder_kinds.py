"""A rules folder holding entries that are not rule files (issue 50): a FIFO (opening it blocks), a link to
/dev/zero (never ends), a link to a file outside the folder. Each is refused with an ``error[rule-file]`` naming
it and why, and the commands that load the folder exit non-zero; regular files and links inside the folder load."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from advisor.rulebase import builtin_rules_dir
from advisor.rulebase.load import rule_file_kind_problem, rule_files

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and symbolic links (POSIX)")


def _a_user_rule(folder: Path) -> Path:
    """A valid user rule (a shipped one under another id)."""
    src = builtin_rules_dir() / "hyperparameters" / "init-std-too-large.yaml"
    dst = folder / "mine.yaml"
    dst.write_text(src.read_text(encoding="utf-8").replace("id: init-std-too-large", "id: my-init-std", 1))
    return dst


@pytest.fixture
def hostile_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir()
    _a_user_rule(folder)
    os.mkfifo(folder / "pipe.yaml")
    (folder / "zero.yaml").symlink_to("/dev/zero")
    (tmp_path / "outside.yaml").write_text("id: not-mine\n")
    (folder / "out.yaml").symlink_to(tmp_path / "outside.yaml")
    return folder


def test_each_odd_entry_is_an_error_naming_it(hostile_folder: Path):
    (hostile_folder / "inside.yaml").symlink_to(hostile_folder / "mine.yaml")  # a link inside the folder loads
    files, diags = rule_files([hostile_folder])
    assert [f.name for f in files] == ["inside.yaml", "mine.yaml"]
    why = {Path(d.path).name: d for d in diags}
    assert set(why) == {"pipe.yaml", "zero.yaml", "out.yaml"}
    assert all(d.severity == "error" and d.code == "rule-file" for d in diags)
    assert "named pipe" in why["pipe.yaml"].message and "device" in why["zero.yaml"].message
    assert "outside the rules folder" in why["out.yaml"].message
    assert why["pipe.yaml"].format().startswith(f"{hostile_folder / 'pipe.yaml'}: error[rule-file]: refused: ")


def test_a_link_through_a_linked_folder_name_is_judged_by_where_it_leads(tmp_path: Path):
    real = tmp_path / "real"
    real.mkdir()
    rule = _a_user_rule(real)
    (real / "again.yaml").symlink_to(rule)
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)  # the folder named through a link
    assert rule_file_kind_problem(tmp_path / "alias" / "again.yaml", tmp_path / "alias") is None


def test_the_commands_refuse_the_folder(hostile_folder: Path, cli):
    code, out, err = cli("rules", "validate", hostile_folder)
    text = out + err
    assert code != 0
    for name in ("pipe.yaml", "zero.yaml", "out.yaml"):
        assert f"{name}: error[rule-file]: refused" in text, text
    code, out, err = cli("rules", "test", hostile_folder)
    assert code != 0 and "error[rule-file]" in out + err


def test_diagnose_with_the_folder_exits_non_zero(hostile_folder: Path, run_dir: Path, cli):
    code, out, err = cli("diagnose", run_dir, "--rules", hostile_folder)
    assert code == 2 and "pipe.yaml: error[rule-file]: refused" in err, err
    shutil.rmtree(hostile_folder)  # nothing was left open or half-read: the folder goes
