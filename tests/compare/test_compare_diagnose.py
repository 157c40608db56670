"""`diagnose` on dumps of real torch models: the right cause, on the injected operator; healthy pairs stay quiet."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from advisor.diagnosis import diagnose

from torch_models import CNN, MLP


def _causes(report, floor=0.5):
    return {c.id: c for c in report.causes if c.confidence >= floor}


def _text(cause):
    return " ".join(e.text for e in cause.evidence)


def test_tanh_gelu_is_reported_as_operator_accuracy_on_the_gelu(dumps, mlp_input):
    run, base = dumps(MLP, {"gelu": "tanh"}, {"gelu": "none"}, mlp_input)
    report = diagnose(run, base)
    causes = _causes(report)
    assert report.summary.top_cause == "operator_accuracy"
    assert "act.forward (GELU)" in _text(causes["operator_accuracy"])
    assert any(c.id == "op_error" or any(s.chart == "op_error" for s in c.series) for c in report.charts)


def test_division_by_zero_is_reported_as_nan_inf_source(dumps, mlp_input):
    x = mlp_input.clone()
    x[0] = 1.0
    run, base = dumps(MLP, {"standardize_eps": 0.0}, {"standardize_eps": 1e-6}, x)
    causes = _causes(diagnose(run, base))
    assert "std.forward" in _text(causes["nan_inf_source"])
    # with no baseline at all the run's dump alone still names it
    assert "std.forward" in _text(_causes(diagnose(run))["nan_inf_source"])


def test_floor_division_is_reported_as_wrong_operator(dumps):
    torch.manual_seed(4)
    run, base = dumps(CNN, {"floor": True}, {"floor": False}, torch.randn(2, 3, 8, 8))
    causes = _causes(diagnose(run, base))
    assert "halve.forward" in _text(causes["wrong_operator"])


def test_same_configuration_differences_are_nondeterminism_not_operator_accuracy(dumps, mlp_input):
    run, base = dumps(MLP, {"order_seed": 1}, {"order_seed": 2}, mlp_input)
    for d in (run, base):
        (d / "hparams.yaml").write_text("lr: 0.01\nseed: 7\n")
    causes = _causes(diagnose(run, base))
    assert set(causes) == {"nondeterminism"}
    assert "mix.forward" in _text(causes["nondeterminism"])


def test_identical_runs_report_no_cause(dumps, mlp_input):
    run, base = dumps(MLP, {}, {}, mlp_input)
    for d in (run, base):
        (d / "hparams.yaml").write_text("lr: 0.01\n")
    report = diagnose(run, base)
    assert _causes(report) == {}
    assert {c.stage for c in report.checks if c.status == "ran"} >= {"network_wide_comparison", "random_errors"}


def test_causal_mask_infs_raise_no_cause(dumps):
    from torch_models import Attention

    torch.manual_seed(6)
    run, base = dumps(Attention, {"causal": True}, {"causal": True}, torch.randn(2, 16, 32))
    assert _causes(diagnose(run, base)) == {}
    assert _causes(diagnose(run)) == {}  # the run's dump alone either
