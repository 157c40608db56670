"""Binary readers bounded (issue #50, round 4): TFRecord-framed files (MindSpore summaries and lineage, TensorBoard
events, tfdbg2 dumps) and ONNX models. Every length is checked against what is left in the file, every decoding
error is a reason naming the file (the rest of the diagnosis goes on), the zeros of a sparse file stop after a run
of empty records, and a long record is mapped, never read into memory."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.inventory import RunFolder
from advisor.read import mindinsight, onnx_graph
from advisor.read.dumps import DumpReadError, read_dump
from advisor.read.logs import read_file
from advisor.read.logs.tensorboard import available as tensorboard_available
from advisor.read.mindinsight import lineage_settings, read_summary
from advisor.read.run import read_run
from tests.hostile.conftest import HEALTHY, diagnose_json, inputs_by_path, ran, sparse as _sparse, timed as _timed

SUMMARY = "events.out.events.summary.1700000000.0.host_MS"
HUGE_LENGTHS = [(1 << 64) - 1, 1 << 62, 100 << 20]


def _varint(value: int) -> bytes:
    out = b""
    while True:
        low, value = value & 0x7F, value >> 7
        if not value:
            return out + bytes([low])
        out += bytes([low | 0x80])


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protocol-buffer field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _frame(data: bytes, length: int | None = None) -> bytes:
    """A TFRecord: length, its checksum, the data, the data's checksum (checksums are not verified)."""
    return struct.pack("<Q", len(data) if length is None else length) + bytes(4) + data + bytes(4)


def _scalar_event(step: int, loss: float) -> bytes:
    value = _field(1, b"loss") + b"\x1d" + struct.pack("<f", loss)  # tag, scalar_value (fixed32)
    return b"\x10" + _varint(step) + _field(5, _field(1, value))


# -- MindSpore summaries ---------------------------------------------------------------------------------------
def test_a_sparse_summary_file_stops_after_a_run_of_empty_records(tmp_path: Path) -> None:
    (read, hists), seconds = _timed(lambda: read_summary(_sparse(tmp_path / SUMMARY), SUMMARY))
    assert seconds < 5 and not hists
    assert read.problem is not None and "empty records in a row from record 1" in read.problem


@pytest.mark.parametrize("length", HUGE_LENGTHS, ids=["2^64-1", "2^62", "past-the-end"])
def test_a_summary_record_announcing_more_than_the_file_is_a_note_after_the_records_read(
    tmp_path: Path, length: int
) -> None:
    path = tmp_path / SUMMARY
    path.write_bytes(b"".join(_frame(_scalar_event(s, 1.0 / s)) for s in range(1, 4)) + _frame(b"", length) + b"x")
    read, _ = read_summary(path, SUMMARY)
    assert read.problem is None and list(read.series["train/loss"].buf.step) == [1.0, 2.0, 3.0]
    (note,) = read.notes
    assert note.startswith(f"record 4 announces {length:,} bytes") and "left in the file" in note


