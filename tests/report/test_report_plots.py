"""Chart data -> SVG geometry: axes, units, log scale, gaps, bars, markers (report/plots.py)."""

from __future__ import annotations

import math

import pytest

from advisor.chart_data import Marker, Series
from advisor.report.model import Chart
from advisor.extract.chart_extras import baseline_band, loss_scale_drop_markers
from advisor.extract.curves import CurveThresholds
from advisor.report.plots import LEFT, MAX_POINTS, PH, PW, TOP, build, build_all, in_drawing_order, nice_ticks
from advisor.report_assembly import with_divergence_markers


def _pts(seg: str) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in seg.split()]


def test_nice_ticks_are_round_and_cover_the_range():
    assert nice_ticks(0, 1) == [0, 0.25, 0.5, 0.75, 1.0]
    assert nice_ticks(3, 1234, 6) == [250, 500, 750, 1000]  # steps of 1, 2, 2.5, 5 x 10^k, at least (hi-lo)/(n-1)
    assert nice_ticks(-0.013, 0.021) == pytest.approx([-0.01, 0, 0.01, 0.02])
    assert nice_ticks(5, 5) == [5]


def test_line_maps_data_to_the_plot_area_and_breaks_at_nan():
    s = Series(chart="loss", label="train loss", x=[0, 10, 20, 30, 40], y=[4.0, 3.0, None, 2.0, 1.0])
    view = build(Chart(id="loss", title="Loss", series=[s]))
    line = view.lines[0]
    assert len(line.segments) == 2  # no line drawn across the missing value
    first, second = _pts(line.segments[0]), _pts(line.segments[1])
    assert first[0][0] == LEFT and second[-1][0] == LEFT + PW  # x spans the plot width
    # y: 1..4 padded by 6% of the range on each side; larger values higher up
    pad = 0.06 * 3
    assert first[0][1] == pytest.approx(TOP + (1 - (4 - (1 - pad)) / (3 + 2 * pad)) * PH, abs=0.06)
    assert first[0][1] < second[-1][1]
    assert [t.label for t in view.xticks] == ["0", "10", "20", "30", "40"]
    assert not view.log_y and view.notes == []


def test_values_spanning_decades_switch_to_log_and_non_positive_are_skipped():
    y = [10.0 ** k for k in range(8)]
    view = build(Chart(id="loss", title="Loss", series=[Series(chart="loss", label="train loss", x=list(range(8)), y=y)]))
    assert view.log_y and "log scale" in view.notes[0]
    ys = [p[1] for p in _pts(view.lines[0].segments[0])]
    steps = [b - a for a, b in zip(ys, ys[1:])]
    assert max(steps) - min(steps) < 0.2  # equal distances per decade
    assert [t.label for t in view.yticks] == ["1", "100", "1e4", "1e6"]  # whole decades, at most ~6 labels
    near_zero = build(Chart(id="x", title="x", series=[Series(chart="x", label="a", x=[0, 1, 2], y=[0.0, 1.0, 5000.0])]))
    assert not near_zero.log_y  # a zero cannot go on a log axis: stay linear


def test_one_x_unit_per_picture_and_its_markers_follow():
    train = Series(chart="loss", label="train loss (loss)", x=[1, 50, 100], y=[2.0, 1.0, 0.5])
    ev = Series(chart="loss", label="eval loss (val_loss)", x=[1, 2], y=[1.5, 1.2], x_label="epoch")
    markers = [Marker(chart="loss", x=1, label="first non-finite eval loss", kind="nonfinite"),
               Marker(chart="loss", x=60, label="first non-finite train loss", kind="nonfinite")]
    view = build(Chart(id="loss", title="Loss", series=[train, ev], markers=markers))
    assert [l.label for l in view.lines] == ["train loss (loss)"]
    assert view.notes == ["eval loss (val_loss) is logged per epoch, not per step: not drawn here"]
    assert [m.label for m in view.markers] == ["first non-finite train loss"]
    assert view.markers[0].shade == pytest.approx(view.right - view.markers[0].x)


