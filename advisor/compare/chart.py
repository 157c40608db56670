"""The comparison's chart data: the error of each operator along the execution order, the source marked."""

from __future__ import annotations

import math

from advisor.chart_data import Marker, Series
from advisor.compare.localise import Localisation

#: points drawn at most (a dump of 10^5 operators is bucketed)
MAX_POINTS = 1000


def op_error_series(loc: Localisation, label: str) -> tuple[list[Series], list[Marker]]:
    """The per-operator error along the execution order (each operator's worst output, euclid_rel_dist or the
    statistics' difference; at most MAX_POINTS points, the largest error of each bucket kept), with the source
    operator and the first NaN/Inf source as markers: what the diagnose report and the compare report draw."""
    xs: list[float] = []
    ys: list[float | None] = []
    for v in loc.ops:
        w = v.worst_output()
        if w is None or w.verdict == "skipped":
            continue
        val = w.metrics.euclid_rel_dist if w.metrics else w.stat_rel_diff
        xs.append(float(v.order))
        ys.append(float(val) if val is not None and math.isfinite(val) else None)
    if len(xs) > MAX_POINTS:  # keep the largest error of each bucket
        step = math.ceil(len(xs) / MAX_POINTS)
        bx, by = [], []
        for i in range(0, len(xs), step):
            seg = [(y if y is not None else math.inf, x) for x, y in zip(xs[i : i + step], ys[i : i + step])]
            y, x = max(seg)
            bx.append(x)
            by.append(None if math.isinf(y) else y)
        xs, ys = bx, by
    series = (
        [
            Series(
                chart="op_error",
                label=f"{label}: relative error per operator",
                style="points",
                x=xs,
                y=ys,
                x_label="operator (execution order)",
                y_label="euclid_rel_dist",
                log_y=True,
            )
        ]
        if xs
        else []
    )
    markers = []
    if loc.source:
        markers.append(
            Marker(chart="op_error", x=float(loc.source.order), label=f"source: {loc.source.op}", kind="source")
        )
    if loc.nonfinite_source:
        markers.append(
            Marker(
                chart="op_error",
                x=float(loc.nonfinite_source.order),
                label=f"first NaN/Inf: {loc.nonfinite_source.op}",
                kind="nonfinite",
            )
        )
    return series, markers
