"""MindSpore graph IR dumps (save_graphs=True) as model descriptions (advisor/read/mindspore_ir.py), and a
MindSpore port's IR compared layer by layer with a PyTorch benchmark's ONNX export.

Fixtures: tests/read/runs/mindspore_ir_*/ (real MindSpore 2.10, tests/read/make/mindspore_ir.py) and
tests/compare/data/onnx_structure/ (real torch ONNX exporter)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder
from advisor.read.mindspore_ir import read_ir
from advisor.read.model_text import parse_module_repr

RUNS = Path(__file__).resolve().parent / "runs"
MAKE = Path(__file__).resolve().parent / "make"
ONNX = Path(__file__).resolve().parents[1] / "compare" / "data" / "onnx_structure"


def _ir(run: str) -> Path:
    (path,) = (RUNS / run / "graphs").glob("*.ir")
    return path


def _ir_only(tmp_path: Path, run: str) -> Path:
    """A copy of the run with its IR file and nothing else (no print(net) to fall back on)."""
    out = tmp_path / run
    (out / "graphs").mkdir(parents=True)
    shutil.copy(_ir(run), out / "graphs" / _ir(run).name)
    return out


def _shape(layers) -> list[tuple]:
    return [(la.role, la.units, la.activation, la.dropout_rate) for la in layers]


@pytest.mark.parametrize("run", ["mindspore_ir_cnn", "mindspore_ir_port"])
def test_the_ir_gives_the_layers_print_net_shows(run: str) -> None:
    printed = parse_module_repr((RUNS / run / "model.txt").read_text(), "model.txt")[0].layers
    assert _shape(read_ir(_ir(run)).layers) == _shape(printed)


def test_a_dense_activation_and_the_dropout_rate_are_read_from_the_graph() -> None:
    layers = read_ir(_ir("mindspore_ir_cnn")).layers
    dense = [la for la in layers if la.role == "dense"]
    assert [(d.units, d.activation) for d in dense] == [(64, "gelu"), (10, None)]
    assert [la.dropout_rate for la in layers if la.role == "dropout"] == [0.25]


def _diff(run: Path, baseline: Path):
    pair = RunPair(run=RunFolder.open(str(run), "run"), baseline=RunFolder.open(str(baseline), "baseline"))
    (diff,) = [f for f in extract_facts(pair).facts if f.kind == "structure_diff"]
    return diff


def test_a_mindspore_port_matches_the_pytorch_benchmark_it_was_ported_from(tmp_path: Path) -> None:
    diff = _diff(_ir_only(tmp_path, "mindspore_ir_cnn"), ONNX / "benchmark_train")
    assert diff.differences == 0, diff.text


def test_a_port_that_lost_a_batchnorm_and_widened_a_dense_is_named_against_the_onnx_benchmark(tmp_path: Path) -> None:
    diff = _diff(_ir_only(tmp_path, "mindspore_ir_port"), ONNX / "benchmark_train")
    assert diff.missing_count == 1 and diff.width_changes == 1
    assert "128 units" in diff.text
    report = diagnose(_ir_only(tmp_path / "again", "mindspore_ir_port"), baseline=ONNX / "benchmark_train")
    assert any(e.rule == "structure-differs-from-baseline" for c in report.causes for e in c.evidence)


def test_of_a_graph_dump_one_ir_file_is_read(tmp_path: Path) -> None:
    run = _ir_only(tmp_path, "mindspore_ir_cnn")
    (run / "graphs" / "00_bootstrap_0000.ir").write_text("# IR entry: @x\n# Total subgraphs: 0\n")
    (run / "graphs" / "24_execute_0129.ir").write_text("# IR entry: @x\n")
    report = diagnose(run)
    used = [i.path for i in report.inputs if i.kind == "model" and i.status == "used"]
    assert used == [f"graphs/{_ir('mindspore_ir_cnn').name}"]
    ignored = {i.path: i.why for i in report.inputs if i.status == "ignored"}
    assert "another pass" in ignored["graphs/00_bootstrap_0000.ir"] and "graphs/24_execute_0129.ir" in ignored


def test_an_ir_file_without_cells_is_named_and_the_diagnosis_goes_on(tmp_path: Path) -> None:
    (tmp_path / "graph.ir").write_bytes(b"\x00\xff not an IR \n" * 10)
    (tmp_path / "train.log").write_text("".join(f"step {i} loss: {2.0 - 0.1 * i:.2f}\n" for i in range(10)))
    report = diagnose(tmp_path)
    (entry,) = [i for i in report.inputs if i.path == "graph.ir"]
    assert entry.status == "unreadable" and "scope" in (entry.why or "")
    assert any(i.path == "train.log" and i.status == "used" for i in report.inputs)


@pytest.mark.skipif(importlib.util.find_spec("mindspore") is None, reason="MindSpore not installed")
def test_the_installed_mindspore_still_writes_what_the_fixtures_hold(tmp_path: Path) -> None:
    sys.path.insert(0, str(MAKE))
    try:
        import mindspore_ir as make
    finally:
        sys.path.remove(str(MAKE))
    make.main(str(tmp_path))
    for run in ("mindspore_ir_cnn", "mindspore_ir_port"):
        (fresh,) = (tmp_path / run / "graphs").glob("*.ir")
        assert _shape(read_ir(fresh).layers) == _shape(read_ir(_ir(run)).layers)
