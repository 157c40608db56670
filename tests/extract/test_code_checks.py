"""The training script read without running it (issue #46): each check on a script written as people write them,
with a twin that trains well; settings from the code; hostile scripts; nothing executed; the symptom first.

The scripts are in tests/extract/data/code (torch_healthy.py and keras_healthy.py by hand, the others made from
them by tests/extract/fixtures/make/code_scripts.py); the runs in tests/extract/data/code_runs are those scripts
run with torch 2.13 and Keras 3 (their real train.log).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract.code.checks import CHECKS, DETECTORS
from advisor.extract.code.index import index_of
from advisor.extract.code.settings import script_settings
from advisor.facts.code import CodeCheckId
from advisor.read.scripts import parse_script, read_script
from advisor.report.render import render

DATA = Path(__file__).parent / "data"
CODE = DATA / "code"
RUNS = DATA / "code_runs"


def checks_of(name: str) -> list[tuple[str, int]]:
    script = read_script(CODE / name, name)
    assert script.problem is None, script.problem
    index = index_of(script)
    assert index is not None
    return sorted({(h.check, h.line) for detect in DETECTORS for h in detect(index)}, key=lambda x: (x[1], x[0]))


FAULTS = {
    "torch_zero_grad_missing.py": {("zero_grad_missing", 58)},
    "torch_zero_grad_misplaced.py": {("zero_grad_between_backward_and_step", 58)},
    "torch_eval_mode.py": {("eval_mode_never_undone", 65)},
    "torch_softmax_ce.py": {("activation_before_logits_loss", 41)},
    "torch_softmax_nll.py": {("probabilities_into_nll_loss", 41)},
    "torch_int_div_acc.py": {("integer_division_in_metric", 74)},
    "torch_unshuffled_sorted.py": {("training_data_not_shuffled", 49)},
    "torch_loss_avg_dataset.py": {("loss_average_over_wrong_count", 61)},
    "torch_float_labels.py": {("class_loss_with_float_labels", 57)},
    "torch_mse_class_ids.py": {("regression_loss_for_classes", 57)},
    "torch_argmax_loss.py": {
        ("regression_loss_for_classes", 57),
        ("loss_input_not_differentiable", 57),
        ("loss_input_not_differentiable", 71),
    },
    "torch_accumulation_undivided.py": {("grad_accumulation_loss_not_divided", 58)},
    "torch_scaler_bypassed.py": {("grad_scaler_step_bypassed", 60)},
    "torch_no_grad_step.py": {("no_grad_around_training", 59)},
    "keras_logits_into_probability_loss.py": {("logits_into_probability_loss", 35)},
    "keras_double_softmax.py": {("activation_before_logits_loss", 35)},
    "keras_validation_split_sorted.py": {("validation_split_of_unshuffled_data", 41)},
    "lightning_manual_no_zero_grad.py": {("zero_grad_missing", 19)},
}
#: scripts that train well, each the near miss of a fault above
HEALTHY = [
    "torch_healthy.py",
    "torch_log_softmax_nll.py",  # log_softmax + NLLLoss is right
    "torch_accumulation_divided.py",
    "torch_scaler_used.py",
    "keras_healthy.py",
    "keras_logits_with_from_logits.py",
    "keras_validation_split_shuffled.py",
    "lightning_healthy.py",  # Lightning runs the loop and resets the gradients itself
    "hf_trainer_healthy.py",
]


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_each_fault_is_found_at_its_line(name):
    assert set(checks_of(name)) == FAULTS[name]


@pytest.mark.parametrize("name", HEALTHY)
def test_scripts_that_train_well_give_no_finding(name):
    assert checks_of(name) == []


def test_every_check_is_tested_on_a_real_script():
    tested = {check for found in FAULTS.values() for check, _ in found}
    assert tested == {c.id for c in CHECKS} == set(CodeCheckId.__args__)  # type: ignore[attr-defined]


def test_every_check_has_a_warning_rule_and_a_symptom_rule():
    rules = [p.read_text() for p in (Path(__file__).parents[2] / "rules").rglob("code-*.yaml")]
    for check in CodeCheckId.__args__:  # type: ignore[attr-defined]
        using = [r for r in rules if f"check: {check}}}" in r]
        assert len(using) >= 2, check
        assert any("- symptom:" in r for r in using), check


# -- settings from the code --------------------------------------------------------------------------------
def settings_of(name: str) -> dict:
    found = script_settings(index_of(read_script(CODE / name, name)))  # type: ignore[arg-type]
    assert found is not None
    return {k: (v, found.lines[k]) for k, v in found.values.items()}


def test_torch_settings_from_argparse_defaults_and_the_optimizer_call():
    got = settings_of("torch_healthy.py")
    assert got["lr"] == (0.01, 11)  # argparse default, read at its line
    assert got["epochs"] == (15, 12)
    assert got["batch_size"] == (64, 13)
    assert got["optimizer"] == ("sgd", 46)
    assert got["momentum"] == (0.9, 46)
    assert got["loss"] == ("CrossEntropyLoss", 45)
    assert got["num_classes"] == (4, 37)  # the last nn.Linear's out_features, under a loss of class ids


def test_keras_settings_from_compile_fit_and_constants():
    got = settings_of("keras_double_softmax.py")
    assert got["epochs"][0] == 15 and got["batch_size"][0] == 64  # upper-case constants passed to fit
    assert got["learning_rate"][0] == 0.001 and got["optimizer"][0] == "adam"
    assert got["loss"][0] == "SparseCategoricalCrossentropy" and got["from_logits"][0] is True
    assert got["num_classes"][0] == 4 and got["framework"][0] == "keras"


def test_lightning_and_trainer_settings():
    assert settings_of("lightning_healthy.py")["lr"][0] == 0.001  # self.hparams.lr -> __init__'s default
    assert settings_of("lightning_healthy.py")["max_epochs"][0] == 10
    hf = settings_of("hf_trainer_healthy.py")
    assert hf["learning_rate"][0] == 5e-5 and hf["num_train_epochs"][0] == 3 and hf["num_labels"][0] == 3


def test_a_printed_namespace_wins_over_the_code(tmp_path):
    """The command line changes what argparse defaults say; the log's Namespace print says what ran."""
    (tmp_path / "train.py").write_bytes((CODE / "torch_healthy.py").read_bytes())
    log = (RUNS / "torch_healthy" / "train.log").read_text()
    (tmp_path / "train.log").write_text("Namespace(lr=0.1, epochs=15, batch_size=64)\n" + log)
    report = diagnose(tmp_path)
    facts = {f["name"]: f for f in _facts(tmp_path) if f["kind"] == "hyperparameter"}
    assert facts["learning_rate"]["value"] == 0.1
    assert facts["momentum"]["value"] == 0.9  # only in the code
    assert report.causes == [] or report.causes[0].confidence < 0.5


