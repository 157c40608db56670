"""Loss-scale history and overflow messages -> ``loss_scale_trend`` / ``overflow_events`` facts. No causes.

An extractor of its own (the floating-point-exception stage); its loss-scale series is drawn with the other
logged metrics by the loss-curve extractor."""

from __future__ import annotations

import numpy as np

from advisor.chart_data import Marker
from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.extract.view.curves import train_span
from advisor.extract.options import read_group
from advisor.extract.curves import CurveThresholds
from advisor.facts.base import Source
from advisor.facts.mixed_precision import LossScaleTrend, OverflowEvents
from advisor.read.logs.merge import MergedRun
from advisor.read.logs.records import LogEvent, MetricSeries


def loss_scale_trend(
    series: MetricSeries, span: tuple[float, float] | None, th: CurveThresholds, side: str
) -> LossScaleTrend | None:
    steps, _, vals, lines = series.buf.arrays()
    ok = np.isfinite(vals)
    v = vals[ok]
    if v.size == 0:
        return None
    st = steps[ok]
    down = np.flatnonzero(np.diff(v) < 0) + 1
    late = 0
    if span is not None and span[1] > span[0] and np.isfinite(st).all():
        cut = span[0] + th.calibration_share * (span[1] - span[0])
        late = int((st[down] > cut).sum())
    return LossScaleTrend(
        points=int(series.buf.count),
        initial_value=float(v[0]),
        final_value=float(v[-1]),
        min_value=float(v.min()),
        reductions=int(down.size),
        late_reductions=late,
        reached_one=bool(v.min() <= 1.0),
        final_to_initial_ratio=float(v[-1] / v[0]) if v[0] != 0 else None,
        is_constant=bool(np.all(v == v[0])),
        side=side,
        source=Source(path=series.path, line=int(lines[0]), line_end=int(lines[-1])),
    )


def overflow_events(
    events: list[LogEvent], count: int, path: str, span: tuple[float, float] | None, th: CurveThresholds, side: str
) -> OverflowEvents:
    steps = np.array([e.step for e in events if e.step is not None], dtype=np.float64)
    steps_logged = None
    rate = late_rate = None
    late = 0
    if span is not None and span[1] > span[0]:
        steps_logged = int(span[1] - span[0]) + 1
        rate = count / steps_logged
        cut = span[0] + th.calibration_share * (span[1] - span[0])
        if steps.size:
            late = int(round((steps > cut).sum() * count / max(len(events), 1)))
        late_rate = late / max(span[1] - cut, 1.0)
    first = events[0] if events else None
    return OverflowEvents(
        count=count,
        first_step=int(steps.min()) if steps.size else None,
        last_step=int(steps.max()) if steps.size else None,
        steps_logged=steps_logged,
        rate=rate,
        late_count=late,
        late_rate=late_rate,
        side=side,
        source=Source(path=path, line=first.line if first else None, line_end=events[-1].line if events else None),
    )


def side_facts(merged: MergedRun, side: str, th: CurveThresholds, out: Extraction) -> bool:
    """The loss-scale trend and overflow facts of one side, and the run's first-overflow marker; True when any."""
    found = False
    span = train_span(merged)
    scale = merged.series.get("train/loss_scale")
    if scale is not None:
        trend = loss_scale_trend(scale, span, th, side)
        if trend is not None:
            out.facts.append(trend)
            found = True
    n_over = merged.event_counts.get("overflow", 0)
    if n_over or scale is not None:
        events = [e for e in merged.events if e.kind == "overflow"]
        out.facts.append(
            overflow_events(
                events, n_over, merged.event_paths.get("overflow", scale.path if scale else ""), span, th, side
            )
        )
        found = True
        first_at = next((e.step for e in events if e.step is not None), None)
        if first_at is None and events and span is not None:
            first_at = span[0]  # printed before the first logged step
        if side == "run" and first_at is not None:
            out.markers.append(
                Marker(
                    chart="loss_scale" if scale is not None else "loss",
                    x=float(first_at),
                    label=f"first of {n_over} overflows",
                    kind="overflow",
                )
            )
    return found


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    th = read_group(CurveThresholds, pair.options)
    for side in pair.sides():
        if side_facts(pair.view(side).curves, side.side, th, out) and side.side == "run":
            used = [log.shown for log in side.logs if log.is_used]
            out.checks.append(CheckRun(stage="floating_point_exceptions", inputs=used))
    return out