def test_a_summary_of_millions_of_empty_fields_stops_at_the_field_budget(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(mindinsight, "MAX_FIELDS", 1000)
    path = tmp_path / SUMMARY
    path.write_bytes(_frame(_scalar_event(1, 0.5)) + _frame(b"\x10\x01" * 5000))
    read, _ = read_summary(path, SUMMARY)
    assert read.problem is None and "train/loss" in read.series
    assert "more than 1,000 protocol-buffer fields" in read.notes[0] and "record 2" in read.notes[0]


def test_a_lineage_cut_by_a_bad_record_keeps_the_settings_read_before_it() -> None:
    hyper = _field(6, _field(1, b"\x15" + struct.pack("<f", 0.5)))  # train_lineage.hyper_parameters.learning_rate
    notes: list[str] = []
    got = lineage_settings(_frame(hyper) + _frame(b"", (1 << 64) - 1), notes)
    assert got == {"learning_rate": 0.5}
    assert notes and "record 2 announces" in notes[0]


@pytest.mark.parametrize("length", [(1 << 64) - 1, 1 << 62], ids=["2^64-1", "2^62"])
def test_a_broken_summary_is_named_and_the_diagnosis_goes_on(run_dir: Path, cli, length: int) -> None:
    (run_dir / "summary").mkdir()
    (run_dir / "summary" / SUMMARY).write_bytes(_frame(b"", length))
    report = diagnose_json(cli, run_dir)
    entry = inputs_by_path(report)[f"summary/{SUMMARY}"]
    assert entry["status"] == "unreadable" and f"record 1 announces {length:,} bytes" in entry["why"]
    assert "loss_curve" in ran(report) and inputs_by_path(report)["train.log"]["status"] == "used"


# -- TensorBoard event files -------------------------------------------------------------------------------------
@pytest.mark.skipif(not tensorboard_available(), reason="tensorboard is not installed")
@pytest.mark.parametrize(
    "head,why",
    [(b"", "empty records in a row"), (_frame(b"", (1 << 64) - 1)[:12], "announces")],
    ids=["zeros", "2^64-1"],
)
def test_a_sparse_or_overlong_event_file_ends_at_once_with_the_reason(tmp_path: Path, head: bytes, why: str) -> None:
    path = _sparse(tmp_path / "events.out.tfevents.1700000000.host.1.0", head)
    read, seconds = _timed(lambda: read_file(path, path.name))
    assert seconds < 5 and read.problem is not None and why in read.problem


# -- tfdbg2 dumps --------------------------------------------------------------------------------------------------
TRACES = "tfdbg_events.1700000000.host.graph_execution_traces"


@pytest.mark.parametrize(
    "data,why",
    [
        (_frame(b"", (1 << 64) - 1), "record 1 announces 18,446,744,073,709,551,615 bytes"),
        (_frame(b"", 1 << 62), "record 1 announces 4,611,686,018,427,387,904 bytes"),
        (_frame(b"\x00\x01 not a protocol buffer"), "record 1 is not a DebugEvent (field number 0)"),
    ],
    ids=["2^64-1", "2^62", "not-protobuf"],
)
def test_a_broken_tfdbg_file_makes_the_dump_unreadable_naming_it(tmp_path: Path, data: bytes, why: str) -> None:
    root = tmp_path / "run" / "dump"
    root.mkdir(parents=True)
    (root / TRACES).write_bytes(data)
    with pytest.raises(DumpReadError) as err:
        read_dump(root)
    assert str(err.value).startswith(f"{TRACES}: {why}")
    (got,) = read_run(RunFolder.open(str(tmp_path / "run"))).dumps  # the reader of the run says why, never raises
    assert got.dump is None and got.problem == str(err.value)


def _trace_head(record_bytes: int) -> bytes:
    """The first bytes of a DebugEvent of ``record_bytes`` whose trace's FULL_TENSOR value is a float32 vector; the
    rest of the record is its tensor_content (zeros: the hole of a sparse file)."""
    trace_head = _field(2, b"fc1/MatMul") + b"\x20\x07"  # op_name, tensor_debug_mode FULL_TENSOR

    def sizes(content: int) -> tuple[bytes, int, int]:
        tensor_head = b"\x08\x01" + _field(2, _field(2, b"\x08" + _varint(content // 4)))  # DT_FLOAT, shape
        tensor = len(tensor_head) + 1 + len(_varint(content)) + content
        trace = len(trace_head) + 1 + len(_varint(tensor)) + tensor
        return tensor_head, tensor, trace

    content = record_bytes - 64
    while 1 + len(_varint(sizes(content)[2])) + sizes(content)[2] < record_bytes:
        content += 4
    tensor_head, tensor, trace = sizes(content)
    assert 1 + len(_varint(trace)) + trace == record_bytes
    return b"\x52" + _varint(trace) + trace_head + b"\x2a" + _varint(tensor) + tensor_head + b"\x22" + _varint(content)


def test_a_two_gigabyte_tfdbg_record_is_mapped_not_read(tmp_path: Path) -> None:
    record = (1 << 31) - 4  # under 2^31, a multiple of 4 for the float32 content
    root = tmp_path / "dump"
    root.mkdir()
    head = struct.pack("<Q", record) + bytes(4) + _trace_head(record)
    _sparse(root / TRACES, head, 12 + record + 4)
    code = (
        "import json, re, sys; from pathlib import Path; from advisor.read.dumps import read_dump, load_tensor; "
        "d = read_dump(Path(sys.argv[1])); t = load_tensor(d.records[0]); "
        "hwm = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); "
        "print(json.dumps({'names': [r.name for r in d.records], 'shape': list(t.shape), 'rss_mb': hwm // 1024}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root)], cwd=HEALTHY.parents[1], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    # one scope, the model's: dropped from the name
    assert got["names"][0] == "MatMul.forward.output.0" and got["shape"][0] * 4 > 2_000_000_000
    assert got["rss_mb"] < 400  # was 2 GB: the record was read whole while the dump was indexed


# -- ONNX -------------------------------------------------------------------------------------------------------------
def test_millions_of_empty_onnx_initializers_stop_at_the_field_budget(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(onnx_graph, "MAX_FIELDS", 10_000)
    graph = _field(1, _field(4, b"Relu")) + b"\x2a\x00" * 50_000  # one node, 50,000 empty initializers
    path = tmp_path / "model.onnx"
    path.write_bytes(_field(7, graph))
    with pytest.raises(onnx_graph.OnnxError, match=r"more than 10,000 protocol-buffer fields"):
        onnx_graph.read_graph(path)


def test_an_onnx_file_of_empty_initializers_is_named_and_the_diagnosis_goes_on(run_dir: Path, cli, monkeypatch) -> None:
    monkeypatch.setattr(onnx_graph, "MAX_FIELDS", 10_000)
    graph = _field(1, _field(4, b"Relu")) + b"\x2a\x00" * 50_000
    (run_dir / "model.onnx").write_bytes(_field(7, graph))
    report = diagnose_json(cli, run_dir)
    entry = inputs_by_path(report)["model.onnx"]
    assert entry["status"] == "unreadable" and "protocol-buffer fields" in entry["why"]
    assert "loss_curve" in ran(report)
