"""Hostile run folders, built in a few lines each on top of a small healthy run (examples/healthy,
a real MLP training run: train.log, hparams.yaml, data/*.npz, tensors.jsonl)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from advisor.cli import main

HEALTHY = Path(__file__).resolve().parents[2] / "examples" / "healthy"


@pytest.fixture
def run_dir(tmp_path) -> Path:
    """A copy of the healthy example run, to be spoiled by a test."""
    d = tmp_path / "run"
    shutil.copytree(HEALTHY, d)
    return d


@pytest.fixture
def cli(capsys):
    """cli(*argv) -> (exit code, stdout, stderr); any exception escaping main() fails the test."""

    def call(*argv):
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return call


def diagnose_json(cli, *argv) -> dict:
    code, out, err = cli("diagnose", *argv, "-f", "json")
    assert code == 0, err
    return json.loads(out)


def inputs_by_path(report: dict) -> dict[str, dict]:
    return {i["path"]: i for i in report["inputs"]}


def ran(report: dict) -> set[str]:
    return {c["stage"] for c in report["checks"] if c["status"] == "ran"}


def npy_dump(folder: Path, names=("a.output.0", "b.output.0"), manifest: list | None = None) -> Path:
    """A plain .npy dump (two tensors) with an optional manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for i, n in enumerate(names):
        np.save(folder / f"{i:04d}_{n}.npy", rng.standard_normal(16).astype(np.float32))
    if manifest is not None:
        (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def diagnose_in_child(run_dir: Path) -> dict:
    """Diagnose ``run_dir`` in a fresh interpreter: its peak memory (``rss_kb``) and its input records.

    The peak is the child's own (VmHWM, which starts anew at exec); ``ru_maxrss`` carries over the forking
    parent's peak, so a test suite grown to a gigabyte would be measured, not the diagnosis."""
    code = (
        "import json, re, resource, sys; from advisor.diagnosis import diagnose; r = diagnose(sys.argv[1]); "
        "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()) if sys.platform == 'linux' else None; "
        "print(json.dumps({'rss_kb': int(hwm.group(1)) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
        "'inputs': [i.model_dump() for i in r.inputs]}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(run_dir)],
        cwd=HEALTHY.parents[1],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    return json.loads(out.splitlines()[-1])


#: the size of a sparse file made to look endless (nothing is written: truncate leaves a hole)
TERABYTE = 1 << 40


def sparse(path: Path, head: bytes = b"", size: int = TERABYTE) -> Path:
    """A file of ``head`` then zeros up to ``size`` bytes, made in no time and no disk (a hole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def timed(call):  # type: ignore[no-untyped-def]
    """(what ``call()`` returns, the wall seconds it took)."""
    start = time.perf_counter()
    got = call()
    return got, time.perf_counter() - start
