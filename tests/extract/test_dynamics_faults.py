"""Real captured runs: each fault injected into a tiny model must be told apart by the dynamics facts."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # trains small models

try:  # tests/extract may or may not be a package
    from . import dynamics_runs as runs
except ImportError:
    import dynamics_runs as runs

from advisor.extract.base import RunPair
from advisor.extract.dynamics import extract
from advisor.inventory import RunFolder

os.environ.setdefault("OMP_NUM_THREADS", "1")



@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return runs.trained_runs(tmp_path_factory.getbasetemp())


def facts_of(folder):
    ex = extract(RunPair(run=RunFolder.scan(folder)))
    by_kind: dict[str, list] = {}
    for f in ex.facts:
        by_kind.setdefault(f.kind, []).append(f)
    return ex, by_kind


def params(by_kind):
    return {p.name: p for p in by_kind["param_dynamics"]}


def test_healthy_facts_are_in_normal_ranges(trained):
    for name in runs.HEALTHY:
        ex, by = facts_of(trained[name])
        td = by["tensor_dynamics"][0]
        assert td.steps_recorded == runs.STEPS // runs.EVERY and td.first_step == 0
        assert td.unchanged_param_count == 0 and td.trained_param_count == td.param_count
        assert 0.05 < td.early_to_late_grad_ratio < 20
        assert 1e-4 < td.update_ratio_median < 0.05
        assert td.ascent_param_count == 0 and td.first_nonfinite_step is None
        assert td.away_from_zero_param_count == 0 and td.params_with_resid_cos >= 3
        assert td.grad_norm_growth_ratio < 100
        for p in by["param_dynamics"]:
            if p.is_matrix:
                assert 0.3 < p.first_std_fan_in_ratio < 1.0  # PyTorch's default init: 1/sqrt(3) = 0.577
                assert p.update_grad_cos_median < 0
        assert "tied_params" not in by
        assert ex.inputs[0].status == "used" and ex.inputs[0].why is None
        charts = {s.chart for s in ex.series}
        # no layer flagged in a healthy run: the distributions of the first and the last layer
        dists = sorted(c for c in charts if c.startswith("weight_dist:"))
        assert charts - set(dists) == {"grad_norm", "weight_std"} and len(dists) == 2
        mats = [p.name for p in by["param_dynamics"] if p.is_matrix]
        assert dists == sorted(f"weight_dist:{n}" for n in (mats[0], mats[-1]))


def test_vanishing_ratio_is_orders_below_healthy(trained):
    _, by = facts_of(trained["deep_sigmoid"])
    td = by["tensor_dynamics"][0]
    assert (td.early_layer, td.late_layer) == ("0.weight", "20.weight")
    assert td.early_to_late_grad_ratio < 1e-6


def test_huge_init_saturates_and_scale_is_far_from_fan_in(trained):
    _, by = facts_of(trained["huge_init"])
    p = params(by)
    assert p["0.weight"].fan_in == 16 and p["0.weight"].first_std_fan_in_ratio == pytest.approx(5.05 * 4, rel=0.02)
    sat = {a.name: a.sat_frac_median for a in by["activation_stats"] if a.is_saturating_type}
    assert set(sat) == {"1", "3", "5"} and min(sat.values()) > 0.85


def test_zero_init_is_all_zero_at_step_zero(trained):
    _, by = facts_of(trained["zero_init"])
    p = params(by)
    assert [n for n, f in p.items() if f.first_is_all_zero and f.is_matrix] == ["0.weight", "2.weight", "4.weight"]
    assert p["0.weight"].is_grad_always_zero is True
    # zero tensors are trivially equal: not reported as shared weights
    assert "tied_params" not in by


def test_frozen_and_disconnected_are_told_apart(trained):
    _, frozen = facts_of(trained["frozen_layer"])
    f = params(frozen)["2.weight"]
    assert (f.requires_grad, f.has_grad, f.is_unchanged, f.is_between_trained) == (False, False, True, True)
    _, disc = facts_of(trained["disconnected_block"])
    d = params(disc)
    assert [n for n, x in d.items() if not x.has_grad] == ["aux.0.weight", "aux.0.bias"]
    assert d["aux.0.weight"].requires_grad is True and d["aux.0.weight"].in_optimizer is True
    assert d["aux.0.weight"].is_unchanged is True


def test_tied_weights_pair(trained):
    _, by = facts_of(trained["tied_weights"])
    assert [(t.name_a, t.name_b, t.steps_compared, t.is_changing) for t in by["tied_params"]] == [
        ("2.weight", "4.weight", runs.STEPS // runs.EVERY, True)]


def test_sign_error_moves_uphill(trained):
    _, by = facts_of(trained["sign_error_optimizer"])
    td = by["tensor_dynamics"][0]
    assert (td.ascent_param_count, td.params_with_update_cos) == (6, 6)
    assert all(p.update_grad_cos_median > 0.99 for p in by["param_dynamics"])


def test_dead_relu_found_and_zero_grads_not_called_disconnected(trained):
    _, by = facts_of(trained["dead_relu"])
    dead = [a.name for a in by["activation_stats"] if a.is_relu_type and a.zero_frac_median == 1.0]
    assert dead == ["3"]
    p = params(by)
    # every parameter before the dead layer gets exactly zero gradient (not None: it is connected)
    assert [n for n, x in p.items() if x.is_grad_always_zero] == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight"]


def test_explosion_then_first_nonfinite(trained):
    ex, by = facts_of(trained["exploding_regression"])
    td = by["tensor_dynamics"][0]
    assert td.grad_norm_growth_ratio > 1e6
    assert td.first_nonfinite_step is not None and td.first_nonfinite_step >= td.grad_norm_max_step - 1
    assert td.first_nonfinite_kind in ("activation", "weight", "grad")
    assert [m.kind for m in ex.markers] == ["nonfinite"]


def test_decay_with_wrong_sign_pushes_weights_from_zero(trained):
    _, by = facts_of(trained["decay_wrong_sign"])
    td = by["tensor_dynamics"][0]
    assert (td.away_from_zero_param_count, td.params_with_resid_cos, td.ascent_param_count) == (3, 3, 0)
    assert all(p.update_resid_weight_cos_median > 0.9 for p in by["param_dynamics"] if p.is_matrix)


def test_wrong_sign_decay_grows_every_norm_at_one_rate(trained):
    """AdamW's decay with a flipped sign: every parameter grows by (1 + lr*wd) per step; torch's AdamW does not."""
    bad = facts_of(trained["adamw_decay_wrong_sign"])[1]["tensor_dynamics"][0]
    assert bad.late_growth_param_count == 6  # 3 matrices and 3 bias vectors
    assert bad.late_growth_uniformity > 0.8 and bad.late_growth_ratio_median > 1.2
    assert 0.2 * 5e-3 * 2.0 < bad.late_growth_per_step_median < 1.5 * 5e-3 * 2.0  # of the order of lr * wd
    assert bad.away_from_zero_param_count < 3  # Adam hides it from the update-direction test
    good = facts_of(trained["healthy_adamw_strong_decay"])
    td = good[1]["tensor_dynamics"][0]
    assert td.late_growth_ratio_median < 1.0 and td.late_growth_uniformity is None  # decay pulls the norms in
    for name in runs.HEALTHY:
        h = facts_of(trained[name])[1]["tensor_dynamics"][0]
        assert h.late_growth_uniformity is None or h.late_growth_uniformity < 0.8 or h.late_growth_ratio_median < 1.2
