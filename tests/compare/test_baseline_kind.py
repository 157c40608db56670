"""Rerun or port: how a dump pair is read (--baseline-kind auto|rerun|port)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from advisor.compare.engine import compare_dumps
from advisor.compare.localise import localise
from advisor.compare.op_kinds import op_kind
from advisor.extract.base import RunPair
from advisor.extract.op_compare import extract
from advisor.inventory import RunFolder
from advisor.read.dumps import read_dump


@pytest.mark.parametrize("op,op_type,device,kind", [
    ("Functional.dropout.0.forward", "dropout", None, "random"),
    ("net.2.forward", "Dropout", None, "random"),
    ("Torch.scatter_add.0.forward", "scatter_add", None, "nondeterministic"),
    ("Tensor.index_add_.0.forward", "index_add_", None, "nondeterministic"),
    ("pool.forward", "ScatterMeanPool", None, "nondeterministic"),
    ("Functional.embedding.0.backward", "embedding", None, "nondeterministic"),
    ("Functional.conv2d.3.backward", "conv2d", None, "nondeterministic"),
    ("Functional.embedding.0.forward", "embedding", None, "deterministic"),
    ("Functional.gelu.0.forward", "gelu", None, "deterministic"),
    ("ln1.forward", "LayerNorm", None, "deterministic"),
    ("attn.softmax.forward", "Softmax16", None, "deterministic"),
    ("Functional.linear.0.forward", "linear", None, "gpu_nondeterministic"),
    ("Functional.linear.0.forward", "linear", "cpu", "deterministic"),
    ("Torch.matmul.1.forward", "matmul", "cuda", "gpu_nondeterministic"),
])
def test_operator_kinds(op, op_type, device, kind):
    assert op_kind(op, op_type, device) == kind


def _pair(run, base, **options):
    ex = extract(RunPair(RunFolder.scan(run), RunFolder.scan(base, side="baseline"), options=options))
    summary = next(f for f in ex.facts if f.kind == "op_comparison_summary")
    note = next(c.note for c in ex.checks if c.stage == "network_wide_comparison")
    return ex, summary, note


def test_same_config_gelu_tanh_mid_network_is_a_port(dumps, mlp_input):
    """Equal config files, first difference at a GELU from bit-identical inputs: operator accuracy, not randomness."""
    pytest.importorskip("torch")
    from torch_models import MLP  # imports torch: only here, so the module collects without it

    run, base = dumps(MLP, {"gelu": "tanh"}, {"gelu": "none"}, mlp_input)
    for d in (run, base):
        (d / "hparams.yaml").write_text("lr: 0.01\nseed: 7\n")
    ex, summary, note = _pair(run, base)
    assert summary.first_difference_op == "act.forward"
    assert summary.baseline_kind == "port" and summary.first_difference_op_kind == "deterministic"
    assert summary.is_same_config is None
    assert "random_errors" not in {c.stage for c in ex.checks}
    assert "read as port" in note and "--baseline-kind rerun" in note
    _, forced, note = _pair(run, base, **{"compare.baseline_kind": "rerun"})
    assert forced.baseline_kind == "rerun" and forced.is_same_config is True
    assert "--baseline-kind rerun given" in note


def test_dropout_left_on_is_a_rerun(tmp_path):
    torch = pytest.importorskip("torch")
    from torch_models import take_dump

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(32, 4))
    model.train()  # dropout active, as when model.eval() was forgotten before dumping
    x = torch.randn(8, 16)
    for name, seed in (("run", 1), ("base", 2)):
        torch.manual_seed(seed)
        take_dump(model, x, tmp_path / name / "dump")
        (tmp_path / name / "hparams.yaml").write_text("lr: 0.01\n")
    _, summary, note = _pair(tmp_path / "run", tmp_path / "base")
    assert summary.first_difference_op == "2.forward"
    assert summary.first_difference_op_kind == "random"
    assert summary.baseline_kind == "rerun" and summary.is_same_config is True
    assert "a random operator" in note
    _, forced, _ = _pair(tmp_path / "run", tmp_path / "base", **{"compare.baseline_kind": "port"})
    assert forced.baseline_kind == "port" and not forced.is_same_config


def _write_npy_dump(folder, tensors):
    """The npy layout as documented: NNNN_<op>.<role>.<index>.npy in execution order, plus manifest.json."""
    folder.mkdir(parents=True)
    manifest = []
    for k, (name, op_type, arr) in enumerate(tensors):
        file = f"{k:04d}_{name}.npy"
        np.save(folder / file, arr)
        manifest.append({"name": name, "file": file, "op_type": op_type})
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_an_enclosing_module_is_judged_after_the_operators_inside_it(tmp_path):
    """blk.forward encloses blk.act.forward: the error is born in the child, not in the module around it."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch.randn(6, 12)
    for side, approx in (("run", "tanh"), ("base", "none")):
        h = torch.nn.functional.gelu(x, approximate=approx)
        y = h * 2.0
        _write_npy_dump(tmp_path / side / "dump", [
            ("blk.forward.input.0", "Block", x.numpy()),
            ("blk.act.forward.input.0", "GELU", x.numpy()),
            ("blk.act.forward.output.0", "GELU", h.numpy()),
            ("blk.scale.forward.input.0", "Scale", h.numpy()),
            ("blk.scale.forward.output.0", "Scale", y.numpy()),
            ("blk.forward.output.0", "Block", y.numpy()),
        ])
    comp = compare_dumps(read_dump(tmp_path / "run" / "dump"), read_dump(tmp_path / "base" / "dump"), workers=1)
    loc = localise(comp.rows)
    assert loc.first_difference.op == "blk.act.forward"
    assert loc.source.op == "blk.act.forward"
    assert "blk.forward" in [v.op for v in loc.propagated]


