"""Real captured runs diagnosed end to end: each fault's cause ranks first; healthy runs raise nothing at >= 0.5."""

from __future__ import annotations

# confidences here are the rules' combined figure (raw_confidence), before the calibration map that
# benchmarks/calibrate.py fits on labelled runs (tested in tests/test_calibration.py)

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # trains small models

try:  # tests/extract may or may not be a package
    from . import dynamics_runs as runs
except ImportError:
    import dynamics_runs as runs

from advisor.diagnosis import diagnose

#: scenario -> (top cause, its least confidence)
EXPECTED = {
    "deep_sigmoid": ("gradient_vanishing", 0.75),
    "huge_init": ("weight_init_bad", 0.8),
    "zero_init": ("weight_init_bad", 0.8),
    "frozen_layer": ("weight_freezing_error", 0.6),
    "disconnected_block": ("disconnected_node", 0.75),
    "tied_weights": ("weight_sharing_error", 0.6),
    "sign_error_optimizer": ("optimizer_error", 0.85),
    "decay_wrong_sign": ("optimizer_error", 0.6),
    "dead_relu": ("activation_saturation", 0.75),
    # update ratios are supporting evidence only (0.4): the loss-curve rules add the rest
    "lr_far_too_high": ("lr_too_high", 0.4),
    "exploding_regression": ("gradient_explosion", 0.8),
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return runs.trained_runs(tmp_path_factory.getbasetemp())


@pytest.mark.parametrize("name", sorted(runs.HEALTHY))
def test_healthy_run_raises_nothing(trained, name):
    report = diagnose(trained[name])
    assert [(c.id, c.raw_confidence) for c in report.causes if c.raw_confidence >= 0.5] == []
    assert {c.stage for c in report.checks if c.status == "ran"} >= {"training_dynamics", "model_structure"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fault_is_the_top_cause(trained, name):
    report = diagnose(trained[name])
    assert report.causes, f"{name}: no cause"
    top = report.causes[0]
    cause, least = EXPECTED[name]
    assert (top.id, top.raw_confidence >= least - 1e-9) == (cause, True), [(c.id, c.raw_confidence) for c in report.causes]


def test_disconnected_block_is_not_called_frozen(trained):
    assert "weight_freezing_error" not in [c.id for c in diagnose(trained["disconnected_block"]).causes]


def test_dead_relu_zero_gradients_are_not_called_disconnected(trained):
    conf = {c.id: c.raw_confidence for c in diagnose(trained["dead_relu"]).causes}
    assert conf.get("disconnected_node", 0) < 0.5 and conf.get("weight_freezing_error", 0) < 0.5


def test_weight_chart_draws_the_layers_the_checks_name(trained):
    """The report's weights chart (one line of weight std per layer over the steps, as TensorBoard's and
    MindInsight's distribution views): the first and last layer always, a frozen layer among them, labelled."""
    report = diagnose(trained["frozen_layer"])
    (chart,) = [c for c in report.charts if c.id == "weight_std"]
    labels = [s.label for s in chart.series]
    frozen = {e.facts["param_dynamics"]["name"] for c in report.causes if c.id == "weight_freezing_error"
              for e in c.evidence if "param_dynamics" in e.facts}
    assert frozen and all(f"{name} (frozen)" in labels for name in frozen), (labels, frozen)
    assert 2 <= len(labels) <= 6 and all(len(s.x) >= 2 and s.log_y for s in chart.series)
    html = report_html(report)
    assert 'id="plot-weight_std"' in html


def test_weight_distributions_over_the_steps_are_drawn_for_the_flagged_layers(trained) -> None:
    """MindInsight's histogram view, as bands: min to max and mean +- std of a layer's weights at each recorded
    step, with its mean; for the layers a check flagged (a frozen one here), at most two."""
    report = diagnose(trained["frozen_layer"])
    dists = [c for c in report.charts if c.id.startswith("weight_dist:")]
    assert 1 <= len(dists) <= 2
    for chart in dists:
        bands = [s for s in chart.series if s.style == "band"]
        (mean,) = [s for s in chart.series if s.style == "line"]
        assert len(bands) == 2 and "flagged" in mean.label
        outer, inner = bands
        assert all(lo <= hi for lo, hi in zip(outer.y_low, outer.y))
        assert all(olo <= m <= ohi for olo, m, ohi in zip(outer.y_low, mean.y, outer.y))
    html = report_html(report)
    assert all(c.title.replace("+", "&#43;") in html or c.title in html for c in dists)


def report_html(report):
    from advisor.report.render import render

    return render(report, "html")
