"""Input that used to be read as nothing, or wrongly, with no note (issue #17): each case is now
either read right or named in the report with what was cut and why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from tests.hostile.conftest import diagnose_json, inputs_by_path, ran


def _log_run(tmp_path, name: str, content: str | bytes) -> Path:
    d = tmp_path / "logrun"
    d.mkdir()
    (d / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return d


def _curve(cli, run) -> dict:
    code, out, err = cli("facts", run, "-f", "json")
    assert code == 0, err
    curves = [f for f in json.loads(out)["facts"] if f["kind"] == "loss_curve" and f["split"] == "train"]
    assert curves, json.loads(out)["inputs"]
    return curves[0]


STEPS = range(1, 60)


def test_ansi_colour_codes_in_log_values(tmp_path, cli):
    text = "\n".join(f"step {s} loss \x1b[32m{2.0 / s:.4f}\x1b[0m \x1b]0;t\x07" for s in STEPS)
    curve = _curve(cli, _log_run(tmp_path, "train.log", text))
    assert curve["points"] == len(STEPS) and curve["last_value"] == pytest.approx(2.0 / 59, rel=1e-3)


def test_nul_bytes_inside_a_log(tmp_path, cli):
    text = "\n".join(f"step {s}\x00 loss {2.0 / s:.4f}" for s in STEPS) + "\n" + "\x00" * 64
    curve = _curve(cli, _log_run(tmp_path, "train.log", text))
    assert curve["points"] == len(STEPS)


def test_csv_with_quoted_commas(tmp_path, cli):
    text = "step,loss,note\n" + "\n".join(f'{s},{2.0 / s:.4f},"lr 0.1, warm"' for s in STEPS) + "\n"
    curve = _curve(cli, _log_run(tmp_path, "metrics.csv", text))
    assert curve["points"] == len(STEPS)


def test_csv_with_bom_and_mixed_types(tmp_path, cli):
    text = "\ufeffstep,loss,acc\n" + "\n".join(f"{s},{2.0 / s:.4f},{'n/a' if s % 5 == 0 else 0.5}" for s in STEPS)
    curve = _curve(cli, _log_run(tmp_path, "metrics.csv", text))
    assert curve["points"] == len(STEPS) and curve["first_step"] == 1


def test_tensorboard_file_with_a_bad_crc_halfway_is_noted(tmp_path, cli):
    pytest.importorskip("tensorboard")
    tb = pytest.importorskip("torch.utils.tensorboard")
    d = tmp_path / "tbrun"
    w = tb.SummaryWriter(str(d))
    for s in range(1, 201):
        w.add_scalar("train/loss", 2.0 / s, s)
    w.close()
    (events,) = d.glob("events.out.tfevents*")
    report = diagnose_json(cli, d)
    assert "corrupt" not in (inputs_by_path(report)[events.name]["why"] or "")  # an intact file: no such note
    data = bytearray(events.read_bytes())
    data[len(data) // 2] ^= 0xFF
    events.write_bytes(bytes(data))
    report = diagnose_json(cli, d)
    why = inputs_by_path(report)[events.name]["why"] or ""
    assert "corrupt" in why and "not read" in why


def _npy_pair(tmp_path, run_arr, base_arr):
    for side, arr in (("r", run_arr), ("b", base_arr)):
        (tmp_path / side / "dump").mkdir(parents=True)
        np.save(tmp_path / side / "dump" / "0000_op.output.0.npy", arr)
    return tmp_path / "r", tmp_path / "b"


@pytest.mark.filterwarnings("error")  # the dropped imaginary part is reported, not warned about by numpy
def test_complex_against_float_is_not_identical(tmp_path, cli):
    x = np.linspace(0, 1, 64).astype(np.float32)
    code, out, _err = cli("compare", *_npy_pair(tmp_path, (x + 1j * x).astype(np.complex64), x))
    assert code == 1 and "imaginary" in out


@pytest.mark.filterwarnings("error")  # the dropped imaginary part is reported, not warned about by numpy
def test_complex_with_equal_imaginary_parts_passes(tmp_path, cli):
    x = np.linspace(0, 1, 64).astype(np.float32)
    z = (x + 1j * x).astype(np.complex64)
    code, out, _err = cli("compare", *_npy_pair(tmp_path, z, z.copy()))
    assert code == 0, out


def test_bfloat16_pt_against_float64_is_compared(tmp_path, cli):
    torch = pytest.importorskip("torch")
    for side, dt in (("r", torch.bfloat16), ("b", torch.float64)):
        root = tmp_path / side
        (root / "dump_tensor_data").mkdir(parents=True)
        torch.save(torch.linspace(0, 1, 64).to(dt), root / "dump_tensor_data" / "out.pt")
        item = {"type": "torch.Tensor", "dtype": str(dt), "shape": [64], "data_name": "out.pt"}
        (root / "dump.json").write_text(json.dumps({"task": "tensor", "data": {"Functional.relu.0.forward": {
            "input_args": [], "output": [item]}}}))
    code, out, err = cli("compare", tmp_path / "r", tmp_path / "b")
    assert code in (0, 1) and "Functional.relu.0.forward.output.0" in out + err


def test_fifo_in_the_run_is_named_not_opened(run_dir, cli):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(run_dir / "stuck.log")  # opening it for reading would block forever
    report = diagnose_json(cli, run_dir)
    rec = inputs_by_path(report)["stuck.log"]
    assert rec["status"] == "unreadable" and "FIFO" in rec["why"]
    assert "loss_curve" in ran(report)


def test_unlistable_subfolder_is_named(run_dir, cli, monkeypatch):
    (run_dir / "secret").mkdir()
    (run_dir / "secret" / "train2.log").write_text("step 1 loss 1.0\n")
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("secret"):  # as a folder without read permission (root ignores chmod)
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)
    monkeypatch.setattr(os, "scandir", scandir)
    report = diagnose_json(cli, run_dir)
    rec = inputs_by_path(report)["secret/"]
    assert rec["status"] == "unreadable" and "cannot be listed" in rec["why"]


def test_device_file_is_named_not_read(run_dir, cli):
    target = Path("/dev/zero")
    if not target.exists():
        pytest.skip("no /dev/zero")
    try:
        os.mknod(run_dir / "zero.log", 0o600 | __import__("stat").S_IFCHR, os.major(os.stat(target).st_rdev) << 8 |
                 os.minor(os.stat(target).st_rdev))
    except (PermissionError, OSError):
        pytest.skip("cannot make a device node here")
    report = diagnose_json(cli, run_dir)
    rec = inputs_by_path(report)["zero.log"]
    assert rec["status"] == "unreadable" and "device" in rec["why"]


def test_link_to_nothing_is_named(run_dir, cli):
    os.symlink("gone.log", run_dir / "dangling.log")
    rec = inputs_by_path(diagnose_json(cli, run_dir))["dangling.log"]
    assert rec["status"] == "unreadable" and "link to nothing" in rec["why"]
