"""TensorFlow tfdbg2 dumps (``enable_dump_debug_info(..., tensor_debug_mode="FULL_TENSOR")``) read without
TensorFlow: a Keras re-implementation of a PyTorch benchmark, dumped by TensorFlow 2.21 (data/tf_port/generate.py),
matches it module by module, and a LayerNorm epsilon or a GELU approximation that the port got wrong is named at
its module, though TensorFlow computes both as several kernels."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from advisor.cli import main
from advisor.diagnosis import diagnose
from advisor.read.dumps import DumpReadError, find_dump_roots, load_tensor, read_dump
from advisor.read.dumps_tfdbg import _module_paths

DATA = Path(__file__).parent / "data" / "tf_port"


def _compare(capsys, run: Path, base: Path, tmp_path: Path, code: int) -> dict:
    got = main(["compare", str(run), str(base), "-o", str(tmp_path / "t.json")])
    out = capsys.readouterr().out
    assert got == code, out
    return json.loads((tmp_path / "t.json").read_text())


def test_the_dump_reads_kernels_and_modules_in_execution_order() -> None:
    dump = read_dump(DATA / "tf")
    assert dump.layout == "tfdbg" and dump.framework == "tensorflow" and not dump.problems
    names = [r.name for r in dump.records]
    graph = names[names.index("fc1.MatMul.forward.output.0") :]
    assert graph[:3] == ["fc1.MatMul.forward.output.0", "fc1.BiasAdd.forward.output.0", "fc1.forward.output.0"]
    assert "act.Gelu.Erfc.forward.output.0" in graph and "norm.moments.mean.forward.output.0" in graph
    assert graph.index("act.forward.output.0") < graph.index("norm.forward.output.0") < graph.index("fc2.forward.output.0")
    types = {r.name: r.op_type for r in dump.records}
    assert types["fc1.MatMul.forward.output.0"] == "MatMul" and types["fc1.forward.output.0"] is None
    assert not any("ReadVariableOp" in n or n.startswith("sequential") for n in names)


def test_tensor_values_equal_the_pytorch_benchmark_module_by_module() -> None:
    tf_dump, torch_dump = read_dump(DATA / "tf"), read_dump(DATA / "torch")
    tf_by, torch_by = {r.name: r for r in tf_dump.records}, {r.name: r for r in torch_dump.records}
    for module in ("fc1", "act", "norm", "fc2"):
        name = f"{module}.forward.output.0"
        a, b = load_tensor(tf_by[name]), load_tensor(torch_by[name])
        assert a.dtype == np.float32 and a.shape == b.shape == tf_by[name].shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_the_port_matches_its_benchmark(capsys, tmp_path) -> None:
    table = _compare(capsys, DATA / "tf", DATA / "torch", tmp_path, code=0)
    assert table["source"] is None


@pytest.mark.parametrize(("run", "module"), [("tf_eps", "norm.forward"), ("tf_gelu", "act.forward")])
def test_a_port_error_inside_a_split_operator_is_named_at_its_module(capsys, tmp_path, run, module) -> None:
    table = _compare(capsys, DATA / run, DATA / "torch", tmp_path, code=1)
    assert table["source"] == module
    rows = {r["name"]: r for r in table["rows"]}
    assert rows["fc1.forward.output.0"]["verdict"] == "pass"
    assert rows[f"{module}.output.0"]["verdict"] == "error"


def test_diagnose_finds_the_dump_below_the_run_and_names_the_operator(tmp_path) -> None:
    shutil.copytree(DATA / "tf_eps", tmp_path / "run" / "tfdbg")
    shutil.copytree(DATA / "torch", tmp_path / "base" / "dump")
    assert find_dump_roots([Path("tfdbg") / p.name for p in (DATA / "tf_eps").iterdir()]) == [Path("tfdbg")]
    report = diagnose(tmp_path / "run", baseline=tmp_path / "base")
    top = report.causes[0]
    assert top.id == "operator_accuracy" and top.confidence >= 0.5
    assert "norm.forward" in top.evidence[0].text


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["sequential_1/fc1_1/MatMul", "sequential_1/act_1/Gelu/mul"], [["fc1"], ["act", "Gelu"]]),
        (["model/block_1/MatMul", "model/block_2/MatMul"], [["block_1"], ["block_2"]]),  # counters differ: names
        (["fc1/MatMul", "act/Relu"], [["fc1"], ["act"]]),  # two top scopes: none is the model's
        (["net/MatMul"], [[]]),
    ],
)
def test_module_paths(names, expected) -> None:
    got = _module_paths(names)
    assert [got[n] for n in names] == expected


def test_a_cut_file_is_an_error_that_names_it(tmp_path) -> None:
    shutil.copytree(DATA / "tf", tmp_path / "tf")
    (traces,) = (tmp_path / "tf").glob("*.graph_execution_traces")
    data = traces.read_bytes()
    traces.write_bytes(data[: len(data) - 100])
    with pytest.raises(DumpReadError, match="graph_execution_traces.*truncated"):
        read_dump(tmp_path / "tf")


def test_tensorflow_writes_what_the_reader_reads(tmp_path) -> None:
    """Re-makes a dump with TensorFlow where it is installed: a plain tf.function in FULL_TENSOR mode, and the
    same in CURT_HEALTH mode, which records no values."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("TensorFlow is not installed")
    script = (
        "import os, sys\n"
        "os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
        "import numpy as np, tensorflow as tf\n"
        "w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)\n"
        "@tf.function\n"
        "def f(x):\n"
        "    with tf.name_scope('fc'):\n"
        "        y = tf.matmul(x, w)\n"
        "    with tf.name_scope('act'):\n"
        "        return tf.nn.relu(y - 1.0)\n"
        "tf.debugging.experimental.enable_dump_debug_info(sys.argv[1], tensor_debug_mode=sys.argv[2])\n"
        "f(tf.ones((2, 4)))\n"
        "tf.debugging.experimental.disable_dump_debug_info()\n"
    )
    for mode in ("FULL_TENSOR", "CURT_HEALTH"):
        subprocess.run([sys.executable, "-c", script, str(tmp_path / mode), mode], check=True, timeout=300)
    dump = read_dump(tmp_path / "FULL_TENSOR")
    by = {r.name: r for r in dump.records}
    x = np.ones((2, 4), np.float32) @ (np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    np.testing.assert_allclose(load_tensor(by["fc.MatMul.forward.output.0"]), x, rtol=1e-6)
    np.testing.assert_allclose(load_tensor(by["act.forward.output.0"]), np.maximum(x - 1, 0), rtol=1e-6)
    with pytest.raises(DumpReadError, match="FULL_TENSOR"):
        read_dump(tmp_path / "CURT_HEALTH")
