"""MindSpore's native synchronous dump (rank_*/<net>/<graph>/<iteration>/ with one .npy per kernel input/output)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.read.dumps import MS_DUMP_FILE, find_dump_roots, read_dump

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mindspore_port"
ITERATION = Path("dump/rank_0/Net/0/0")


def test_file_names_of_the_documented_layout():
    m = MS_DUMP_FILE.match("MatMul.Default_fc1-Dense_MatMul-op0.0.0.1796158074136298.input.0.DefaultFormat.Float32.npy")
    assert m and m.group("type") == "MatMul" and m.group("name") == "Default_fc1-Dense_MatMul-op0"
    assert m.group("role") == "input" and m.group("slot") == "0" and m.group("dtype") == "Float32"
    assert not MS_DUMP_FILE.match("0001_fc1.forward.output.0.npy")


def test_the_committed_dump_is_read_as_kernels_and_modules():
    files = [p.relative_to(EXAMPLE / "run") for p in (EXAMPLE / "run").rglob("*") if p.is_file()]
    assert find_dump_roots(files) == [ITERATION]
    dump = read_dump(EXAMPLE / "run" / ITERATION)
    assert dump.layout == "mindspore" and dump.framework == "mindspore"
    ops = dump.ops()
    # each module of the scope before its kernels, in the execution order of execution_order/*.csv
    assert ops == ["fc1.forward", "fc1.MatMul-op0.forward", "fc1.BiasAdd-op0.forward", "act.forward",
                   "act.GeLU-op0.forward", "fc2.forward", "fc2.MatMul-op0.forward", "fc2.BiasAdd-op0.forward"]
    act = {r.name: r for r in dump.records if r.op == "act.forward"}
    assert act["act.forward.output.0"].op_type == "GELU" and act["act.forward.output.0"].shape == (16, 32)
    assert not any("Parameter" in (r.rel_file or "") for r in dump.records)


def test_a_mindspore_run_against_a_pytorch_baseline_names_the_gelu():
    report = diagnose(EXAMPLE / "run", baseline=EXAMPLE / "baseline")
    top = report.found()[0]
    assert top.id == "operator_accuracy"
    facts = top.evidence[0].facts["op_comparison"]
    assert facts["op"] == "act.forward" and facts["position"] == "source"
    used = [i for i in report.inputs if i.kind == "dump" and i.status == "used"]
    assert any("mindspore layout" in (i.why or "") for i in used)


@pytest.mark.skipif(importlib.util.find_spec("mindspore") is None, reason="MindSpore is not installed")
def test_the_generator_reproduces_the_pair_with_mindspore(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    out = tmp_path / "pair"
    subprocess.run([sys.executable, str(EXAMPLE / "generate.py"), str(out)], check=True, capture_output=True,
                   timeout=300)
    report = diagnose(out / "run", baseline=out / "baseline")
    top = report.found()[0]
    assert top.id == "operator_accuracy" and top.evidence[0].facts["op_comparison"]["op"] == "act.forward"
