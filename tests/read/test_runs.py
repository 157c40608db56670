"""advisor.read.runs: several runs in one folder -> the latest is read, the others are named."""

from __future__ import annotations

import shutil
from pathlib import Path

from advisor.diagnosis import diagnose
from advisor.inventory import RunFolder
from advisor.read.runs import pick_latest

SAMPLES = Path(__file__).resolve().parents[1] / "extract" / "config_samples"


def _files(folder: RunFolder) -> list[str]:
    return [p.as_posix() for p in folder.files]


def test_lightning_versions_keep_the_highest_number():
    folder, note = pick_latest(RunFolder.scan(SAMPLES / "lightning"))
    assert _files(folder) == ["lightning_logs/version_1/hparams.yaml", "lightning_logs/version_1/metrics.csv"]
    assert [(r.path, r.kind, r.status) for r in folder.skipped] == [("lightning_logs/version_0/", "run", "ignored")]
    assert "latest, lightning_logs/version_1/, is read" in folder.skipped[0].why
    assert note.startswith("lightning_logs/ holds 2 Lightning runs") and "left out lightning_logs/version_0/" in note


def test_numbers_are_compared_as_numbers_not_text(tmp_path):
    for n in (2, 10, 9):
        (tmp_path / "lightning_logs" / f"version_{n}").mkdir(parents=True)
        (tmp_path / "lightning_logs" / f"version_{n}" / "metrics.csv").write_text("step,loss\n0,1.0\n")
    folder, note = pick_latest(RunFolder.scan(tmp_path))
    assert _files(folder) == ["lightning_logs/version_10/metrics.csv"]
    assert "left out lightning_logs/version_2/, lightning_logs/version_9/" in note


def test_hugging_face_checkpoints_keep_the_latest_step():
    folder, note = pick_latest(RunFolder.scan(SAMPLES / "hf_output"))
    assert _files(folder) == ["checkpoint-12/config.json", "checkpoint-12/trainer_state.json", "training_args.json"]
    assert sorted(r.path for r in folder.skipped) == ["checkpoint-4/", "checkpoint-8/"]
    assert "3 Hugging Face checkpoints" in note and "read checkpoint-12/" in note


def test_a_final_trainer_state_beside_checkpoints_is_read_instead(tmp_path):
    shutil.copytree(SAMPLES / "hf_output", tmp_path / "out")
    shutil.copy(tmp_path / "out" / "checkpoint-12" / "trainer_state.json", tmp_path / "out" / "trainer_state.json")
    folder, note = pick_latest(RunFolder.scan(tmp_path / "out"))
    assert _files(folder) == ["trainer_state.json", "training_args.json"]
    assert sorted(r.path for r in folder.skipped) == ["checkpoint-12/", "checkpoint-4/", "checkpoint-8/"]
    assert "read trainer_state.json" in note and "whole history" in folder.skipped[0].why


def test_one_run_is_left_as_it_is():
    run = RunFolder.scan(SAMPLES / "lightning" / "lightning_logs" / "version_0")
    folder, note = pick_latest(run)
    assert folder is run and note is None


def test_the_report_says_which_run_was_read_and_names_the_others():
    report = diagnose(SAMPLES / "lightning")
    (warning,) = [w for w in report.warnings if "Lightning runs" in w]
    assert warning.startswith("advisor: warning: RUN: lightning_logs/ holds 2 Lightning runs")
    inputs = {(i.path, i.status) for i in report.inputs}
    assert ("lightning_logs/version_0/", "ignored") in inputs
    assert ("lightning_logs/version_1/metrics.csv", "used") in inputs
    assert not any(i.path.startswith("lightning_logs/version_0/") and i.status == "used" for i in report.inputs)


def test_hydra_date_and_time_folders_keep_the_last_started(tmp_path):
    for stamp in ("2024-03-01/09-00-00", "2024-03-01/17-30-00", "2024-03-02/08-15-00", "2024-03-02/11-45-10"):
        run = tmp_path / "outputs" / stamp
        (run / ".hydra").mkdir(parents=True)
        (run / ".hydra" / "config.yaml").write_text("lr: 0.1\n")
        (run / "train.log").write_text("step 1 loss 2.0\n")
    folder, note = pick_latest(RunFolder.scan(tmp_path))
    assert _files(folder) == ["outputs/2024-03-02/11-45-10/.hydra/config.yaml", "outputs/2024-03-02/11-45-10/train.log"]
    assert sorted(r.path for r in folder.skipped) == ["outputs/2024-03-01/", "outputs/2024-03-02/08-15-00/"]
    assert "read outputs/2024-03-02/" in note and "read outputs/2024-03-02/11-45-10/" in note


def test_mmengine_timestamped_work_dirs(tmp_path):
    for stamp in ("20240311_101500", "20240312_090000"):
        (tmp_path / stamp).mkdir()
        (tmp_path / stamp / f"{stamp}.log").write_text("Epoch(train) [1][50/100] loss: 1.0\n")
    folder, note = pick_latest(RunFolder.scan(tmp_path))
    assert _files(folder) == ["20240312_090000/20240312_090000.log"]
    assert "timestamped run folders" in note


def test_one_checkpoint_beside_the_final_state_is_not_counted_twice(tmp_path):
    # a Trainer output_dir with save_total_limit=1: checkpoint-228/ and the final trainer_state.json
    out = Path(__file__).parent / "hf_trainer_runs" / "bert_lr_high" / "output"
    shutil.copytree(out, tmp_path / "output")
    (tmp_path / "output" / "checkpoint-228").mkdir()
    shutil.copy(out / "trainer_state.json", tmp_path / "output" / "checkpoint-228" / "trainer_state.json")
    folder, note = pick_latest(RunFolder.scan(tmp_path))
    assert note.startswith("output/ holds 1 Hugging Face checkpoint of one run (checkpoint-STEP) and a final")
    assert "read output/trainer_state.json; left out output/checkpoint-228/" in note