def test_baseline_shares_the_run_colour_dashed():
    run = Series(chart="loss", label="train loss", x=[0, 1, 2], y=[3.0, 2.0, 1.0])
    base = run.model_copy(update={"side": "baseline", "y": [3.0, 2.5, 2.0]})
    other = Series(chart="loss", label="eval loss", x=[0, 2], y=[3.0, 1.5])
    view = build(Chart(id="loss", title="Loss", series=[run, other, base]))
    by = {l.label: l for l in view.lines}
    assert by["train loss (baseline)"].dashed and not by["train loss"].dashed
    assert by["train loss (baseline)"].color == by["train loss"].color != by["eval loss"].color


def test_long_series_are_thinned_and_a_lone_value_is_a_dot():
    n = 5000
    s = Series(chart="loss", label="train", x=list(range(n)), y=[1 + math.sin(i / 50) for i in range(n)])
    one = Series(chart="loss", label="eval", x=[2500.0], y=[1.2])
    view = build(Chart(id="loss", title="Loss", series=[s, one]))
    assert len(_pts(view.lines[0].segments[0])) == MAX_POINTS
    assert view.lines[1].segments == [] and len(view.dots) == 1 and view.dots[0].label == "eval"


def test_steps_going_back_start_a_new_line():
    s = Series(chart="loss", label="train", x=[0, 10, 20, 10, 20, 30], y=[3.0, 2.0, 1.5, 2.0, 1.4, 1.0])
    view = build(Chart(id="loss", title="Loss", series=[s]))
    assert [len(_pts(g)) for g in view.lines[0].segments] == [3, 3]  # a resumed run, not a zigzag back


def test_constant_series_is_centred_not_squashed():
    view = build(Chart(id="lr", title="lr", series=[Series(chart="lr", label="lr", x=[0, 1, 2], y=[0.05] * 3)]))
    assert {p[1] for p in _pts(view.lines[0].segments[0])} == {TOP + PH / 2}
    assert [t.label for t in view.yticks] == ["0.045", "0.05", "0.055"]


def test_grouped_bars_over_the_union_of_classes():
    train = Series(chart="class_hist", label="train", style="bar", x=[0, 1, 2], y=[90, 10, 50], categories=["a", "b", "c"])
    ev = Series(chart="class_hist", label="eval", style="bar", x=[0, 1], y=[30, 20], categories=["a", "c"])
    view = build(Chart(id="class_hist", title="Class counts", series=[train, ev]))
    assert view.kind == "bars" and len(view.bars) == 5
    assert [t.label for t in view.xticks] == ["a", "b", "c"]
    tallest = max(view.bars, key=lambda b: b.h)
    assert tallest.label == "train: class a: 90" and tallest.h == pytest.approx(90 / 100 * PH, abs=0.1)  # axis to 100
    assert view.notes == ["eval: no samples of class b"]
    a_train, a_eval = [b for b in view.bars if ": class a:" in b.label]
    assert a_train.x < a_eval.x < a_train.x + 2 * a_train.w  # side by side in one group


def test_points_highlight_the_source_operator():
    s = Series(chart="op_error", label="err", style="points", x=[0, 1, 2, 3], y=[1e-6, 1e-6, 0.4, None], log_y=True,
               x_label="operator (execution order)")
    view = build(Chart(id="op_error", title="ops", series=[s],
                       markers=[Marker(chart="op_error", x=2, label="source: Add.3", kind="source")]))
    assert len(view.dots) == 3 and [d.highlight for d in view.dots] == [False, False, True]
    assert view.markers[0].label == "source: Add.3" and view.markers[0].shade == 0
    long = "source: Fused.FusedMatMulBiasAddGeLU.0.forward"
    view = build(Chart(id="op_error", title="ops", series=[s], markers=[Marker(chart="op_error", x=2, label=long)]))
    assert view.markers[0].label.endswith("…") and len(view.markers[0].label) < len(long) == len(view.markers[0].full)


