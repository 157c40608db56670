"""Hostile input that used to end in a traceback or 'internal error': now a message naming the
file and the problem, and the rest of the diagnosis goes on (issue #17, first class)."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from tests.hostile.conftest import diagnose_json, inputs_by_path, npy_dump, ran

BIG = "9" * 5000


def _no_internal(report):
    bad = [i for i in report["inputs"] if i["kind"] == "internal"]
    assert not bad, bad


def test_symlink_loop_in_run_is_listed_and_the_rest_is_read(run_dir, cli):
    os.symlink("b.log", run_dir / "a.log")
    os.symlink("a.log", run_dir / "b.log")
    report = diagnose_json(cli, run_dir)
    _no_internal(report)
    rec = inputs_by_path(report)["a.log"]
    assert rec["status"] != "used" and "loop" in rec["why"]
    assert "loss_curve" in ran(report) and "hyperparameters" in ran(report)


def test_symlink_loop_in_baseline(run_dir, tmp_path, cli):
    base = tmp_path / "base"
    shutil.copytree(run_dir, base)
    os.symlink("hparams.yaml.x", base / "hparams.yaml.x")
    report = diagnose_json(cli, run_dir, "--baseline", base)
    _no_internal(report)
    assert any("loop" in (i["why"] or "") and i["side"] == "baseline" for i in report["inputs"])


def test_symlink_loop_and_nul_name_in_a_dump_manifest(tmp_path, cli):
    run, base = npy_dump(tmp_path / "r" / "dump"), npy_dump(tmp_path / "b" / "dump")
    os.symlink("loop.npy", run / "loop.npy")
    manifest = [{"name": "a.output.0", "file": "0000_a.output.0.npy"}, {"name": "b.output.0", "file": "0001_b.output.0.npy"},
                {"name": "c.output.0", "file": "loop.npy"}, {"name": "d.output.0", "file": "x\u0000.npy"}]
    (run / "manifest.json").write_text(json.dumps(manifest))
    code, out, err = cli("compare", run, base)
    assert code in (0, 1), err
    assert "loop" in out and "NUL" in out


def test_nul_in_dump_json_data_name(tmp_path, cli):
    def dump(root):
        root.mkdir(parents=True)
        (root / "dump_tensor_data").mkdir()
        np.save(root / "dump_tensor_data" / "t.npy", np.ones(4, np.float32))
        item = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "data_name": "t.npy"}
        data = {"Functional.relu.0.forward": {"input_args": [item], "output": [dict(item, data_name="t\u0000.npy")]}}
        (root / "dump.json").write_text(json.dumps({"task": "tensor", "data": data}))
        return root
    code, out, err = cli("compare", dump(tmp_path / "r"), dump(tmp_path / "b"))
    assert code in (0, 1), err
    assert "NUL" in out


@pytest.mark.parametrize("name,text", [("hparams.yaml", f"lr: 0.05\nbatch_size: 32\nhuge: {BIG}\n"),
                                       ("hparams.json", f'{{"lr": 0.05, "batch_size": 32, "huge": {BIG}}}'),
                                       ("hparams.yaml", f"lr: 0.05\nbatch_size: 32\nhuge: {'9' * 400}\n")],
                         ids=["yaml-5000-digits", "json-5000-digits", "yaml-400-digits"])
def test_huge_integer_in_hparams_is_a_note_and_the_others_are_read(run_dir, cli, name, text):
    (run_dir / "hparams.yaml").unlink()
    (run_dir / name).write_text(text)
    report = diagnose_json(cli, run_dir)
    _no_internal(report)
    assert inputs_by_path(report)[name]["status"] == "used"
    assert "hyperparameters" in ran(report) and "loss_curve" in ran(report)
    _code, out, _ = cli("facts", run_dir, "-f", "json")
    hp = {f["name"]: f["value"] for f in json.loads(out)["facts"] if f["kind"] == "hyperparameter" and f["side"] == "run"}
    assert hp.get("learning_rate", hp.get("lr")) == 0.05


def test_huge_numbers_in_metrics_jsonl_do_not_stop_the_curve(run_dir, cli):
    rows = [json.dumps({"step": s, "loss": 2.0 / s}) for s in range(1, 40)]
    rows.insert(5, '{"step": 6, "loss": ' + BIG + "}")
    rows.insert(9, '{"step": 1' + "0" * 400 + ', "loss": 1e999}')
    (run_dir / "metrics.jsonl").write_text("\n".join(rows) + "\n")
    report = diagnose_json(cli, run_dir)
    _no_internal(report)
    assert inputs_by_path(report)["metrics.jsonl"]["status"] == "used"


def test_numbers_of_thousands_of_digits_in_a_text_log_are_read_as_inf(tmp_path):
    # found by the fuzzer: a Keras progress counter of 5000 digits made int() raise and lost the whole log
    from advisor.read.logs import read_file

    lines = [f"step {s} loss {2.0 / s:.4f}" for s in range(1, 30)]
    lines.insert(3, "0/" + BIG + " [====] - 1s - loss: 0 - val_loss: " + BIG)
    lines.insert(7, "step 8 loss " + BIG)
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    read = read_file(log, "train.log")
    assert read.problem is None
    assert read.series["train/loss"].buf.count >= 29


@pytest.mark.parametrize("name", ["metrics.jsonl", "tensors.jsonl"])
def test_deeply_nested_jsonl_line_is_a_bad_line(run_dir, cli, name):
    good = (run_dir / "tensors.jsonl").read_text().splitlines() if name == "tensors.jsonl" else \
        [json.dumps({"step": s, "loss": 2.0 / s}) for s in range(1, 40)]
    (run_dir / name).write_text("\n".join(good[:3] + ["[" * 100_000 + "]" * 100_000] + good[3:]) + "\n")
    report = diagnose_json(cli, run_dir)
    _no_internal(report)
    assert "loss_curve" in ran(report) and "hyperparameters" in ran(report)


@pytest.mark.parametrize("name", ["trainer_state.json", "hparams.json", "config.json"])
def test_deeply_nested_json_file_is_unreadable_not_fatal(run_dir, cli, name):
    (run_dir / name).write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    report = diagnose_json(cli, run_dir)
    _no_internal(report)
    rec = inputs_by_path(report).get(name)
    assert rec is None or rec["status"] != "used"
    assert "loss_curve" in ran(report)


def test_deeply_nested_manifest(tmp_path, cli):
    run, base = npy_dump(tmp_path / "r" / "dump"), npy_dump(tmp_path / "b" / "dump")
    (run / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    code, out, err = cli("compare", run, base)
    assert code in (0, 1), err
    assert "manifest.json" in out and "nested" in out


def test_huge_integer_in_dump_json(tmp_path, cli):
    def dump(root, big):
        root.mkdir(parents=True)
        item = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.0, "Min": 0.0,
                "Mean": 0.5, "Norm": 1.0}
        text = json.dumps({"task": "statistics", "data": {"Functional.relu.0.forward": {"input_args": [item],
                                                                                         "output": [item]}}})
        (root / "dump.json").write_text(text.replace('"Max": 1.0', f'"Max": {big}'))
        return root
    code, _out, err = cli("compare", dump(tmp_path / "r", BIG), dump(tmp_path / "b", "1" + "0" * 400))
    assert code in (0, 1), err


def test_non_utf8_and_escape_file_names_in_every_format(run_dir, cli):
    name = os.fsdecode(b"n\xff\x1b]0;TITLE\x07\x1b[2J.txt")
    (run_dir / name).write_text("x")
    for fmt in ("text", "json", "md", "html"):
        code, out, err = cli("diagnose", run_dir, "-f", fmt)
        assert code == 0, (fmt, err)
        assert "\x1b" not in out and "\x07" not in out, fmt
        if fmt == "json":
            json.loads(out)
    code, out, err = cli("facts", run_dir)
    assert "\x1b" not in out + err


@pytest.mark.parametrize("value", ["NaN", "1e999", "-Infinity", "abc"])
def test_non_finite_param_is_a_warning_not_a_crash(run_dir, cli, value):
    from advisor.diagnosis import load_rule_set

    rule = next(r for r in load_rule_set()[0] if r.params and any(isinstance(v, float) for v in r.params.values()))
    param = next(k for k, v in rule.params.items() if isinstance(v, float))
    code, _out, err = cli("diagnose", run_dir, "--param", f"{rule.id}.{param}={value}")
    assert code == 0
    assert "--param" in err and "ignored" in err


@pytest.mark.parametrize("value", ["NaN", "1e999", "-Infinity", "abc", "[1]"])
def test_non_numeric_threshold_is_a_warning(run_dir, cli, value):
    code, _out, err = cli("diagnose", run_dir, "--threshold", f"loss_curve.spike_z={value}")
    assert code == 0
    assert "loss_curve.spike_z" in err and "ignored" in err


def test_symlink_loop_in_msprobe_dump_tensor_data(tmp_path, cli):
    def dump(root):
        (root / "dump_tensor_data").mkdir(parents=True)
        np.save(root / "dump_tensor_data" / "in.npy", np.ones(4, np.float32))
        os.symlink("loop.npy", root / "dump_tensor_data" / "loop.npy")
        item = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4]}
        data = {"Functional.relu.0.forward": {"input_args": [dict(item, data_name="in.npy")],
                                              "output": [dict(item, data_name="loop.npy")]}}
        (root / "dump.json").write_text(json.dumps({"task": "tensor", "data": data}))
        return root
    code, out, err = cli("compare", dump(tmp_path / "r"), dump(tmp_path / "b"))
    assert code in (0, 1), err
    assert "loop" in out


def test_an_epoch_out_of_the_float_range_in_metrics_jsonl_is_not_fatal(tmp_path):
    # found by the fuzzer: an epoch of 400 digits (read as inf) made the global-step arithmetic raise
    from advisor.read.logs import read_file

    log = tmp_path / "metrics.jsonl"
    log.write_text('null\n{"epoch": "' + "9" * 400 + '", "step": 3, "loss": 1}\n{"epoch": 1e999, "step": 4, "loss": 1}\n'
                   '{"epoch": 1, "step": 5, "loss": 0.5}\n')
    read = read_file(log, "metrics.jsonl")
    assert read.problem is None and read.series["train/loss"].buf.count == 3