def _facts(folder: Path) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "facts", str(folder), "-f", "json"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["facts"]


# -- the symptom first ----------------------------------------------------------------------------------
#: run -> the cause the fault is (first, at 50 % or more, beside the symptom the run shows)
SHOWN = {
    "torch_zero_grad_missing": "optimizer_error",  # the loss climbs 180x
    "torch_zero_grad_misplaced": "optimizer_error",  # stays at chance
    "torch_softmax_ce": "loss_function_error",  # levels off at the double-softmax floor
    "torch_softmax_nll": "loss_function_error",  # a negative NLL
    "torch_int_div_acc": "metric_misuse",  # val_acc exactly 0 while the loss falls
    "torch_unshuffled_sorted": "data_not_shuffled",  # loss at chance
    "torch_scaler_bypassed": "loss_scale_bad",  # NaN from the first epoch
    "keras_logits_into_probability_loss": "loss_function_error",  # accuracy falls below chance
    "keras_double_softmax": "loss_function_error",
}
#: runs that train well although the code holds the fault (or none): a warning at most
QUIET = [
    "torch_healthy",
    "keras_healthy",
    "torch_eval_mode",
    "torch_accumulation_undivided",
    "torch_loss_avg_dataset",
    "keras_validation_split_sorted",
]


@pytest.mark.parametrize("run", sorted(SHOWN))
def test_the_code_finding_names_the_cause_of_the_symptom(run):
    report = diagnose(RUNS / run)
    assert report.summary.symptoms, "the run shows a symptom"
    assert report.causes[0].id == SHOWN[run]
    assert report.causes[0].confidence >= 0.5


@pytest.mark.parametrize("run", QUIET)
def test_without_a_symptom_a_code_finding_is_a_warning(run):
    report = diagnose(RUNS / run)
    assert not report.summary.symptoms
    assert all(c.confidence < 0.5 for c in report.causes)


def test_the_reports_show_the_code_line(tmp_path):
    report = diagnose(RUNS / "torch_zero_grad_missing")
    text = render(report, "text")
    assert "          58 | optimizer.step()" in text
    html = render(report, "html")
    assert '<span class="ln">58</span> optimizer.step()' in html
    md = render(report, "md")
    assert "line 58: optimizer.step()" in md


def test_a_code_line_is_escaped(tmp_path):
    (tmp_path / "train.py").write_text(
        "correct, total = 3, 4\nacc = correct // total  # <script>alert(1)</script>\nprint(acc)\n"
    )
    report = diagnose(tmp_path)
    smell = next(c for c in report.causes + report.smells if c.id == "metric_misuse")
    assert smell.evidence[0].code_line == 2
    html = render(report, "html")
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


