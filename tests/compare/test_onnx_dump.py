"""A PyTorch benchmark against its ONNX export (issue 27): the export's node outputs, dumped with
``advisor.capture.onnx_dump``, match the PyTorch capture module by module, a LayerNorm the exporter split
into nine nodes included, and an epsilon error inside the split LayerNorm is named at that module.

The fixtures in data/onnx_port were written by the real tools (generate.py there); the last test re-makes
them with torch, onnx and onnxruntime where those are installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from advisor.capture.onnx_dump import tensor_names
from advisor.cli import main

DATA = Path(__file__).parent / "data" / "onnx_port"


def _compare(capsys, run: Path, base: Path, *extra: str, code: int = 0) -> str:
    """advisor compare's stdout; its exit code is 1 when an operator deviates."""
    got = main(["compare", str(run), str(base), *extra])
    out = capsys.readouterr().out
    assert got == code, out
    return out


def test_onnx_export_matches_the_pytorch_benchmark(capsys):
    out = _compare(capsys, DATA / "onnx", DATA / "torch")
    assert "0 error, 0 warning, 4 pass" in out
    assert "no operator deviates beyond tolerance" in out


def test_split_layernorm_with_an_eps_error_is_named(capsys, tmp_path):
    out = _compare(capsys, DATA / "onnx_eps", DATA / "torch", "-o", str(tmp_path / "t.json"), code=1)
    table = json.loads((tmp_path / "t.json").read_text())
    assert table["source"] == "2.forward", out
    rows = {r["name"]: r for r in table["rows"]}
    assert rows["1.forward.output.0"]["verdict"] == "pass"  # GELU, split into Div/Erf/Add/Mul/Mul: still equal
    assert rows["2.forward.output.0"]["verdict"] == "error"
    assert rows["2.forward.output.0"]["baseline_name"] == "2.forward.output.0"  # matched by module name


def test_nodes_named_by_module_scope():
    nodes = [SimpleNamespace(name=n, op_type=t, output=["o"]) for n, t in
             [("/enc/fc1/Gemm", "Gemm"), ("/enc/act/Div", "Div"), ("/enc/act/Constant", "Constant"),
              ("/enc/act/Mul", "Mul"), ("/enc/act/Constant_1", "Constant"), ("Gemm_7", "Gemm")]]
    names = tensor_names(nodes)  # type: ignore[arg-type]
    assert names[0] == ["enc.fc1.forward.output.0"]
    assert names[1] == ["enc.act/Div.forward.output.0"]
    assert names[3] == ["enc.act.forward.output.0"]  # the group's last computing node: the module's output
    assert names[5] == ["Gemm_7.forward.output.0"]


def test_dump_made_with_the_real_tools(capsys, tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("torch")
    import importlib.util

    spec = importlib.util.spec_from_file_location("onnx_port_generate", DATA / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    copy = tmp_path / "onnx_port"
    shutil.copytree(DATA, copy, ignore=shutil.ignore_patterns("torch", "onnx", "onnx_eps"))
    gen.HERE = copy
    gen.main()
    assert "4 pass" in _compare(capsys, copy / "onnx", copy / "torch")
    out = _compare(capsys, copy / "onnx_eps", copy / "torch", code=1)
    assert "source operator: 2.forward" in out
    with pytest.raises(ValueError, match="missing"):
        from advisor.capture.onnx_dump import dump_onnx

        dump_onnx(copy / "model.onnx", {}, tmp_path / "new")
