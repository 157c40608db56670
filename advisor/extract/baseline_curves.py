"""The run's loss curve against the baseline's, aligned by step: where it leaves the baseline's noise band,
and by how much it ends above or below (``baseline_deviation`` facts; the loss-curve extractor reports them,
the benchmark-gap extractor reads them)."""

from __future__ import annotations

import numpy as np

from advisor.extract.view.curves import curve_xy, step_int
from advisor.extract.curves import CurveThresholds, align, first_sustained, running_median, shape
from advisor.facts.base import Source
from advisor.facts.loss_curve import BaselineDeviation
from advisor.read.logs.records import MetricSeries


def baseline_deviation(
    run: MetricSeries, base: MetricSeries, split: str, th: CurveThresholds
) -> BaselineDeviation | None:
    rx, ry, _, runit, rs = curve_xy(run)
    bx, by, _, bunit, bs = curve_xy(base)
    if runit != bunit:
        return None
    rx, ry, bx, by = rx[rs:], ry[rs:], bx[bs:], by[bs:]
    run_nf = bool((~np.isfinite(ry)).any())
    base_nf = bool((~np.isfinite(by)).any())
    rf, bf = np.isfinite(ry), np.isfinite(by)
    rx, ry, bx, by = rx[rf], ry[rf], bx[bf], by[bf]
    if ry.size < 3 or by.size < 3:
        return None
    k = min(max(3, by.size // 20), 101)
    bsm = running_median(by, k)
    rsm = running_median(ry, min(max(3, ry.size // 20), 101))
    x, rv, bv = align(rx, rsm, bx, bsm)
    if x.size < 3:
        return None
    sh = shape(bx, by, th)
    band = max(3 * sh.noise_ratio if sh else 0.0, th.min_band)
    dev = (rv - bv) / np.where(np.abs(bv) > 0, np.abs(bv), 1.0)
    i = first_sustained(np.abs(dev) > band, 3)
    last = float(dev[-1])
    return BaselineDeviation(
        split=split,
        aligned_points=int(x.size),
        noise_band_ratio=band,
        rel_deviation_last=last,
        rel_deviation_max=float(np.max(np.abs(dev))),
        first_departure_step=step_int(float(x[i])) if i is not None else None,
        is_above_baseline=bool(last > band),
        is_below_baseline=bool(last < -band),
        run_diverged_alone=run_nf and not base_nf,
        side="run",
        source=Source(path=run.path),
    )
