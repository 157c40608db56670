"""ONNX model files as model descriptions (advisor/read/onnx_graph.py), compared with the other side's layers.

Fixtures: tests/compare/data/onnx_structure/, written by torch's ONNX exporter (generate.py there)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder
from advisor.read.onnx_graph import OnnxError, describe, read_graph

DATA = Path(__file__).resolve().parents[1] / "compare" / "data" / "onnx_structure"


def _facts(run: Path, baseline: Path | None = None) -> list:
    pair = RunPair(run=RunFolder.open(str(run), "run"), baseline=RunFolder.open(str(baseline), "baseline") if baseline else None)
    return extract_facts(pair).facts


def _diff(run: Path, baseline: Path):
    (diff,) = [f for f in _facts(run, baseline) if f.kind == "structure_diff"]
    return diff


def test_an_eval_export_reads_as_the_modules_it_came_from() -> None:
    layers = describe(read_graph(DATA / "benchmark" / "model.onnx")).layers
    assert [(la.role, la.units, la.activation) for la in layers] == [
        ("conv", 8, None),
        ("activation", None, "relu"),
        ("pool", None, None),
        ("conv", 16, None),  # the BatchNorm after it was folded into it by constant folding
        ("activation", None, "relu"),
        ("reshape", None, None),
        ("dense", 64, None),
        ("activation", None, "gelu"),  # Div, Erf, Add, Mul, Mul
        ("norm", None, None),  # ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add
        ("dense", 10, None),
    ]


def test_a_training_export_keeps_dropout_with_its_ratio_and_the_batchnorm() -> None:
    layers = describe(read_graph(DATA / "benchmark_train" / "model.onnx")).layers
    assert ("dropout", 0.25) in [(la.role, la.dropout_rate) for la in layers]
    assert "BatchNormalization" in [la.layer_type for la in layers]


def test_print_model_of_the_same_net_matches_its_inference_graph() -> None:
    diff = _diff(DATA / "same", DATA / "benchmark")
    assert diff.differences == 0, diff.text


def test_a_port_that_widened_a_layer_and_lost_its_batchnorm_is_named() -> None:
    diff = _diff(DATA / "port", DATA / "benchmark_train")
    assert diff.width_changes == 1 and "128 units" in diff.text and "64" in diff.text
    assert diff.missing_count == 1 and "norm" in diff.text


def test_an_inference_graph_does_not_claim_a_batchnorm_it_folded_away() -> None:
    diff = _diff(DATA / "port", DATA / "benchmark")
    assert diff.width_changes == 1 and diff.missing_count == 0


def test_diagnose_names_the_structure_difference_against_an_onnx_benchmark() -> None:
    report = diagnose(DATA / "port", baseline=DATA / "benchmark_train")
    hp = next(c for c in report.causes if c.id == "hparam_mismatch")
    assert any(e.rule == "structure-differs-from-baseline" and "128 units" in e.text for e in hp.evidence)
    assert any(i.path == "model.onnx" and i.side == "baseline" and i.status == "used" for i in report.inputs)


@pytest.mark.parametrize("content", [b"", b"not a protobuf \xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", None])
def test_a_broken_onnx_file_is_named_and_the_diagnosis_goes_on(tmp_path: Path, content: bytes | None) -> None:
    run = tmp_path / "run"
    run.mkdir()
    raw = (DATA / "benchmark" / "model.onnx").read_bytes()
    (run / "model.onnx").write_bytes(raw[: len(raw) // 2] if content is None else content)
    (run / "train.log").write_text("".join(f"step {i} loss: {2.0 - 0.1 * i:.2f}\n" for i in range(10)))
    report = diagnose(run)
    (entry,) = [i for i in report.inputs if i.path == "model.onnx"]
    assert entry.status == "unreadable" and entry.why
    assert any(i.path == "train.log" and i.status == "used" for i in report.inputs)


def test_a_file_that_is_not_onnx_raises_a_named_error(tmp_path: Path) -> None:
    (tmp_path / "x.onnx").write_bytes(b"\x0a\x03abc")  # a well-formed message with no graph
    with pytest.raises(OnnxError, match="no graph"):
        read_graph(tmp_path / "x.onnx")


@pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="onnx not installed")
def test_every_node_the_onnx_library_reads_is_read() -> None:
    import onnx

    for folder in ("benchmark", "benchmark_train"):
        model = onnx.load(str(DATA / folder / "model.onnx"))
        graph = read_graph(DATA / folder / "model.onnx")
        assert [(n.name, n.op_type) for n in graph.nodes] == [(n.name, n.op_type) for n in model.graph.node]
        assert graph.dims == {t.name: list(t.dims) for t in model.graph.initializer}


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("onnx") is None, reason="torch/onnx not installed"
)
def test_the_installed_exporter_still_writes_what_the_fixtures_hold(tmp_path: Path) -> None:
    import sys

    shutil.copy(DATA / "generate.py", tmp_path / "generate.py")
    sys.path.insert(0, str(tmp_path))
    try:
        import generate  # the copy writes next to itself
    finally:
        sys.path.remove(str(tmp_path))
    generate.main()
    for folder in ("benchmark", "benchmark_train"):
        fresh = describe(read_graph(tmp_path / folder / "model.onnx")).layers
        kept = describe(read_graph(DATA / folder / "model.onnx")).layers
        assert [(la.role, la.units, la.dropout_rate) for la in fresh] == [(la.role, la.units, la.dropout_rate) for la in kept]
