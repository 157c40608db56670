"""Reading stays inside the run folder, by file, not by path (issue 29, class 2): a symbolic link to a folder
outside - msprobe's dump_tensor_data, a dump's step folder, any sub-folder of a run - is not followed, in compare
as in diagnose. Checked with Python's audit hook: no file outside is opened or listed."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from advisor.cli import main

ROOT = Path(__file__).resolve().parents[2]
MSPROBE = ROOT.parent / "shared" / "fixtures" / "msprobe"

_WATCHED: list[str] = []
_OPENED: list[str] = []


def _hook(event: str, args: tuple) -> None:
    if _WATCHED and event in ("open", "os.listdir", "os.scandir") and args:
        try:
            p = os.path.realpath(os.fsdecode(args[0]))
        except (TypeError, ValueError):
            return
        if any(p == w or p.startswith(w + os.sep) for w in _WATCHED):
            _OPENED.append(f"{event} {p}")


sys.addaudithook(_hook)  # audit hooks cannot be removed: it only records while _WATCHED is set


def _opened_outside(outside: Path, *argv) -> list[str]:
    _WATCHED[:] = [os.path.realpath(outside)]
    _OPENED.clear()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main([str(a) for a in argv])
    finally:
        _WATCHED.clear()
    return list(_OPENED)


def _npy(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "0000_a.output.0.npy", np.ones(8, np.float32))
    np.save(folder / "0001_b.output.0.npy", np.ones(8, np.float32))


@pytest.mark.skipif(not MSPROBE.is_dir(), reason="needs ../shared/fixtures/msprobe")
def test_a_linked_dump_tensor_data_is_not_followed(tmp_path: Path):
    shutil.copytree(MSPROBE / "r_base", tmp_path / "base")
    shutil.copytree(MSPROBE / "r_tanh", tmp_path / "run")
    rank = tmp_path / "run" / "step0" / "rank0"
    os.chmod(rank, 0o755)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.move(str(rank / "dump_tensor_data"), outside / "dump_tensor_data")
    (rank / "dump_tensor_data").symlink_to(outside / "dump_tensor_data", target_is_directory=True)
    assert _opened_outside(outside, "compare", tmp_path / "run", tmp_path / "base") == []
    assert _opened_outside(outside, "diagnose", tmp_path / "run", "--baseline", tmp_path / "base", "-f", "json") == []


def test_a_linked_step_folder_or_log_folder_is_not_followed(tmp_path: Path):
    outside = tmp_path / "outside"
    _npy(outside / "step_000000")
    (outside / "train.log").write_text("step 1 loss 2.3\nstep 2 loss nan\n")
    _npy(tmp_path / "base" / "dump" / "step_000000")
    (tmp_path / "run" / "dump").mkdir(parents=True)
    (tmp_path / "run" / "dump" / "step_000000").symlink_to(outside / "step_000000", target_is_directory=True)
    (tmp_path / "run" / "logs").symlink_to(outside, target_is_directory=True)
    (tmp_path / "run" / "train.log").write_text("step 1 loss 2.3\nstep 2 loss 2.1\n")
    assert _opened_outside(outside, "compare", tmp_path / "run", tmp_path / "base") == []
    assert _opened_outside(outside, "diagnose", tmp_path / "run", "--baseline", tmp_path / "base", "-f", "json") == []
