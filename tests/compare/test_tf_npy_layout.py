"""MindStudio's .npy naming for TensorFlow (and Caffe) benchmarks: ``{op_name}.{output_index}.{timestamp}.npy``
(the tensor ``bn/FusedBatchNormV3:0`` saved as ``bn_FusedBatchNormV3.0.1626144000000123.npy``, as the Ascend
accuracy-comparison guide's tfdbg recipe names it). The timestamps give the execution order, which the file
names do not: sorted by name, the first deviating operator would be the wrong one."""

from __future__ import annotations

import json

import numpy as np

from advisor.cli import main
from advisor.read.dumps import read_dump

T0 = 1_626_144_000_000_000  # 16 digits, microseconds
OPS = ["conv1_Conv2D", "bn_FusedBatchNormV3", "act_Relu", "dense_MatMul"]  # execution order; names sort otherwise


def _dump(folder, spoil: bool, repeat: bool = False):
    folder.mkdir()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    conv = x * 0.5
    bn = conv * 2.0 + (0.3 if spoil else 0.0)
    act = np.maximum(bn, 0)
    dense = act @ w
    for i, (op, value) in enumerate(zip(OPS, (conv, bn, act, dense))):
        np.save(folder / f"{op}.0.{T0 + 10 * i}.npy", value)
        if repeat:  # the same tensor at a later iteration
            np.save(folder / f"{op}.0.{T0 + 1000 + 10 * i}.npy", value + 1)


def test_timestamps_give_the_order_and_names_the_tensor(tmp_path):
    _dump(tmp_path / "tf", spoil=False)
    dump = read_dump(tmp_path / "tf")
    assert [r.name for r in dump.records] == [f"{op}.output.0" for op in OPS]
    assert sorted(p.name for p in (tmp_path / "tf").iterdir())[0].startswith("act_Relu")  # name order differs


def test_first_deviating_operator_found_in_execution_order(tmp_path, capsys):
    _dump(tmp_path / "run", spoil=True)
    _dump(tmp_path / "base", spoil=False)
    code = main(["compare", str(tmp_path / "run"), str(tmp_path / "base"), "-o", str(tmp_path / "t.json")])
    assert code == 1, capsys.readouterr()
    table = json.loads((tmp_path / "t.json").read_text())
    assert table["source"] == "bn_FusedBatchNormV3"
    assert set(table["propagated"]) == {"act_Relu", "dense_MatMul"}
    assert {r["name"]: r["verdict"] for r in table["rows"]}["conv1_Conv2D.output.0"] == "pass"


def test_a_tensor_dumped_at_several_iterations_is_compared_at_its_first(tmp_path, capsys):
    _dump(tmp_path / "run", spoil=False, repeat=True)
    _dump(tmp_path / "base", spoil=False)
    dump = read_dump(tmp_path / "run")
    assert len(dump.records) == 4 and all(str(T0 + 1000) not in r.rel_file for r in dump.records)
    assert any("4 later dump(s)" in why for _, why in dump.problems)
    code = main(["compare", str(tmp_path / "run"), str(tmp_path / "base")])
    out = capsys.readouterr().out
    assert code == 0 and "4 pass" in out, out


def test_other_names_keep_the_plain_reading(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    np.save(folder / "fc.0.1626144000000000.npy", np.ones(2, np.float32))
    np.save(folder / "0001_head.forward.output.0.npy", np.ones(2, np.float32))  # not the timestamped naming
    names = [r.name for r in read_dump(folder).records]
    assert "head.forward.output.0" in names and "fc.0.1626144000000000" in names
