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


# a Caffe deploy.prototxt as Caffe's text format writes it: layer blocks with nested parameter blocks, comments,
# a V1-style 'layers' block with an enum type, and a layer whose name holds '/', as GoogLeNet's do
PROTOTXT = """name: "Net"
input: "data"
layer {
  name: "conv1/7x7_s2"  # the file name spells it conv1_7x7_s2
  type: "Convolution"
  bottom: "data"
  top: "conv1/7x7_s2"
  convolution_param { num_output: 8 kernel_size: 7 stride: 2 weight_filler { type: "xavier" } }
}
layer { name: "bn" type: "BatchNorm" bottom: "conv1/7x7_s2" top: "bn" }
layers { name: "relu" type: RELU bottom: "bn" top: "bn" }
layer { name: "fc" type: "InnerProduct" bottom: "bn" top: "fc" inner_product_param { num_output: 3 } }
"""


def test_a_caffe_prototxt_beside_the_dump_gives_each_layer_its_type(tmp_path):
    folder = tmp_path / "caffe"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i, op in enumerate(["conv1_7x7_s2", "bn", "relu", "fc"]):
        np.save(folder / f"{op}.0.{T0 + 10 * i}.npy", rng.standard_normal((2, 3)).astype(np.float32))
    (folder / "deploy.prototxt").write_text(PROTOTXT, encoding="utf-8")
    dump = read_dump(folder)
    assert [(r.op, r.op_type) for r in dump.records] == [
        ("conv1_7x7_s2", "Convolution"),
        ("bn", "BatchNorm"),
        ("relu", "RELU"),
        ("fc", "InnerProduct"),
    ]
    assert dump.framework == "caffe"
    (folder / "deploy.prototxt").unlink()
    assert {r.op_type for r in read_dump(folder).records} == {None}  # without it: no types, as before


def test_a_prototxt_link_out_of_the_dump_is_not_read(tmp_path):
    outside = tmp_path / "elsewhere.prototxt"
    outside.write_text(PROTOTXT, encoding="utf-8")
    folder = tmp_path / "caffe"
    folder.mkdir()
    np.save(folder / f"fc.0.{T0}.npy", np.ones(3, dtype=np.float32))
    (folder / "deploy.prototxt").symlink_to(outside)
    assert [r.op_type for r in read_dump(folder).records] == [None]