def test_two_fused_kernels_in_a_row_each_take_their_own_span(tmp_path):
    """fc1+act1 and fc2+act2 fused in the run (bias added after the GELU): each fused kernel is matched with its
    own pair of baseline operators, and the first is the source."""
    torch = pytest.importorskip("torch")
    from torch_models import take_dump

    nn = torch.nn

    class Unfused(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.act1 = nn.Linear(12, 16), nn.GELU()
            self.fc2, self.act2 = nn.Linear(16, 16), nn.GELU()
            self.fc3 = nn.Linear(16, 3)

        def forward(self, x):
            return self.fc3(self.act2(self.fc2(self.act1(self.fc1(x)))))

    class FusedLinearGELU(nn.Module):
        def __init__(self, lin):
            super().__init__()
            self.weight, self.bias = lin.weight, lin.bias

        def forward(self, x):
            return nn.functional.gelu(x @ self.weight.T) + self.bias  # the fault: bias after the activation

    class Fused(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.fc1_act1, self.fc2_act2, self.fc3 = FusedLinearGELU(m.fc1), FusedLinearGELU(m.fc2), m.fc3

        def forward(self, x):
            return self.fc3(self.fc2_act2(self.fc1_act1(x)))

    torch.manual_seed(0)
    base_model = Unfused().eval()
    x = torch.randn(8, 12)
    take_dump(base_model, x, tmp_path / "base" / "dump")
    take_dump(Fused(base_model).eval(), x, tmp_path / "run" / "dump")
    comp = compare_dumps(read_dump(tmp_path / "run" / "dump"), read_dump(tmp_path / "base" / "dump"), workers=1)
    pairs = {(r.name, r.baseline_name) for r in comp.rows if r.matched_by == "span"}
    assert ("fc1_act1.forward.output.0", "act1.forward.output.0") in pairs
    assert ("fc2_act2.forward.input.0", "fc2.forward.input.0") in pairs
    assert ("fc2_act2.forward.output.0", "act2.forward.output.0") in pairs
    ex, summary, _ = _pair(tmp_path / "run", tmp_path / "base")
    assert summary.source_op == "fc1_act1.forward" and summary.fused_ops_run == 2
    src = next(f for f in ex.facts if f.kind == "op_comparison" and f.position == "source")
    assert src.is_fused_op and src.op_type == "FusedLinearGELU"


def test_an_operator_eliminated_by_conversion_is_named_with_the_first_tensor_that_deviates_after_it(tmp_path):
    torch = pytest.importorskip("torch")
    from torch_models import take_dump

    nn = torch.nn
    torch.manual_seed(0)
    fc1, fc2 = nn.Linear(10, 16), nn.Linear(16, 3)
    baseline = nn.Sequential()
    baseline.add_module("fc1", fc1)
    baseline.add_module("act", nn.Tanh())
    baseline.add_module("fc2", fc2)
    converted = nn.Sequential()  # the export dropped the activation
    converted.add_module("fc1", fc1)
    converted.add_module("fc2", fc2)
    x = torch.randn(6, 10)
    take_dump(baseline.eval(), x, tmp_path / "base" / "dump")
    take_dump(converted.eval(), x, tmp_path / "run" / "dump")
    _, summary, _ = _pair(tmp_path / "run", tmp_path / "base")
    assert summary.source_op is None  # no operator deviates from clean inputs
    assert summary.removed_ops == 1 and summary.first_removed_op == "act.forward"
    assert summary.first_deviation_after_removed == "fc2.forward.input.0"
    from advisor.diagnosis import diagnose

    report = diagnose(tmp_path / "run", baseline=tmp_path / "base")
    top = report.causes[0]
    assert top.id == "operator_accuracy" and "baseline-operator-missing-before-first-deviation" in top.rules
    assert "act.forward" in top.evidence[0].text and "fc2.forward.input.0" in top.evidence[0].text


def test_half_precision_outputs_flushed_to_zero_are_underflow_not_truncation(tmp_path):
    """A scale of tiny activations computed in float16 (values ~1e-6 turn 0 with flush-to-zero) against float32."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch.randn(8, 16) * 1e-3
    base_out = x * 1e-3                                   # float32: ~1e-6, nonzero
    ftz = (x.half() * 1e-3)                               # float16: subnormal ...
    ftz = torch.where(ftz.abs() < 6.103515625e-05, torch.zeros_like(ftz), ftz)  # ... flushed to zero, as FTZ kernels do
    assert float(ftz.abs().max()) == 0.0 and float(base_out.abs().max()) > 0
    for side, inp, out in (("run", x.half(), ftz), ("base", x, base_out)):
        _write_npy_dump(tmp_path / side / "dump", [
            ("scale.forward.input.0", "Scale", inp.numpy()),
            ("scale.forward.output.0", "Scale", out.numpy()),
        ])
    from advisor.diagnosis import diagnose

    report = diagnose(tmp_path / "run", baseline=tmp_path / "base")
    ids = [c.id for c in report.found()]
    assert ids and ids[0] == "fp_overflow" and "wrong_operator" not in ids
    assert "float16" in report.causes[0].evidence[0].text


def test_first_difference_at_an_index_add_accumulation_is_a_rerun(tmp_path):
    """Mean pooling by index_add_ whose accumulation order changes run to run (as atomicAdd does on a GPU):
    ulp-level differences from the pool on, identical inputs, equal config files -> nondeterminism."""
    torch = pytest.importorskip("torch")
    from torch_models import take_dump

    nn = torch.nn

    class IndexAddPool(nn.Module):
        def __init__(self, order_seed):
            super().__init__()
            self.order_seed = order_seed

        def forward(self, x):  # x: (tokens, features) -> (groups, features)
            groups = torch.arange(x.shape[0]) % 4
            perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(self.order_seed))
            out = torch.zeros(4, x.shape[1])
            for i in perm.tolist():  # one row at a time: the order of the float additions is the permutation's
                out.index_add_(0, groups[i:i + 1], x[i:i + 1])
            return out / (x.shape[0] // 4)

    torch.manual_seed(0)
    proj, head = nn.Linear(8, 16), nn.Linear(16, 2)
    x = torch.randn(64, 8)
    for side, seed in (("run", 1), ("base", 2)):
        model = nn.Sequential()
        model.add_module("proj", proj)
        model.add_module("pool", IndexAddPool(seed))
        model.add_module("head", head)
        take_dump(model.eval(), x * 1000, tmp_path / side / "dump")
        (tmp_path / side / "hparams.yaml").write_text("lr: 0.001\n")
    _, summary, note = _pair(tmp_path / "run", tmp_path / "base")
    assert summary.first_difference_op == "pool.forward"
    assert summary.first_difference_op_kind == "nondeterministic" and summary.first_difference_inputs_identical
    assert summary.baseline_kind == "rerun"
    assert "atomics-based" in note


def test_a_manifest_naming_two_devices_makes_a_port(tmp_path):
    """Equal config files and a first difference at a split-K-prone matmul: a rerun, unless the dumps say that
    they come from two devices."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x, w = torch.randn(8, 32), torch.randn(32, 16)
    y_run = (x @ w).numpy()
    y_base = (x.double() @ w.double()).float().numpy()  # another accumulation: last-bit differences
    assert (y_run != y_base).any()
    for side, y, _device in (("run", y_run, "npu:0"), ("base", y_base, "cuda:0")):
        _write_npy_dump(tmp_path / side / "dump", [("mm.forward.input.0", "MatMul", x.numpy()),
                                                   ("mm.forward.output.0", "MatMul", y)])
        (tmp_path / side / "hparams.yaml").write_text("lr: 0.1\n")
    _, summary, _ = _pair(tmp_path / "run", tmp_path / "base")
    assert summary.first_difference_op_kind == "gpu_nondeterministic" and summary.baseline_kind == "rerun"
    for side, device in (("run", "npu:0"), ("base", "cuda:0")):
        man = tmp_path / side / "dump" / "manifest.json"
        man.write_text(json.dumps({"framework": "pytorch", "device": device, "tensors": json.loads(man.read_text())}))
    _, summary, note = _pair(tmp_path / "run", tmp_path / "base")
    assert summary.baseline_kind == "port" and "npu:0 and cuda:0" in note


def test_a_first_difference_in_another_precision_makes_a_port(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch.randn(8, 32)
    for side, y in (("run", torch.softmax(x.half(), -1)), ("base", torch.softmax(x, -1))):
        _write_npy_dump(tmp_path / side / "dump", [("sm.forward.input.0", "Softmax", x.numpy()),
                                                   ("sm.forward.output.0", "Softmax", y.numpy())])
        (tmp_path / side / "hparams.yaml").write_text("lr: 0.1\n")
    _, summary, note = _pair(tmp_path / "run", tmp_path / "base")
    assert summary.baseline_kind == "port" and "float16 in the run and float32 in the baseline" in note
