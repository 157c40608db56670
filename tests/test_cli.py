"""The command line as a user runs it (in-process through advisor.cli.main, and one real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.cli import main
from tests.core.runs import train_regression

RULES = Path(__file__).parent / "rulebase" / "data"
DIVERGE = str(RULES / "diverge.yaml")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return {"diverging": train_regression(root / "diverging", lr=1.5),
            "healthy": train_regression(root / "healthy", lr=0.05)}


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_diagnose_text_names_the_cause_with_evidence(runs, capsys):
    code, out, _ = _run(capsys, "diagnose", runs["diverging"], "--rules", DIVERGE, "--only-rules")
    assert code == 0
    assert "Most likely cause: Learning rate too high (lr_too_high)" in out
    assert "with learning_rate=1.5 (above 0.01)" in out
    assert "metrics.jsonl" in out and "hparams.yaml" in out  # evidence cites its sources
    assert "[ran] Loss curve: metrics.jsonl" in out
    assert "[skipped] Network-wide comparison" in out


def test_json_report_follows_the_contract(runs, capsys):
    code, out, _ = _run(capsys, "diagnose", runs["diverging"], "--rules", DIVERGE, "--only-rules", "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert set(data) >= {"advisor_version", "run", "baseline", "causes", "findings", "checks", "inputs"}
    cause = data["causes"][0]  # then the differential of a NaN loss, sharing what the user's rule leaves
    assert cause["id"] == "lr_too_high" and cause["confidence"] == 0.8 and cause["user_rules_only"]
    assert sum(c["confidence"] for c in data["causes"]) <= 1.0 + 1e-6
    assert cause["evidence"][0]["rule"] == "test-loss-diverges-at-large-lr"
    assert {c["stage"] for c in data["checks"]} >= {"loss_curve", "network_wide_comparison", "random_errors"}
    assert {"path": "metrics.jsonl", "kind": "metrics", "status": "used"}.items() <= data["inputs"][-1].items() or \
        any(i["path"] == "metrics.jsonl" and i["status"] == "used" for i in data["inputs"])


def test_healthy_run_has_no_cause(runs, capsys):
    code, out, _ = _run(capsys, "diagnose", runs["healthy"], "--rules", DIVERGE, "--only-rules", "-f", "json")
    assert json.loads(out)["causes"] == []


def test_fail_on_gates(runs, capsys):
    assert _run(capsys, "diagnose", runs["diverging"], "--rules", DIVERGE, "--only-rules", "--fail-on", "high")[0] == 1
    assert _run(capsys, "diagnose", runs["healthy"], "--rules", DIVERGE, "--only-rules", "--fail-on", "low")[0] == 0
    assert _run(capsys, "diagnose", runs["diverging"], "--rules", DIVERGE, "--only-rules", "--fail-on", "high",
                "--min-confidence", "1")[0] == 0


def test_param_override(runs, capsys):
    _, out, _ = _run(capsys, "diagnose", runs["diverging"], "--rules", DIVERGE, "--only-rules",
                     "--param", "test-loss-diverges-at-large-lr.max_safe_lr=5", "-f", "json")
    report = json.loads(out)  # the rule no longer fires: what is left is the symptom's differential, no evidence
    assert report["summary"]["verdict"] == "differential"
    assert all(not c["evidence"] for c in report["causes"])


def test_threshold_override_reaches_the_extractor(runs, capsys):
    code, out, err = _run(capsys, "diagnose", runs["diverging"], "--threshold", "loss_curve.spike_zz=8", "-f", "json")
    assert code == 0 and "threshold 'loss_curve.spike_zz' is not read by any extractor" in err
    _, default, _ = _run(capsys, "facts", runs["healthy"])
    code, strict, _ = _run(capsys, "facts", runs["healthy"], "--threshold", "loss_curve.trend_t=1000")
    assert code == 0 and "is_still_falling=True" in default and "is_still_falling=False" in strict


def test_html_and_md_outputs(runs, tmp_path, capsys):
    html = tmp_path / "report.html"
    code, _, err = _run(capsys, "diagnose", runs["diverging"], "--rules", DIVERGE, "--only-rules", "-o", html)
    text = html.read_text()
    assert code == 0 and "wrote" in err
    assert "<svg" in text and "Learning rate too high" in text and 'id="checklist"' in text
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # self-contained
    code, out, _ = _run(capsys, "diagnose", runs["diverging"], "--rules", DIVERGE, "--only-rules", "-f", "md")
    _, data, _ = _run(capsys, "diagnose", runs["diverging"], "--rules", DIVERGE, "--only-rules", "-f", "json")
    top = json.loads(data)["causes"][0]
    shown = f"{top['confidence']:.0%}"  # the rule's 0.8 weighed against the diverging loss's prior
    assert top["id"] == "lr_too_high" and top["confidence"] >= 0.5
    assert f"| 1 | Learning rate too high (`lr_too_high`) | {shown} | high |" in out


def test_hostile_text_is_escaped_in_html(runs, tmp_path, capsys):
    rule = Path(DIVERGE).read_text().replace("title: Training loss diverges while the learning rate is large",
                                             "title: <script>alert(1)</script>")
    rule = rule.replace("cause: lr_too_high", "cause: custom_xss")
    (tmp_path / "xss.yaml").write_text(rule)
    out = tmp_path / "r.html"
    _run(capsys, "diagnose", runs["diverging"], "--rules", tmp_path / "xss.yaml", "--only-rules", "-o", out)
    text = out.read_text()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_usage_errors_exit_2_with_one_line(tmp_path, capsys):
    code, out, err = _run(capsys, "diagnose", tmp_path / "nope")
    assert code == 2 and err.strip().count("\n") == 0 and "is not a folder" in err
    with pytest.raises(SystemExit) as exc:
        main(["diagnose"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["diagnose", str(tmp_path), "--fail-on", "extreme"])
    assert exc.value.code == 2


def test_empty_run_folder(tmp_path, capsys):
    code, out, _ = _run(capsys, "diagnose", tmp_path, "-f", "json")
    data = json.loads(out)
    assert code == 0 and data["summary"]["verdict"] == "no_input"
    assert all(c["status"] == "skipped" for c in data["checks"])


def test_bad_rule_file_is_reported_and_the_rest_goes_on(runs, tmp_path, capsys):
    (tmp_path / "broken.yaml").write_text("id: broken\ncause: lr_too_high\nwhen: {all: [{nope: {}}]}\n")
    code, out, err = _run(capsys, "diagnose", runs["diverging"], "--rules", tmp_path / "broken.yaml",
                          "--rules", DIVERGE, "--only-rules")
    assert code == 2  # the report is written, but a gate must not pass with a broken rule
    assert "broken.yaml:3:" in err and "unknown fact kind 'nope'" in err
    assert "lr_too_high" in out


def test_rules_subcommands(tmp_path, capsys):
    code, out, _ = _run(capsys, "rules", "validate", RULES)
    assert code == 0 and "4 rule(s) valid, 0 error(s)" in out
    code, out, _ = _run(capsys, "rules", "test", RULES)
    assert code == 0 and "8 passed, 0 failed" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text(Path(DIVERGE).read_text().replace("value: 0.0001", "value: 0.1"))
    code, out, _ = _run(capsys, "rules", "test", bad)
    assert code == 1 and "FAIL test-loss-diverges-at-large-lr::quiet::diverges at a small lr" in out
    code, out, _ = _run(capsys, "rules", "list", "--rules", RULES, "--only-rules")
    assert code == 0 and "test-finding-nonfinite" in out and "finding" in out
    code, out, _ = _run(capsys, "rules", "explain", "test-loss-diverges-at-large-lr", "--rules", RULES, "--only-rules")
    assert "WHY" in out and "Steps that are too large" in out
    code, _, err = _run(capsys, "rules", "show", "test-loss-diverges-at-large-l", "--rules", RULES, "--only-rules")
    assert code == 2 and "did you mean" in err
    code, out, _ = _run(capsys, "rules", "schema")
    schema = json.loads(out)
    assert "loss_curve" in json.dumps(schema) and schema["required"][0] == "id"


def test_facts_command(runs, capsys):
    code, out, _ = _run(capsys, "facts", runs["diverging"])
    assert code == 0 and "hyperparameter: name=learning_rate, value=1.5" in out and "loss_curve:" in out
    code, out, _ = _run(capsys, "facts", "--kinds")
    assert "loss_curve:" in out and "first_nonfinite_step:" in out


def test_python_api_matches_cli(runs):
    import advisor

    d = advisor.diagnose(runs["diverging"], rules=[DIVERGE], only_rules=True)
    assert isinstance(d, advisor.Diagnosis)
    assert [c.id for c in d.found()] == ["lr_too_high"]
    again = advisor.diagnose(runs["diverging"], rules=[DIVERGE], only_rules=True)
    assert again.model_dump() == d.model_dump()  # same diagnosis twice: identical


def test_run_folder_is_never_written(runs):
    import advisor

    folder = runs["diverging"]
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    advisor.diagnose(folder)
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*")} == before


def test_console_script_help_is_fast_and_works():
    out = subprocess.run([sys.executable, "-m", "advisor", "--help"], capture_output=True, text=True, check=True)
    assert "diagnose" in out.stdout and "rules" in out.stdout


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "lr_too_high"


@pytest.mark.parametrize("extra,message", [
    (["--baseline", str(EXAMPLE)], "--baseline is the run folder itself"),
    (["-o", str(EXAMPLE / "report.txt")], "is inside the run folder"),
    (["-o", "/nonexistent-folder/r.html"], "does not exist"),
    (["-o", "report.pdf"], "name it .html, .json, .md or .txt"),
    (["--min-confidence", "1.5"], "between 0 and 1"),
    (["--rules", "no-such-rules.yaml"], "no such rule file or folder"),
    (["--only-rules"], "--only-rules without --rules"),
])
def test_diagnose_usage_errors_exit_2_and_write_nothing(capsys, extra, message):
    before = sorted((p.name, p.stat().st_mtime_ns) for p in EXAMPLE.iterdir())
    code, _, err = _run(capsys, "diagnose", EXAMPLE, *extra)
    assert code == 2 and message in err, err
    assert sorted((p.name, p.stat().st_mtime_ns) for p in EXAMPLE.iterdir()) == before


def test_broken_user_rules_stop_diagnose_and_validate_checks_builtin_ids(tmp_path, capsys):
    text = (Path(__file__).resolve().parents[1] / "rules" / "training_dynamics" / "update-ratio-large.yaml").read_text()
    (tmp_path / "bad.yaml").write_text(text.replace("| pct }}", "| pctt }}").replace("id: update-ratio-large", "id: mine"))
    (tmp_path / "dup.yaml").write_text(text.replace("id: update-ratio-large", "id: loss-diverges"))
    code, out, err = _run(capsys, "diagnose", EXAMPLE, "--rules", tmp_path / "bad.yaml")
    assert code == 2 and "No filter named 'pctt'" in err and "did you mean 'pct'" in err
    assert "lr_too_high" in out  # the rest of the diagnosis went on
    code, out, err = _run(capsys, "rules", "validate", tmp_path / "dup.yaml")
    assert code == 1 and "already used by a built-in rule" in err
    assert _run(capsys, "rules", "validate", tmp_path / "dup.yaml", "--only-rules")[0] == 0


def test_param_overrides_no_rule_reads_are_warned_about(capsys):
    code, _, err = _run(capsys, "diagnose", EXAMPLE, "--param", "loss-divergs.x=1", "--param", "max_safe_lr=abc")
    assert code == 0
    assert "no rule 'loss-divergs' (did you mean 'loss-diverges'?)" in err
    assert "--param 'max_safe_lr' needs a number (default 0.1), got 'abc'; ignored" in err


def test_facts_json_is_strict_json_even_with_nonfinite_values(tmp_path, capsys):
    losses = [1.0] * 5 + [1e308, float("nan"), -3.5] + [0.5] * 92
    (tmp_path / "train.log").write_text("".join(f"step {i} loss {v}\n" for i, v in enumerate(losses)))
    code, out, _ = _run(capsys, "facts", tmp_path, "-f", "json")
    assert code == 0
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert any(f["kind"] == "loss_curve" for f in data["facts"])


def test_a_folder_holding_two_runs_is_warned_about(capsys):
    both = Path(__file__).resolve().parents[1] / "examples" / "port_mismatch"
    code, _, err = _run(capsys, "diagnose", both)
    assert code == 0 and "seems to hold several runs (baseline/, run/)" in err
    code, _, err = _run(capsys, "diagnose", both / "run", "--baseline", both / "baseline")
    assert "several runs" not in err


def test_findings_of_chained_rules_show_in_text_and_markdown(tmp_path, capsys):
    rule = (Path(__file__).parent / "rulebase" / "data" / "chain.yaml").read_text()
    (tmp_path / "chain.yaml").write_text(rule)
    run = tmp_path / "run"
    run.mkdir()
    losses = [2.0 - 0.01 * i for i in range(60)] + [float("nan")] * 5
    (run / "train.log").write_text("".join(f"step {i} loss {v}\n" for i, v in enumerate(losses)))
    code, out, _ = _run(capsys, "diagnose", run, "--rules", tmp_path / "chain.yaml")
    assert "Findings (intermediate conclusions" in out and "loss_nonfinite:" in out
    _run(capsys, "diagnose", run, "--rules", tmp_path / "chain.yaml", "-o", tmp_path / "r.md")
    assert "### Findings" in (tmp_path / "r.md").read_text()


def test_a_skipped_stage_names_its_unreadable_input(tmp_path, capsys):
    (tmp_path / "train.log").write_bytes(b"\x00\x01binary\x00" * 200)
    code, out, _ = _run(capsys, "diagnose", tmp_path)
    line = next(x for x in out.splitlines() if "] Loss curve" in x)
    assert "[skipped]" in line and "fix or re-export train.log (binary data" in line


def test_files_no_extractor_reads_are_listed_as_ignored(tmp_path):
    import shutil

    from advisor.diagnosis import diagnose
    from advisor.report_assembly import MAX_UNREAD_LISTED

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "gelu_port" / "run", run)
    (run / "notes.docx").write_text("meeting notes")
    report = diagnose(run)
    other = [i for i in report.inputs if i.kind == "other"]
    assert [i.path for i in other] == ["notes.docx"] and other[0].status == "ignored"  # dump/*.npy are covered
    for k in range(MAX_UNREAD_LISTED + 5):
        (run / f"img_{k:02d}.png").write_bytes(b"\x89PNG")
    other = [i for i in diagnose(run).inputs if i.kind == "other"]
    assert len(other) == MAX_UNREAD_LISTED + 1 and other[-1].path == "(and 6 more files)"


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_several_runs_are_summed_up_in_one_table(capsys, tmp_path):
    """A sweep triaged at once (issue 28 item 4): one line per run with what it shows, its top cause and that
    cause's confidence; a run that cannot be read is an error line and the others go on (exit 2)."""
    runs = [EXAMPLES / "lr_too_high", EXAMPLES / "healthy", tmp_path / "missing"]
    code, out, _ = _run(capsys, "diagnose", *runs)
    lines = out.splitlines()
    assert code == 2 and len(lines) == 4 and lines[0].split()[:2] == ["run", "confidence"]
    assert "lr_too_high" in lines[1] and "NaN or infinite at step 101" in lines[1]
    assert lines[2].rstrip().endswith("trains well")
    assert "error: RUN" in lines[3] and "missing" in lines[3]
    code, out, _ = _run(capsys, "diagnose", *runs[:2], "-f", "json")
    rows = json.loads(out)["runs"]
    assert code == 0 and [(r["run"].rsplit("/", 1)[-1], r["top_cause"]) for r in rows] == [
        ("lr_too_high", "lr_too_high"), ("healthy", None)]
    assert rows[0]["confidence"] >= 0.5 and rows[0]["verdict"] == "cause_found"
    code, _, _ = _run(capsys, "diagnose", *runs[:2], "--fail-on", "high")
    assert code == 1  # one run of the sweep has a high-severity cause
    code, out, _ = _run(capsys, "diagnose", *runs[:2], "-o", str(tmp_path / "sweep.md"))
    assert code == 0 and (tmp_path / "sweep.md").read_text().startswith("| run | shows | top cause | confidence |")


def test_several_runs_refuse_html_and_standard_input(capsys):
    code, _, err = _run(capsys, "diagnose", EXAMPLES / "lr_too_high", EXAMPLES / "healthy", "-f", "html")
    assert code == 2 and "table" in err
    code, _, err = _run(capsys, "diagnose", EXAMPLES / "lr_too_high", "-")
    assert code == 2 and "standard input" in err
