"""advisor.read.samples: discovery of data samples and refusal of unsafe or broken files."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from advisor.inventory import RunFolder
from advisor.read import samples
from advisor.read.samples import find_samples, split_of


def _scan(root):
    return find_samples(RunFolder.scan(root))


def test_npz_npy_pairs_and_csv_are_found_with_their_split(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    np.savez(data / "train.npz", X=x, labels=np.arange(10) % 2)
    np.savez_compressed(data / "val.npz", features=x, y=np.arange(10) % 2)
    np.save(data / "x_test.npy", x)
    np.save(data / "y_test.npy", np.arange(10))
    (tmp_path / "samples.csv").write_text("a,b,label\n1,2,cat\n3,,dog\n")
    (tmp_path / "metrics.csv").write_text("epoch,loss,label\n1,0.5,3\n")  # a metrics file, not a sample
    found = _scan(tmp_path)
    got = {tuple(s.files): (s.split, s.features.shape, s.labels.shape) for s in found.sets}
    assert got == {
        ("data/train.npz",): ("train", (10, 2), (10,)),
        ("data/val.npz",): ("eval", (10, 2), (10,)),
        ("data/x_test.npy", "data/y_test.npy"): ("eval", (10, 2), (10,)),
        ("samples.csv",): ("train", (2, 2), (2,)),
    }
    csv_set = next(s for s in found.sets if s.files == ["samples.csv"])
    assert list(csv_set.labels.load()) == ["cat", "dog"]
    assert np.isnan(csv_set.features.load()[1, 1])
    assert found.unreadable == []


def test_compressed_member_streams_in_chunks_equal_to_the_array(tmp_path):
    x = np.random.default_rng(0).standard_normal((1001, 7)).astype(np.float32)
    np.savez_compressed(tmp_path / "train.npz", x=x, y=np.zeros(1001))
    (s,) = _scan(tmp_path).sets
    assert s.features._mapped is None  # streamed, not loaded
    blocks = list(s.features.iter_chunks(100))
    assert [b.shape[0] for _, b in blocks] == [100] * 10 + [1]
    assert np.array_equal(np.concatenate([b for _, b in blocks]), x)
    assert np.array_equal(s.features.take(np.array([0, 500, 1000])), x[[0, 500, 1000]])


def test_uncompressed_npz_member_is_memory_mapped(tmp_path):
    x = np.arange(60, dtype=np.int16).reshape(20, 3)
    np.savez(tmp_path / "train.npz", x=x, y=np.arange(20))
    (s,) = _scan(tmp_path).sets
    assert isinstance(s.features._mapped, np.memmap)
    assert np.array_equal(s.features.load(), x)


def test_pickled_object_arrays_are_refused_never_unpickled(tmp_path):
    np.save(tmp_path / "x_train.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    np.save(tmp_path / "y_train.npy", np.array([0, 1]))
    np.savez(tmp_path / "eval.npz", x=np.array([[1.0]]), y=np.array([object()], dtype=object))
    found = _scan(tmp_path)
    why = dict(found.unreadable)
    assert "Python objects" in why["x_train.npy"] and "never unpickled" in why["x_train.npy"]
    (ev,) = [s for s in found.sets if s.split == "eval"]
    assert ev.labels is None and ev.features is not None
    assert "Python objects" in dict(found.notes)["eval.npz"]


@pytest.mark.parametrize("content,expected", [
    ("a,b,label\n1,2,0\n3,4\n", "line 3: 2 fields, the header has 3 (ragged CSV)"),
    ("a,b,label\n1,red,0\n", "line 2: column 'b' is not numeric ('red')"),
    ("a,label\n", "CSV has a header but no rows"),
])
def test_bad_csv_is_reported_with_the_line(tmp_path, content, expected):
    (tmp_path / "train.csv").write_text(content)
    found = _scan(tmp_path)
    assert found.sets == [] and expected in dict(found.unreadable)["train.csv"]


def test_each_csv_is_opened_once(tmp_path):
    """A sample CSV is classified by its header and parsed from the one open (it was opened twice)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.csv").write_text("f0,f1,label\n1,2,0\n3,4,1\n")
    (tmp_path / "data" / "quoted.csv").write_text('"f0","f,1","label"\n1,2,0\n')  # header parsed as a record
    (tmp_path / "data" / "table.csv").write_text("name,score\nx,1\n")  # no label column: not a sample
    opened: list[str] = []

    def hook(event, args):
        if event == "open" and str(args[0]).endswith(".csv"):
            opened.append(Path(str(args[0])).name)

    sys.addaudithook(hook)  # audit hooks cannot be removed: it only records into this test's list
    found = _scan(tmp_path)
    seen, opened[:] = list(opened), []
    assert sorted(seen) == ["quoted.csv", "table.csv", "train.csv"]
    by_file = {s.files[0]: s for s in found.sets}
    assert sorted(by_file) == ["data/quoted.csv", "data/train.csv"]
    assert by_file["data/train.csv"].features.load().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert by_file["data/quoted.csv"].features.shape == (1, 2)


def test_csv_sample_not_utf8_or_too_large_is_reported(tmp_path, monkeypatch):
    (tmp_path / "train.csv").write_bytes(b"f0,label\n1,\xff\n")
    (tmp_path / "eval.csv").write_text("f0,label\n" + "1,0\n" * 10)
    monkeypatch.setattr(samples, "MAX_CSV_BYTES", 40)
    why = dict(_scan(tmp_path).unreadable)
    assert "can't decode byte 0xff in position 11" in why["train.csv"]
    assert why["eval.csv"] == "CSV is 49 bytes, over the 40-byte limit for CSV samples; save large samples as .npy"


def test_empty_truncated_and_non_zip_files(tmp_path):
    np.save(tmp_path / "x_train.npy", np.zeros((0, 4)))
    np.save(tmp_path / "x_val.npy", np.zeros((100, 4)))
    raw = (tmp_path / "x_val.npy").read_bytes()
    (tmp_path / "x_val.npy").write_bytes(raw[:300])
    (tmp_path / "test.npz").write_bytes(b"not a zip")
    with zipfile.ZipFile(tmp_path / "dev.npz", "w") as zf:
        zf.writestr("x.npy", b"garbage")
    why = dict(_scan(tmp_path).unreadable)
    assert "empty (shape (0, 4))" in why["x_train.npy"]
    assert "truncated" in why["x_val.npy"]
    assert "not a readable .npz" in why["test.npz"]
    assert "not a NumPy .npy array" in why["dev.npz"]


def test_dump_folders_are_not_samples(tmp_path):
    (tmp_path / "dump").mkdir()
    np.save(tmp_path / "dump" / "x_train.npy", np.ones((3, 3)))
    assert _scan(tmp_path).sets == []


def test_split_words():
    from pathlib import Path
    assert split_of(Path("data/valid/batch.npz")) == "eval"
    assert split_of(Path("test_data/train.npz")) == "train"  # the file name wins over the folder
    assert split_of(Path("sample.npz")) == "train"
