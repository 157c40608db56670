"""Memory that follows what a file claims (issue #17): an .npz member that inflates far beyond the
archive, an .npy header announcing gigabytes over a sparse file. What is read is capped
(advisor.read.samples.MAX_READ_BYTES) and the report says what was cut."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from advisor.read import samples
from tests.hostile.conftest import diagnose_in_child, inputs_by_path



def _header(shape, dtype) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def inflating_npz(path: Path, rows: int, width: int = 16) -> None:
    """x (rows x width float64 zeros) and y (rows int64 zeros), deflated: the archive is ~1/1000 of that."""
    chunk = bytes(1 << 22)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, shape, dtype in (("x.npy", (rows, width), "<f8"), ("y.npy", (rows,), "<i8")):
            with zf.open(name, "w", force_zip64=True) as m:
                m.write(_header(shape, dtype))
                left = int(np.prod(shape)) * 8
                while left > 0:
                    m.write(chunk[:min(left, len(chunk))])
                    left -= len(chunk)


def sparse_npy(path: Path, shape, dtype="<f8") -> None:
    head = _header(shape, dtype)
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + int(np.prod(shape)) * np.dtype(dtype).itemsize)


def _data_only(run_dir: Path) -> Path:
    data = run_dir / "data"
    for f in data.iterdir():
        f.unlink()
    return data


def test_large_arrays_are_sampled_with_a_note(run_dir, cli, monkeypatch):
    monkeypatch.setattr(samples, "MAX_READ_BYTES", 64 << 10)
    data = _data_only(run_dir)
    rng = np.random.default_rng(0)
    y = np.sort(rng.integers(0, 10, 40_000))  # sorted by class: the first rows alone would show one class
    np.save(data / "x_train.npy", rng.standard_normal((40_000, 4)).astype(np.float32))
    np.save(data / "y_train.npy", y)
    inflating_npz(data / "eval.npz", 20_000)
    code, out, err = cli("diagnose", run_dir, "-f", "json")
    assert code == 0, err
    report = json.loads(out)
    notes = {p: (i["why"] or "") for p, i in inputs_by_path(report).items()}
    assert "read limit" in notes["data/x_train.npy"] and "evenly spread" in notes["data/x_train.npy"]
    assert "read limit" in notes["data/eval.npz"] and "the first" in notes["data/eval.npz"]
    code, out, err = cli("facts", run_dir, "-f", "json")
    facts = json.loads(out)["facts"]
    (labels,) = [f for f in facts if f["kind"] == "label_stats" and f.get("split") == "train"]
    assert labels["n_classes"] == 10  # the sample spans the whole (sorted) file, not its first rows
    assert "input_data" in {c["stage"] for c in report["checks"] if c["status"] == "ran"}


@pytest.mark.slow
def test_inflating_npz_and_sparse_npy_stay_within_memory(run_dir):
    data = _data_only(run_dir)
    inflating_npz(data / "train.npz", (1 << 29) // 128)  # 512 MiB of features from a ~0.5 MB archive
    sparse_npy(data / "x_eval.npy", (1 << 30, 1))       # 8 GiB announced, nothing on disk
    sparse_npy(data / "y_eval.npy", (1 << 30,))
    result = diagnose_in_child(run_dir)
    assert result["rss_kb"] < 2_000_000, result["rss_kb"]  # was 14 GB
    notes = {i["path"]: i["why"] or "" for i in result["inputs"]}
    assert "read limit" in notes["data/train.npz"] and "read limit" in notes["data/x_eval.npy"]
