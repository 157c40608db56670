"""RUN as one log file or as '-' (standard input): read in place / in memory, nothing written anywhere."""

from __future__ import annotations

import io
import os

import pytest

from advisor.cli import main
from advisor.inventory import RunFolder
from advisor.read.stdin import MemoryFile, StdinTooLarge, read_stdin

# a hand-written PyTorch loop's prints (``print(f"epoch {e} step {s} loss {loss.item():.4f}")``), diverging
DIVERGING = "".join(f"epoch 1 step {s} loss {v}\n" for s, v in
                    ((10, "2.3026"), (20, "2.1022"), (30, "1.9871"), (40, "5.8120"), (50, "48.013"), (60, "nan")))


def _tree(root):
    return sorted((p, os.path.getmtime(os.path.join(root, p))) for p in os.listdir(root))


def test_single_file_is_read_whatever_its_name_and_nothing_is_written(tmp_path, capsys):
    log = tmp_path / "nohup.results"          # a name no log pattern matches
    log.write_text(DIVERGING)
    before = _tree(tmp_path)
    code = main(["diagnose", str(log), "-f", "json"])
    out = capsys.readouterr().out
    assert code == 0
    assert '"path": "nohup.results"' in out and '"status": "used"' in out
    assert "first_nonfinite_step" in out or "non-finite" in out
    assert _tree(tmp_path) == before


def test_stdin_is_read_in_memory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(DIVERGING.encode())))
    code = main(["diagnose", "-"])
    out = capsys.readouterr().out
    assert code == 0
    assert "[ran] Loss curve: stdin" in out
    assert "step 60" in out                    # the NaN's step, read from the piped lines
    assert os.listdir(tmp_path) == []          # nothing saved, not even a temporary copy in the working folder


def test_stdin_facts(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(DIVERGING.encode())))
    assert main(["facts", "-"]) == 0
    out = capsys.readouterr().out
    assert "loss_curve: split=train" in out and "first_nonfinite_step=60" in out


EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples")
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "extract", "fixtures")


@pytest.mark.parametrize(
    "log",
    [
        os.path.join(EXAMPLES, "lr_too_high", "train.log"),  # argparse Namespace(lr=2.5, ...) printed first
        os.path.join(FIXTURES, "keras_log_only_one_unit", "train.log"),  # Keras 3 model summary, then fit
    ],
    ids=["namespace-settings", "keras-summary"],
)
def test_piped_text_gives_the_diagnosis_of_the_same_file(log, capsys, monkeypatch):
    """Settings and a model summary printed in the text are read from standard input as from the file."""
    import json

    assert main(["diagnose", log, "-f", "json"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    with open(log, "rb") as fh:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(fh.read())))
    assert main(["diagnose", "-", "-f", "json"]) == 0
    piped = json.loads(capsys.readouterr().out)
    assert [(c["id"], c["confidence"]) for c in piped["causes"]] == [
        (c["id"], c["confidence"]) for c in from_file["causes"]
    ]
    assert piped["facts_count"] == from_file["facts_count"]
    kinds = sorted(i["kind"] for i in piped["inputs"] if i["status"] == "used")
    assert kinds == sorted(i["kind"] for i in from_file["inputs"] if i["status"] == "used")
    assert piped["causes"] and piped["causes"][0]["confidence"] >= 0.5  # read from what the text prints


def test_stdin_is_bounded():
    assert read_stdin(io.BytesIO(b"x" * 10), limit=10) == b"x" * 10
    with pytest.raises(StdinTooLarge, match="save the log to a file"):
        read_stdin(io.BytesIO(b"x" * 11), limit=10)


def test_memory_file_is_read_only():
    f = MemoryFile("stdin", b"loss 1\n")
    assert f.open("r").read() == "loss 1\n" and f.stat().st_size == 7 and f.suffix == ""
    with pytest.raises(PermissionError):
        f.open("w")


def test_report_may_not_overwrite_the_log(tmp_path, capsys):
    log = tmp_path / "train.log"
    log.write_text(DIVERGING)
    assert main(["diagnose", str(log), "-o", str(log), "-f", "text"]) == 2
    assert "is the run log itself" in capsys.readouterr().err
    assert log.read_text() == DIVERGING


def test_single_file_folder_view():
    folder = RunFolder.open("-", stdin=b"loss 1\n")
    assert folder.single and [p.name for p in folder.files] == ["stdin"]
    assert folder.abs("stdin").read_bytes() == b"loss 1\n" and folder.rel(folder.abs("stdin")) == "stdin"


def test_text_report_lists_ignored_inputs(tmp_path, capsys):
    (tmp_path / "train.log").write_text(DIVERGING)
    (tmp_path / "notes.bin").write_bytes(b"\x00\x01")
    assert main(["diagnose", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Not read (ignored):\n  notes.bin: not a file advisor reads" in out


def test_baseline_may_not_be_the_run_log_itself(tmp_path, capsys):
    log = tmp_path / "train.log"
    log.write_text(DIVERGING)
    assert main(["diagnose", str(log), "--baseline", str(log)]) == 2
    assert "--baseline is the run log itself" in capsys.readouterr().err
