"""Localisation on real dumps of small torch models with one injected deviation.

Each test takes a dump of the same model (same weights, same input) twice,
once with the deviation, and asserts that the *source* is the injected
operator and that its successors are only *propagated*.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from advisor.compare.engine import compare_dumps, scan_dump
from advisor.compare.localise import localise
from advisor.extract.base import RunPair
from advisor.extract.op_compare import extract
from advisor.inventory import RunFolder
from advisor.read.dumps import read_dump

from torch_models import CNN, MLP, Attention


def _loc(run, base):
    comp = compare_dumps(read_dump(run / "dump"), read_dump(base / "dump"), workers=2)
    return comp, localise(comp.rows)


def _propagated(loc):
    return [v.op for v in loc.propagated]


def test_gelu_tanh_is_the_source_and_the_layers_after_it_inherit(dumps, mlp_input):
    run, base = dumps(MLP, {"gelu": "tanh"}, {"gelu": "none"}, mlp_input)
    comp, loc = _loc(run, base)
    assert loc.source is not None and loc.source.op == "act.forward"
    assert loc.source.op_type == "GELU"
    assert loc.independent_sources == []
    assert {"fc2.forward", "norm.forward", "fc3.forward"} <= set(_propagated(loc))
    # everything before the GELU is bit-identical
    assert all(r.metrics.identical for r in comp.rows if r.order < loc.source.order)
    assert loc.first_difference is loc.source


def test_layernorm_eps_is_the_source(dumps, mlp_input):
    run, base = dumps(MLP, {"ln_eps": 1e-1}, {"ln_eps": 1e-5}, mlp_input)
    _, loc = _loc(run, base)
    assert loc.source.op == "norm.forward"
    assert loc.source.verdict == "error"
    assert "fc3.forward" in _propagated(loc)


def test_float16_softmax_is_the_source_in_an_attention_block(dumps):
    torch.manual_seed(3)
    x = torch.randn(2, 16, 32) * 3
    run, base = dumps(Attention, {"half_softmax": True}, {"half_softmax": False}, x)
    _, loc = _loc(run, base)
    assert loc.source.op == "softmax.forward"
    assert _propagated(loc) == ["mix.forward", "out.forward"]


def test_division_by_zero_names_the_dividing_operator_not_its_successors(dumps, mlp_input):
    x = mlp_input.clone()
    x[2] = 0.5  # a constant row: std 0
    run, base = dumps(MLP, {"standardize_eps": 0.0}, {"standardize_eps": 1e-6}, x)
    comp, loc = _loc(run, base)
    assert loc.nonfinite_source.op == "std.forward"
    assert loc.nonfinite_ops >= 4  # fc1, act, fc2 ... inherit the NaN
    assert loc.source.op == "std.forward"
    row = next(r for r in comp.rows if r.name == "fc3.forward.output.0")
    assert row.verdict == "error" and row.metrics.nan_run > 0  # a NaN never passes
    # the run alone is enough to find where NaN is born
    rows = scan_dump(read_dump(run / "dump"), workers=2)
    assert localise(rows, has_baseline=False).nonfinite_source.op == "std.forward"


def test_floor_division_is_found_as_integer_valued_output(dumps):
    torch.manual_seed(4)
    x = torch.randn(2, 3, 8, 8)
    run, base = dumps(CNN, {"floor": True}, {"floor": False}, x)
    _, loc = _loc(run, base)
    assert loc.source.op == "halve.forward"
    assert loc.integer_valued.op == "halve.forward"
    # without the injected `//` nothing is integer-valued (ReLU zeros do not count)
    _, loc_ok = _loc(base, base)
    assert loc_ok.integer_valued is None and loc_ok.source is None


class _ZScoreNet(torch.nn.Module):
    """Per-feature z-score of pixel counts, then a linear layer; ``floor`` writes `//` for `/`."""

    def __init__(self, floor: bool = False):
        super().__init__()
        self.floor = floor
        self.norm = _ZScore(floor)
        self.fc = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.fc(self.norm(x))


class _ZScore(torch.nn.Module):
    def __init__(self, floor: bool):
        super().__init__()
        self.floor = floor

    def forward(self, x):
        mean, std = x.mean(0, keepdim=True), x.std(0, keepdim=True) + 1.0
        return (x - mean) // std if self.floor else (x - mean) / std


def test_floor_division_in_a_normaliser_of_whole_numbers_is_found_without_a_baseline(tmp_path):
    from torch_models import build, take_dump

    # 8x8 images of pixel counts 0..16, the zero border included: whole numbers in, so "from non-integer
    # inputs" cannot apply; the normaliser narrows 0..16 to a few whole numbers, which no affine map does
    x = torch.zeros(16, 8, 8)
    x[:, 1:7, 1:7] = torch.randint(0, 17, (16, 6, 6), generator=torch.Generator().manual_seed(0)).float()
    x = x.reshape(16, 64)
    for floor in (True, False):
        take_dump(build(_ZScoreNet, floor=floor), x, tmp_path / str(floor) / "dump")
    loc = localise(scan_dump(read_dump(tmp_path / "True" / "dump")), has_baseline=False)
    assert loc.integer_valued is not None and loc.integer_valued.op == "norm.forward"
    assert localise(scan_dump(read_dump(tmp_path / "False" / "dump")), has_baseline=False).integer_valued is None
    ex = extract(RunPair(run=RunFolder.scan(tmp_path / "True")))
    (anomaly,) = [f for f in ex.facts if f.kind == "op_anomaly" and f.anomaly == "integer_valued_output"]
    assert anomaly.from_integer_inputs and anomaly.integer_ratio == 1.0


def test_fp16_range_overflow_is_located(dumps, mlp_input):
    run, base = dumps(MLP, {}, {}, mlp_input * 1e5)
    _, loc = _loc(run, base)
    # the input itself is beyond fp16 range; Standardize brings it back: nothing is *born* beyond it
    assert loc.fp16_overflow is None
    torch.manual_seed(0)
    m = MLP()
    with torch.no_grad():
        m.fc3.weight.mul_(1e6)
    from torch_models import take_dump
    take_dump(m.eval(), mlp_input, run / "dump2")
    rows = scan_dump(read_dump(run / "dump2"))
    assert localise(rows, has_baseline=False).fp16_overflow.op == "fc3.forward"


def test_random_order_reduction_is_a_first_difference_within_tolerance(dumps, mlp_input):
    run, base = dumps(MLP, {"order_seed": 1}, {"order_seed": 2}, mlp_input)
    _, loc = _loc(run, base)
    assert loc.first_difference.op == "mix.forward"
    assert loc.source is None  # float32 rounding noise passes the float32 tolerance


def test_nondeterminism_facts_when_the_configuration_is_the_same(dumps, mlp_input):
    run, base = dumps(MLP, {"order_seed": 1}, {"order_seed": 2}, mlp_input)
    for d in (run, base):
        (d / "hparams.yaml").write_text("lr: 0.01\nseed: 7\n")
    ex = extract(RunPair(RunFolder.scan(run), RunFolder.scan(base, side="baseline")))
    summary = next(f for f in ex.facts if f.kind == "op_comparison_summary")
    assert summary.is_same_config is True
    assert summary.first_difference_op == "mix.forward"
    assert summary.source_op is None
    assert {c.stage for c in ex.checks} >= {"network_wide_comparison", "random_errors"}
    (base / "hparams.yaml").write_text("lr: 0.02\nseed: 7\n")
    ex = extract(RunPair(RunFolder.scan(run), RunFolder.scan(base, side="baseline")))
    assert next(f for f in ex.facts if f.kind == "op_comparison_summary").is_same_config is False


def test_renamed_module_is_matched_by_order_and_type(dumps, mlp_input):
    run, base = dumps(MLP, {"gelu": "tanh"}, {"gelu": "none"}, mlp_input)
    manifest = json.loads((run / "dump" / "manifest.json").read_text())
    for e in manifest:
        e["name"] = e["name"].replace("act.", "activation.")
    (run / "dump" / "manifest.json").write_text(json.dumps(manifest))
    comp, loc = _loc(run, base)
    assert comp.unmatched_run == [] and comp.unmatched_baseline == []
    assert {r.matched_by for r in comp.rows if r.op == "activation.forward"} == {"order"}
    assert loc.source.op == "activation.forward"


@pytest.mark.parametrize("mode", ["tensor", "statistics"])
def test_msprobe_layout_in_both_modes(dumps, mlp_input, mode):
    run, base = dumps(MLP, {"gelu": "tanh"}, {"gelu": "none"}, mlp_input, layout="msprobe", mode=mode)
    comp, loc = _loc(run, base)
    assert comp.mode == mode
    assert loc.source.op == "Module.act.GELU.forward.0"
    assert loc.source.op_type == "GELU"


def test_shared_msprobe_tanh_pair_points_at_the_gelu(shared_msprobe):
    run = RunFolder.scan(shared_msprobe / "r_tanh")
    base = RunFolder.scan(shared_msprobe / "r_base", side="baseline")
    ex = extract(RunPair(run, base))
    summary = next(f for f in ex.facts if f.kind == "op_comparison_summary")
    assert summary.source_op == "Functional.gelu.0.forward"
    assert summary.mode == "tensor" and summary.unmatched_run == 0
    src = next(f for f in ex.facts if f.kind == "op_comparison" and f.position == "source")
    assert src.verdict == "error" and src.tensor == "Functional.gelu.0.forward.output.0"
    # the backward calls that follow are inherited, not independent sources
    assert summary.independent_sources == 0
    # our metrics agree with msprobe's own compare output on the GELU output
    with open(shared_msprobe / "msprobe-compare-output" / "r_tanh_vs_r_base.csv", newline="") as fh:
        row = next(r for r in csv.DictReader(fh) if r["NPU Name"] == "Functional.gelu.0.forward.output.0")
    assert src.max_abs_err == pytest.approx(float(row["MaxAbsErr"]), rel=1e-5)
    assert src.max_rel_err == pytest.approx(float(row["MaxRelativeErr"]), rel=1e-3)
    assert row["Result"] == "pass"  # msprobe lets it pass; we do not


def test_shared_msprobe_statistics_pair_points_at_the_bf16_conv(shared_msprobe):
    comp = compare_dumps(read_dump(shared_msprobe / "rs_bf16" / "step0" / "rank0"),
                         read_dump(shared_msprobe / "rs_base" / "step0" / "rank0"))
    loc = localise(comp.rows)
    assert comp.mode == "statistics"
    assert loc.source.op == "Functional.conv2d.2.forward"
    assert loc.first_dtype_change.op == "Functional.conv2d.2.forward"
    assert loc.independent_sources == []


def test_fused_kernel_is_matched_over_the_unfused_span_and_is_the_source(tmp_path):
    torch.manual_seed(5)
    x = torch.randn(16, 8)
    fc1, fc2 = torch.nn.Linear(8, 12), torch.nn.Linear(12, 4)
    with torch.no_grad():
        h = fc1(x)
        g = torch.nn.functional.gelu(h)
        fused = torch.nn.functional.gelu(fc1(x.bfloat16().float()).bfloat16().float(), approximate="tanh")
        tensors = {
            "baseline": [("fc1.forward.input.0", x), ("fc1.forward.output.0", h), ("act1.forward.input.0", h),
                         ("act1.forward.output.0", g), ("fc2.forward.input.0", g), ("fc2.forward.output.0", fc2(g))],
            "run": [("Fused.FusedMatMulBiasAddGeLU.0.forward.input.0", x),
                    ("Fused.FusedMatMulBiasAddGeLU.0.forward.output.0", fused),
                    ("fc2.forward.input.0", fused), ("fc2.forward.output.0", fc2(fused))]}
    for side, items in tensors.items():
        d = tmp_path / side
        d.mkdir()
        for i, (name, t) in enumerate(items):
            np.save(d / f"{i:04d}_{name}.npy", t.numpy())
    comp = compare_dumps(read_dump(tmp_path / "run"), read_dump(tmp_path / "baseline"))
    loc = localise(comp.rows)
    assert loc.source.op == "Fused.FusedMatMulBiasAddGeLU.0.forward"
    assert {r.matched_by for r in comp.rows if r.op.startswith("Fused")} == {"span"}
    assert [r.name for r in comp.unmatched_baseline] == ["fc1.forward.output.0", "act1.forward.input.0"]
    assert comp.unmatched_run == []


def test_nan_source_from_msprobe_statistics_alone(dumps, mlp_input):
    x = mlp_input.clone()
    x[3] = -2.0
    run, base = dumps(MLP, {"standardize_eps": 0.0}, {"standardize_eps": 1e-6}, x, layout="msprobe", mode="statistics")
    rows = scan_dump(read_dump(run / "dump"))
    loc = localise(rows, has_baseline=False)
    assert loc.nonfinite_source.op == "Module.std.Standardize.forward.0"
    comp, loc2 = _loc(run, base)
    assert comp.mode == "statistics" and loc2.source.op == "Module.std.Standardize.forward.0"


def test_without_torch_tensor_mode_falls_back_to_statistics(dumps, mlp_input, monkeypatch):
    import advisor.read.dumps as reader

    def no_torch(path):
        raise reader.DumpReadError("a PyTorch .pt tensor: reading it needs torch (pip install accuracy-advisor[torch]); "
                                   "compared on the statistics of dump.json instead")

    monkeypatch.setattr(reader, "_load_pt", no_torch)
    run, base = dumps(MLP, {"gelu": "tanh"}, {"gelu": "none"}, mlp_input, layout="msprobe", mode="tensor")
    comp, loc = _loc(run, base)
    assert {r.mode for r in comp.rows} == {"statistics"}
    assert loc.source.op == "Module.act.GELU.forward.0"
    ex = extract(RunPair(RunFolder.scan(run), RunFolder.scan(base, side="baseline")))
    rec = next(i for i in ex.inputs if i.path == "dump/dump_tensor_data")
    assert rec.status == "unreadable" and "needs torch" in rec.why


def test_causal_minus_inf_mask_is_absorbed_and_not_an_accuracy_problem(dumps):
    torch.manual_seed(6)
    x = torch.randn(2, 16, 32)
    run, base = dumps(Attention, {"causal": True}, {"causal": True}, x)
    comp, loc = _loc(run, base)
    assert loc.source is None and loc.nonfinite_source.op == "scores.forward"
    assert loc.nonfinite_absorbed
    assert next(r for r in comp.rows if r.name == "scores.forward.output.0").verdict == "pass"
    run2, base2 = dumps(Attention, {"causal": True, "half_softmax": True}, {"causal": True}, x)
    assert _loc(run2, base2)[1].source.op == "softmax.forward"  # the Infs do not hide a real deviation


def test_dumps_of_outputs_only_keep_the_successors_propagated(dumps, mlp_input, tmp_path):
    """advisor.capture-style dumps hold outputs only: later deviating ops are presumed to inherit the error."""
    import shutil

    run, base = dumps(MLP, {"gelu": "tanh"}, {"gelu": "none"}, mlp_input)
    folders = []
    for side in (run, base):
        dst = tmp_path / "outputs_only" / side.name / "dump"
        shutil.copytree(side / "dump", dst)
        for f in dst.glob("*.input.*.npy"):
            f.unlink()
        man = dst / "manifest.json"
        if man.exists():
            entries = json.loads(man.read_text())  # a list of {name, file, op_type}
            man.write_text(json.dumps([e for e in entries if ".input." not in e["name"]]))
        folders.append(dst)
    comp = compare_dumps(read_dump(folders[0]), read_dump(folders[1]), workers=2)
    assert not any(r.role == "input" for r in comp.rows)
    loc = localise(comp.rows)
    assert loc.source.op == "act.forward" and loc.independent_sources == []
    assert {"fc2.forward", "norm.forward", "fc3.forward"} <= set(_propagated(loc))


def test_equal_config_files_but_differences_from_the_first_operator_are_a_port(dumps, mlp_input):
    """A GPU->NPU port keeps its config file: equal hparams, but outputs differ from op 1 (not a rerun)."""
    run, base = dumps(MLP, {"standardize_eps": 1e-2}, {"standardize_eps": 1e-6}, mlp_input)
    for d in (run, base):
        (d / "hparams.yaml").write_text("lr: 0.01\nseed: 7\n")
    ex = extract(RunPair(RunFolder.scan(run), RunFolder.scan(base, side="baseline")))
    summary = next(f for f in ex.facts if f.kind == "op_comparison_summary")
    assert summary.first_difference_op == "std.forward" and summary.source_op == "std.forward"
    assert summary.is_same_config is None  # not read as nondeterminism
    assert "read as port" in next(c.note for c in ex.checks if c.stage == "network_wide_comparison")
    assert summary.baseline_kind == "port" and summary.first_difference_op_kind == "deterministic"
    assert summary.first_difference_inputs_identical is True
    assert "random_errors" not in {c.stage for c in ex.checks}
    forced = extract(RunPair(RunFolder.scan(run), RunFolder.scan(base, side="baseline"),
                             options={"op_compare.same_config": True}))
    assert next(f for f in forced.facts if f.kind == "op_comparison_summary").is_same_config is True
