"""Text readers in linear time and bounded memory (issue #50, round 4): a Caffe prototxt of unclosed or nested
blocks, a MindSpore IR line built for a backtracking regex, sparse files of a terabyte (.ir, tensors.jsonl,
metrics.csv, a data sample) that are NUL bytes, and a msprobe dump of more operator calls than advisor compares."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from advisor.read import dumps_msprobe
from advisor.read.dumps import caffe_layer_types, prototxt_layers, read_dump
from advisor.read.mindspore_ir import read_ir
from tests.hostile.conftest import diagnose_json, inputs_by_path, ran, sparse as _sparse, timed as _timed

IR_FIXTURE = Path(__file__).resolve().parents[1] / "read" / "runs" / "mindspore_ir_cnn" / "graphs"


# -- Caffe prototxt ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["layer {\n" * 3000, "layer { " * 3000 + "}" * 3000], ids=["unclosed", "nested"])
def test_a_prototxt_of_thousands_of_open_layer_blocks_is_scanned_once(tmp_path: Path, text: str) -> None:
    (tmp_path / "deploy.prototxt").write_text(text)
    got, seconds = _timed(lambda: caffe_layer_types(tmp_path))
    assert got == {} and seconds < 1  # was 5 s for these 24 KB, 74 s for 64 KB (each block scanned to the end)


def test_the_scanner_reads_each_layer_s_own_name_and_type() -> None:
    text = (
        'name: "net"\n# layer { name: "commented" type: "Gone" }\n'
        'layer {\n  name: "conv1/7x7_s2"  # its own\n  type: "Convolution"\n'
        '  convolution_param { name: "not_a_layer" type: "xavier" }\n}\n'
        'layers { type: ReLU name: \'relu1\' layer { name: "inner" type: "Pooling" }\n'  # nested, then unclosed
    )
    assert prototxt_layers(text) == [
        {"name": "conv1/7x7_s2", "type": "Convolution"},
        {"type": "ReLU", "name": "relu1"},
        {"name": "inner", "type": "Pooling"},
    ]


def test_blocks_nested_beyond_the_depth_limit_are_skipped() -> None:
    text = "layer { name: 'a' type: 'B' " + "{" * 10_000 + " name: 'deep' " + "}" * 10_000 + "}"
    assert prototxt_layers(text) == [{"name": "a", "type": "B"}]


# -- MindSpore IR --------------------------------------------------------------------------------------------------
def test_an_ir_shape_line_built_for_backtracking_is_read_in_linear_time(tmp_path: Path) -> None:
    path = tmp_path / "a_validate_0001.ir"
    path.write_text("    : (" + ") -> (" * 10_000 + "\n")  # no closing ')': a backtracking regex tried every split
    desc, seconds = _timed(lambda: read_ir(path))
    assert desc.layers == [] and seconds < 1  # was 5 s here, quadratic in the line's length


def test_a_sparse_terabyte_ir_file_ends_at_its_nul_bytes(tmp_path: Path) -> None:
    notes: list[str] = []
    desc, seconds = _timed(lambda: read_ir(_sparse(tmp_path / "b_validate_0002.ir"), notes=notes))
    assert desc.layers == [] and seconds < 2  # was one line of a terabyte: MemoryError at 3.8 GB
    assert notes == ["only NUL bytes from line 1 on (a sparse or preallocated file); the rest of the file was not read"]


def test_the_last_validate_pass_that_holds_the_graph_is_read(tmp_path: Path, cli) -> None:
    graphs = tmp_path / "run" / "graphs"
    graphs.mkdir(parents=True)
    (real,) = IR_FIXTURE.glob("*validate*.ir")
    shutil.copy(real, graphs / real.name)
    (graphs / "98_validate_0098.ir").write_text("# IR entry: @x\n# Total subgraphs: 0\n")  # a pass without nodes
    (graphs / "99_validate_0099.ir").write_bytes(b"")  # the last pass, empty
    report = diagnose_json(cli, tmp_path / "run")
    got = inputs_by_path(report)
    assert got[f"graphs/{real.name}"]["status"] == "used"
    assert got["graphs/99_validate_0099.ir"]["status"] == "ignored"


def test_a_sparse_ir_file_is_named_with_the_reason_and_the_diagnosis_goes_on(run_dir: Path, cli) -> None:
    _sparse(run_dir / "graphs" / "21_validate_0076.ir")
    report = diagnose_json(cli, run_dir)
    entry = inputs_by_path(report)["graphs/21_validate_0076.ir"]
    assert entry["status"] == "unreadable" and "only NUL bytes from line 1" in entry["why"]
    assert "loss_curve" in ran(report)


# -- sparse text files in a run --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "rel,why",
    [
        ("tensors.jsonl", "only NUL bytes from line 1 on"),
        ("metrics.csv", "only NUL bytes at its start"),
        ("data/train.csv", "only NUL bytes at its start"),
    ],
)
def test_a_sparse_terabyte_file_of_nul_bytes_ends_at_once_with_a_note(run_dir: Path, cli, rel: str, why: str) -> None:
    if (run_dir / rel).exists():
        (run_dir / rel).unlink()
    _sparse(run_dir / rel)
    report, seconds = _timed(lambda: diagnose_json(cli, run_dir))
    assert seconds < 10  # each hung: the reader went through the terabyte looking for a line's end
    entry = inputs_by_path(report)[rel]
    assert entry["status"] == "unreadable" and why in entry["why"]
    assert "loss_curve" in ran(report)


def test_records_before_a_sparse_tail_are_read_and_the_tail_is_noted(run_dir: Path, cli) -> None:
    path = run_dir / "tensors.jsonl"
    good = path.read_bytes()
    _sparse(path, good if good.endswith(b"\n") else good + b"\n")
    lines = good.count(b"\n") + (not good.endswith(b"\n"))
    report, seconds = _timed(lambda: diagnose_json(cli, run_dir))
    entry = inputs_by_path(report)["tensors.jsonl"]
    assert seconds < 10 and entry["status"] == "used"
    assert f"only NUL bytes from line {lines + 1} on" in entry["why"]


@pytest.mark.parametrize("name,nul_line", [("metrics.csv", 52), ("metrics.jsonl", 51)])
def test_a_metrics_file_with_a_sparse_tail_keeps_its_rows(run_dir: Path, cli, name: str, nul_line: int) -> None:
    if name.endswith(".csv"):
        head = "step,epoch,train_loss\n" + "".join(f"{s},0,{1 / s:.4f}\n" for s in range(1, 51))
    else:
        head = "".join(json.dumps({"step": s, "loss": 1 / s}) + "\n" for s in range(1, 51))
    _sparse(run_dir / name, head.encode())
    report, seconds = _timed(lambda: diagnose_json(cli, run_dir))
    entry = inputs_by_path(report)[name]
    assert seconds < 10 and entry["status"] == "used"  # was 11 s (csv) and 15 s (jsonl): 4 GiB of NULs read
    assert f"only NUL bytes from line {nul_line} on" in (entry["why"] or "")


# -- a dump of many operator calls -----------------------------------------------------------------------------------
def _msprobe(root: Path, calls: int) -> Path:
    t = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 1.0, "Min": 0.0, "Mean": 0.5}
    data = {f"Functional.relu.{i}.forward": {"input_args": [t], "output": [t]} for i in range(calls)}
    root.mkdir(parents=True)
    (root / "dump.json").write_text(json.dumps({"data": data, "task": "statistics", "framework": "pytorch"}))
    return root


def test_a_dump_of_more_operator_calls_than_the_limit_is_cut_with_a_note(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(dumps_msprobe, "MAX_DUMP_CALLS", 10)
    dump = read_dump(_msprobe(tmp_path / "dump", 30))
    assert len(dump.ops()) == 10 and len(dump.records) == 20 and dump.framework == "pytorch"  # task after data
    ((file, why),) = dump.problems
    assert file == "dump.json" and why.startswith("more than 10 operator calls (advisor's limit per dump)")


def test_a_dump_under_the_limit_is_read_whole(tmp_path: Path) -> None:
    dump = read_dump(_msprobe(tmp_path / "dump", 30))
    assert len(dump.ops()) == 30 and not dump.problems
