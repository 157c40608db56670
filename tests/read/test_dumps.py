"""advisor.read.dumps: both layouts, and the bad inputs it refuses (with the reason)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from advisor.compare.engine import compare_dumps
from advisor.extract.base import RunPair
from advisor.extract.op_compare import extract
from advisor.inventory import RunFolder
from advisor.read.dumps import (BFloat16Bits, DumpReadError, find_dump_roots, float_chunk, load_tensor, open_npy,
                                read_dump, split_name)


def _save(folder, name, arr):
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / name, arr)


def test_plain_layout_without_manifest_uses_natural_order_and_strips_the_index(tmp_path):
    d = tmp_path / "dump"
    for i, name in [(10, "b.forward.output.0"), (2, "a.forward.output.0"), (9, "a.forward.input.0")]:
        _save(d, f"{i:d}_{name}.npy", np.ones(3, np.float32))
    dump = read_dump(d)
    assert [r.name for r in dump.records] == ["a.forward.output.0", "a.forward.input.0", "b.forward.output.0"]
    assert [r.order for r in dump.records] == [0, 0, 1]
    assert dump.records[1].role == "input" and dump.records[0].dtype == "float32"


def test_split_name():
    assert split_name("layer1.conv.forward.output.0") == ("layer1.conv.forward", "output", "0")
    assert split_name("Functional.gelu.0.forward.input.approximate") == ("Functional.gelu.0.forward", "input", "approximate")
    assert split_name("logits") == ("logits", "output", "0")


def test_manifest_gives_order_and_types_and_refuses_paths_outside(tmp_path):
    d = tmp_path / "dump"
    _save(d, "x.npy", np.arange(4, dtype=np.float32))
    (tmp_path / "secret.npy").write_bytes(b"")
    (d / "manifest.json").write_text(json.dumps([
        {"name": "fc.forward.output.0", "file": "x.npy", "op_type": "Linear"},
        {"name": "evil.forward.output.0", "file": "../secret.npy"},
    ]))
    dump = read_dump(d)
    ok, evil = dump.records
    assert ok.op_type == "Linear" and ok.problem is None
    assert evil.problem == "'../secret.npy' points outside the dump folder"


def test_pickled_object_array_and_truncated_file_are_refused(tmp_path):
    d = tmp_path / "dump"
    d.mkdir()
    np.save(d / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    np.save(d / "big.npy", np.arange(1000, dtype=np.float32))
    raw = (d / "big.npy").read_bytes()
    (d / "big.npy").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DumpReadError, match="pickled"):
        open_npy(d / "obj.npy")
    with pytest.raises(DumpReadError, match="truncated"):
        open_npy(d / "big.npy")


def test_bad_tensors_are_listed_and_the_rest_compared(tmp_path):
    run, base = tmp_path / "run" / "dump", tmp_path / "base" / "dump"
    for folder in (run, base):
        _save(folder, "0000_a.forward.output.0.npy", np.linspace(0, 1, 50, dtype=np.float32))
        _save(folder, "0001_b.forward.output.0.npy", np.zeros((0, 4), np.float32))
    _save(run, "0002_c.forward.output.0.npy", np.ones((2, 3), np.float32))
    _save(base, "0002_c.forward.output.0.npy", np.ones((3, 2), np.float32))
    np.save(run / "0003_d.forward.output.0.npy", np.array([object()], dtype=object), allow_pickle=True)
    _save(base, "0003_d.forward.output.0.npy", np.ones(2, np.float32))
    comp = compare_dumps(read_dump(run), read_dump(base))
    reasons = {r.name: (r.verdict, r.reason) for r in comp.rows}
    assert reasons["a.forward.output.0"][0] == "pass"
    assert reasons["b.forward.output.0"] == ("skipped", "empty tensor")
    assert reasons["c.forward.output.0"] == ("skipped", "shape differs: [2, 3] in the run, [3, 2] in the baseline")
    assert reasons["d.forward.output.0"][0] == "skipped" and "pickled" in reasons["d.forward.output.0"][1]
    ex = extract(RunPair(RunFolder.scan(tmp_path / "run"), RunFolder.scan(tmp_path / "base", side="baseline")))
    bad = [i for i in ex.inputs if i.status == "unreadable"]
    assert [(i.path, i.side) for i in bad] == [("dump/0003_d.forward.output.0.npy", "run")]
    assert "pickled" in bad[0].why


def test_dtype_mismatch_is_compared_and_flagged(tmp_path):
    run, base = tmp_path / "run", tmp_path / "base"
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    _save(run, "0_y.forward.output.0.npy", x.astype(np.float16))
    _save(base, "0_y.forward.output.0.npy", x)
    row = compare_dumps(read_dump(run), read_dump(base)).rows[0]
    assert row.dtype_changed and row.metrics is not None and row.verdict == "error"


def test_find_dump_roots():
    from pathlib import Path
    files = [Path(p) for p in ["dump/0_a.npy", "dump/sub/1_b.npy", "dump/manifest.json", "data/x.npy",
                               "msp/step0/rank0/dump.json", "msp/step0/rank0/dump_tensor_data/t.npy"]]
    assert find_dump_roots(files) == [Path("msp/step0/rank0"), Path("dump")]


def test_msprobe_json_data_name_outside_is_refused(tmp_path):
    d = tmp_path / "step0" / "rank0"
    (d / "dump_tensor_data").mkdir(parents=True)
    rec = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5,
           "Norm": 1.0, "data_name": "../../../x.pt"}
    (d / "dump.json").write_text(json.dumps({"task": "tensor", "data": {"Functional.relu.0.forward": {
        "input_args": [rec], "input_kwargs": {}, "output": [dict(rec, data_name="missing.pt")]}}}))
    dump = read_dump(d)
    assert dump.layout == "msprobe" and dump.mode == "tensor"
    inp, out = dump.records
    assert "outside" in inp.problem and out.problem == "tensor file named in dump.json is missing"
    assert inp.op_type == "relu" and out.stats == {"Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0}


def test_pt_files_are_read_with_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    d = tmp_path / "step0" / "rank0"
    (d / "dump_tensor_data").mkdir(parents=True)
    torch.save(torch.arange(4, dtype=torch.bfloat16), d / "dump_tensor_data" / "ok.pt")

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    (d / "dump_tensor_data" / "evil.pt").write_bytes(pickle.dumps(Evil()))
    rec = {"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [4], "Max": 3.0, "Min": 0.0, "Mean": 1.5, "Norm": 3.74}
    (d / "dump.json").write_text(json.dumps({"task": "tensor", "data": {"Torch.arange.0.forward": {
        "input_args": [dict(rec, data_name="evil.pt")], "output": [dict(rec, data_name="ok.pt")]}}}))
    evil, ok = read_dump(d).records
    bf16 = load_tensor(ok)  # bfloat16: its bit patterns, mapped; float32 (exact) chunk by chunk
    assert isinstance(bf16, BFloat16Bits) and float_chunk(bf16).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert float_chunk(bf16).dtype == np.float32
    with pytest.raises(DumpReadError, match="weights_only"):
        load_tensor(evil)


def test_pt_tensors_are_memory_mapped_not_read_into_memory(tmp_path):
    torch = pytest.importorskip("torch")
    from advisor.read.dumps import _load_pt

    if not Path("/proc/self/status").exists():
        pytest.skip("resident memory is read from /proc (Linux)")
    torch.save(torch.ones(32 << 20), tmp_path / "big.pt")  # 128 MB of float32
    torch.save(torch.ones(32 << 20, dtype=torch.bfloat16), tmp_path / "big_bf16.pt")  # 64 MB

    def rss_mb() -> float:
        with open("/proc/self/status") as fh:
            return int(fh.read().split("VmRSS:")[1].split()[0]) / 1024

    before = rss_mb()
    arr = _load_pt(tmp_path / "big.pt")
    assert arr.shape == (32 << 20,) and float(arr[-5:].sum()) == 5.0
    bf16 = _load_pt(tmp_path / "big_bf16.pt")  # not converted whole: .float() would allocate 128 MB
    assert float(float_chunk(bf16[-5:]).sum()) == 5.0
    assert rss_mb() - before < 32  # a plain torch.load would hold 128 + 64 MB


def test_non_numeric_npy_is_not_compared_and_the_rest_is(tmp_path):
    for side in ("run", "base"):
        d = tmp_path / side
        d.mkdir()
        np.save(d / "0000_fc.forward.output.0.npy", np.arange(10.0))
        np.save(d / "0001_act.forward.output.0.npy", np.array(["a", "b"]))
    comp = compare_dumps(read_dump(tmp_path / "run"), read_dump(tmp_path / "base"), workers=1)
    by = {r.name: r for r in comp.rows}
    assert by["fc.forward.output.0"].verdict == "pass"
    assert by["act.forward.output.0"].verdict == "skipped" and "not numeric (dtype <U1)" in by["act.forward.output.0"].reason