def test_marker_labels_close_together_go_to_different_rows():
    s = Series(chart="loss", label="train", x=[0, 1000], y=[1.0, 2.0])
    ms = [Marker(chart="loss", x=x, label=f"event {x}", kind="event") for x in (500, 510, 520)]
    view = build(Chart(id="loss", title="Loss", series=[s], markers=ms))
    assert len({m.label_y for m in view.markers}) == 3
    far = build(Chart(id="loss", title="Loss", series=[s], markers=[ms[0].model_copy(update={"x": 10}),
                                                                 ms[1].model_copy(update={"x": 990})]))
    assert len({m.label_y for m in far.markers}) == 1  # room on one row
    assert far.markers[1].anchor == "end"  # near the right edge the label goes to the left


def test_many_events_become_ticks_with_one_labelled_line():
    s = Series(chart="loss_scale", label="loss scale", x=list(range(40)), y=[2.0 ** (20 - i // 2) for i in range(40)],
               log_y=True)
    marks = loss_scale_drop_markers(s)  # made by the loss-curve extractor with the series
    assert [m.x for m in marks if m.chart == "loss_scale"] == [float(i) for i in range(2, 40, 2)]
    charts = [Chart(id="loss_scale", title="Loss scale", series=[s], markers=[m for m in marks if m.chart == "loss_scale"]),
              Chart(id="loss", title="Loss", series=[Series(chart="loss", label="train", x=[0, 39], y=[2.0, 1.0])],
                    markers=[m for m in marks if m.chart == "loss"])]
    loss, scale = build_all(charts)  # loss comes first
    assert [m.label for m in loss.markers] == ["loss scale drops (19x, first)"]
    assert sum(m.tick_only for m in scale.markers) == 19
    assert [m.label for m in scale.markers if not m.tick_only] == ["loss scale drop (19x, first)"]


def test_divergence_start_comes_from_the_causes_facts():
    """The report assembly adds it to the Report's loss chart (the JSON carries it); the report layer draws it."""
    class Ev:
        facts = {"loss_curve": {"kind": "loss_curve", "side": "run", "split": "train", "diverged": True,
                                "divergence_step": 40, "first_nonfinite_step": 70}}

    class Cause:
        evidence = [Ev()]

    chart = Chart(id="loss", title="Loss", series=[Series(chart="loss", label="train", x=[0, 80], y=[2.0, 3.0])])
    (loss,) = with_divergence_markers([chart], [Cause()])
    assert [(m.x, m.label, m.kind) for m in loss.markers] == [(40.0, "train loss starts to rise", "divergence")]
    Ev.facts["loss_curve"]["divergence_step"] = 70  # same step as the first NaN: the NaN marker says it already
    assert with_divergence_markers([chart], [Cause()])[0].markers == []


def test_nothing_finite_is_an_empty_picture_with_a_reason():
    view = build(Chart(id="loss", title="Loss", series=[Series(chart="loss", label="t", x=[0, 1], y=[None, None])]))
    assert view.empty and view.notes == ["no finite values to draw"]


def test_baseline_band_around_the_baseline_curve():
    x = [float(i) for i in range(60)]
    base = Series(chart="loss", label="train loss (loss)", side="baseline", x=x, y=[2.0 - i / 40 for i in x])
    run = Series(chart="loss", label="train loss (loss)", x=x, y=[2.0 - i / 50 for i in x])
    estimated = baseline_band(base, None, CurveThresholds().min_band)  # made by the loss-curve extractor
    assert estimated.style == "band" and estimated.label == "train loss (loss): baseline band ±3%"  # smooth: the floor
    assert estimated.y[10] == pytest.approx(1.75 * 1.03) and estimated.y_low[10] == pytest.approx(1.75 * 0.97)
    quoted = baseline_band(base, 0.1, CurveThresholds().min_band)  # the band the comparison used
    assert quoted.label == "train loss (loss): baseline band ±10%"
    chart = Chart(id="loss", title="Loss", series=[run, base, quoted])
    assert in_drawing_order([chart])[0].series[0] == quoted
    (view,) = build_all([chart])
    assert len(view.bands) == 1 and view.bands[0].color == view.lines[0].color == view.lines[1].color
    assert [it.label for it in view.legend] == ["train loss (loss): baseline band ±10%", "train loss (loss)",
                                                "train loss (loss) (baseline)"]