"""MindSpore SummaryCollector output (summary events and lineage), read without MindSpore, on files MindSpore 2.10
really wrote (tests/read/make/mindspore_summary.py), and on damaged copies."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder
from advisor.read.mindinsight import is_lineage, is_summary, lineage_settings, read_summary
from advisor.read.protobuf_wire import WireError

RUNS = Path(__file__).resolve().parent / "runs"
HEALTHY, NAN = RUNS / "mindspore_summary", RUNS / "mindspore_summary_lr_high"


def _one(folder: Path, pattern: str) -> Path:
    (found,) = sorted((folder / "summary").glob(pattern))
    return found


def _logged_losses(folder: Path) -> list[float]:
    text = (folder / "train.log").read_text(encoding="utf-8")
    return [float(v) for v in re.findall(r"loss is ([\d.]+)", text)]


def test_file_names() -> None:
    assert is_summary("events.out.events.summary.1796429242.0.vm_MS")
    assert is_lineage("events.out.events.summary.1796429242.0.vm_lineage")
    assert not is_summary("events.out.events.summary.1796429242.0.vm_lineage")
    assert not is_summary("events.out.tfevents.1700000000.host")
    assert not is_summary("model.summary.txt") and not is_lineage("keras.summary.txt_lineage")


def test_the_summary_holds_the_loss_lossmonitor_printed_once_per_step() -> None:
    read, hists = read_summary(_one(HEALTHY, "*_MS"), "s")
    assert read.problem is None and not read.notes
    loss = read.series["train/loss"]
    assert list(loss.buf.step) == [float(s) for s in range(1, 25)]  # the epoch-end repeats are one point
    assert list(loss.buf.value) == pytest.approx(_logged_losses(HEALTHY), rel=1e-6)
    assert len(hists) == 24 * 4 and {h.name for h in hists} == {"0.weight", "0.bias", "2.weight", "2.bias"}
    w = next(h for h in hists if h.name == "0.weight" and h.step == 1)
    assert w.count == 16 * 32 and w.nan == 0 and w.low is not None and w.high is not None
    assert w.low < w.mean < w.high and 0 < w.std < w.high - w.low


def test_the_lineage_gives_the_settings_summary_collector_recorded() -> None:
    got = lineage_settings(_one(HEALTHY, "*_lineage").read_bytes())
    assert got == {
        "optimizer": "Momentum",
        "learning_rate": 0.5,
        "loss_function": "SoftmaxCrossEntropyWithLogits",
        "epoch_num": 3,
        "parallel_mode": "stand_alone",
        "device_num": 1,
        "batch_size": 32,
        "train_size": 256,
        "network": "SequentialCell",
    }


def test_a_summary_folder_alone_gives_curves_settings_and_weight_dynamics(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(HEALTHY / "summary", run / "summary")  # without LossMonitor's train.log
    facts = extract_facts(RunPair(run=RunFolder.open(str(run), "run"))).facts
    hp = {f.name: f.value for f in facts if f.kind == "hyperparameter"}
    assert hp["learning_rate"] == 0.5 and hp["epochs"] == 3 and hp["batch_size"] == 32 and hp["world_size"] == 1
    curve = next(f for f in facts if f.kind == "loss_curve" and f.split == "train")
    assert curve.points == 24 and curve.first_value == pytest.approx(1.456, abs=1e-3)
    weights = {f.name for f in facts if f.kind == "param_dynamics"}
    assert {"0.weight", "2.weight"} <= weights
    report = diagnose(run)
    assert not [c for c in report.causes if c.confidence >= 0.5]
    ran = {c.stage: c for c in report.checks if c.status == "ran"}
    assert "training_dynamics" in ran and "hyperparameters" in ran


def test_a_nan_stopped_by_lossmonitor_is_one_crash_at_the_step_it_names() -> None:
    facts = extract_facts(RunPair(run=RunFolder.open(str(NAN), "run"))).facts
    crashes = [f for f in facts if f.kind == "training_crash"]
    assert len(crashes) == 1 and crashes[0].step == 2  # not the traceback's "after step 1" as well
    report = diagnose(NAN)
    assert "NaN" in report.summary.symptoms[0].text and "step 2" in report.summary.symptoms[0].text
    assert report.causes[0].id == "lr_too_high"  # one update took a finite loss to NaN
    assert "not_normalized" not in [c.id for c in report.causes if c.confidence >= 0.5]


def test_damaged_files_are_named_and_the_rest_goes_on(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(HEALTHY, run)
    summary, lineage = _one(run, "*_MS"), _one(run, "*_lineage")
    data = summary.read_bytes()
    summary.chmod(0o600)
    summary.write_bytes(data[: len(data) // 2])  # a write cut off
    lineage.chmod(0o600)
    lineage.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00abcd\xff\xff\xff\xff\xff0000")
    read, _ = read_summary(summary, "s")
    assert read.problem is None and read.notes and "truncated" in read.notes[0]
    assert 0 < len(read.series["train/loss"].buf.value) < 24
    with pytest.raises(WireError):
        lineage_settings(lineage.read_bytes())
    report = diagnose(run)  # the log and the half summary still give the curve
    bad = [i for i in report.inputs if i.path.endswith("_lineage")]
    assert bad and bad[0].status == "unreadable" and "not a MindSpore lineage file" in (bad[0].why or "")


def test_random_bytes_named_like_a_summary_are_a_problem_not_a_crash(tmp_path: Path) -> None:
    f = tmp_path / "events.out.events.summary.1.0.host_MS"
    f.write_bytes(bytes(range(256)) * 8)
    read, hists = read_summary(f, f.name)
    assert hists == [] and (read.problem or read.notes)


def test_mindspore_writes_what_the_reader_reads(tmp_path: Path) -> None:
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("mindspore") is None:  # not imported here: MindSpore changes process-wide state
        pytest.skip("MindSpore is not installed")

    maker = Path(__file__).resolve().parent / "make" / "mindspore_summary.py"
    subprocess.run([sys.executable, str(maker), str(tmp_path)], check=True, timeout=600)
    read, hists = read_summary(_one(tmp_path / "mindspore_summary", "*_MS"), "s")
    assert list(read.series["train/loss"].buf.value) == pytest.approx(
        _logged_losses(tmp_path / "mindspore_summary"), rel=1e-6
    )
    assert len(hists) == 96