# -- what the reader refuses, and what it never does ------------------------------------------------------
@pytest.mark.parametrize(
    "data, why",
    [
        (b"def f(:\n    pass\n", "not valid Python at line 1"),
        (b"# -*- coding: latin-1 -*-\nx = '\xe9'\n", None),  # declared latin-1: fine
        (b"x = '\xff\xfe'\n", "not UTF-8 text, and no encoding declared"),
        (b"# coding: utf-8\nx = '\xff'\n", "not utf-8 text at byte 21"),
        (b"x = 1\n" * 50_000, "50000 lines, more than the 20000 read"),
        (b"x = " + b"(" * 1000 + b"1" + b")" * 1000 + b"\n", "too many nested parentheses"),
        (b"x = 1\x00\n", "null bytes"),
    ],
    ids=["syntax-error", "latin-1", "not-utf-8", "declared-utf-8", "50000-lines", "1000-parentheses", "nul-byte"],
)
def test_scripts_the_parser_refuses_are_a_note(data, why):
    got = parse_script(data, "train.py")
    if why is None:
        assert got.problem is None and got.tree is not None
    else:
        assert got.tree is None and why in (got.problem or ""), got.problem


def test_a_script_nested_a_thousand_blocks_deep(tmp_path):
    body = "".join(" " * i + "if x:\n" for i in range(1000)) + " " * 1000 + "pass\n"
    got = parse_script(body.encode(), "deep.py")
    assert got.tree is None and "train" not in (got.problem or "") and got.problem


def test_an_unreadable_script_leaves_the_rest_of_the_diagnosis(tmp_path):
    (tmp_path / "train.log").write_bytes((RUNS / "torch_zero_grad_missing" / "train.log").read_bytes())
    (tmp_path / "train.py").write_bytes(b"for x in y:\nprint(1\n")
    report = diagnose(tmp_path)
    entry = next(i for i in report.inputs if i.path == "train.py")
    assert entry.status == "unreadable" and "not valid Python" in (entry.why or "")
    assert report.summary.symptoms  # the log's runaway loss is still read


def test_nothing_in_a_script_runs(tmp_path):
    marker = tmp_path / "marker"
    run = tmp_path / "run"
    run.mkdir()
    evil = f"import os\nopen({str(marker)!r}, 'w').write('ran')\nos.system('touch {marker}')\n"
    (run / "train.py").write_text(evil)
    (run / "helpers.py").write_text(evil)
    outside = tmp_path / "elsewhere.py"
    outside.write_text(evil)
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "diagnose", str(run), "--code", str(outside), "-f", "json"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert not marker.exists()
    assert {i["path"] for i in json.loads(out.stdout)["inputs"] if i["kind"] == "code"} >= {"train.py", "helpers.py"}


def test_code_names_a_script_kept_elsewhere(tmp_path):
    (tmp_path / "train.log").write_bytes((RUNS / "torch_zero_grad_missing" / "train.log").read_bytes())
    report = diagnose(tmp_path, code=[CODE / "torch_zero_grad_missing.py"])
    assert report.causes[0].id == "optimizer_error" and report.causes[0].confidence >= 0.5
    with pytest.raises(Exception, match="--code .*no such file"):
        diagnose(tmp_path, code=[tmp_path / "missing.py"])


def test_facts_lists_the_code_facts():
    kinds = {f["kind"] for f in _facts(RUNS / "torch_zero_grad_missing")}
    assert {"code_finding", "code_summary"} <= kinds


def test_a_folder_of_many_scripts_is_read_within_a_budget(tmp_path, monkeypatch):
    from advisor.read import scripts

    monkeypatch.setattr(scripts, "MAX_TOTAL_SCRIPT_BYTES", 3000)
    for name in ("train.py", "model.py", "utils.py"):
        (tmp_path / name).write_text("x = 1\n" * 250)  # 1500 bytes each
    report = diagnose(tmp_path)
    code = {i.path: i for i in report.inputs if i.kind == "code"}
    assert code["train.py"].status == "used" and code["model.py"].status == "used"
    assert code["utils.py"].status == "unreadable" and "3000-byte read" in (code["utils.py"].why or "")


def test_mixed_precision_and_the_scheduler_from_the_code(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "model = torch.nn.Linear(8, 2)\n"
        "opt = torch.optim.AdamW(model.parameters(), lr=3e-4)\n"
        "sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)\n"
        "scaler = torch.cuda.amp.GradScaler()\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    out = model(torch.randn(4, 8))\n"
    )
    got = script_settings(index_of(read_script(tmp_path / "train.py", "train.py")))  # type: ignore[arg-type]
    assert got is not None
    assert got.values["precision"] == "bf16" and got.lines["precision"] == 6
    assert got.values["loss_scale"] == "dynamic" and got.values["lr_scheduler"] == "CosineAnnealingLR"
    facts = {f["name"]: f["value"] for f in _facts(tmp_path) if f["kind"] == "hyperparameter"}
    assert facts["precision"] == "bf16" and facts["lr_scheduler"] == "cosine" and facts["learning_rate"] == 3e-4
