"""What the report draws of a run's weights over the steps (advisor/extract/dynamics.py computes, this picks and
shapes): which layers get a line on the weight chart and which a distribution (TensorBoard's and MindInsight's
views), and the series for them, thinned to at most 1000 points."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from advisor.chart_data import Series

if TYPE_CHECKING:  # (a layer's tracked weights and gradients, as dynamics.py holds them)
    from advisor.extract.dynamics import ParamTrace as Param
    from advisor.facts.dynamics import TensorDynamics


def downsample(x: np.ndarray, y: np.ndarray, n: int = 1000) -> tuple[list[float], list[float | None]]:
    if x.size > n:
        idx = np.unique(np.linspace(0, x.size - 1, n).astype(np.int64))
        x, y = x[idx], y[idx]
    return [float(v) for v in x], [float(v) if math.isfinite(v) else None for v in y]


#: matrix parameters drawn on the weight chart, at most
MAX_WEIGHT_LINES = 6


#: layers whose weight distribution over the steps the report draws, at most
MAX_DISTRIBUTIONS = 2


def distribution_params(params: list[Param]) -> list[Param]:
    """The layers drawn as a distribution over the steps (MindInsight's histogram view, TensorBoard's
    distributions): the ones the checks found notable, else the first and the last matrix layer."""
    mats = [p for p in params if p.fact.is_matrix and p.weight_spread is not None and p.weight_spread.shape[1] >= 2]
    notable = [p for p in mats if p.notable]
    return (notable or ([mats[0], mats[-1]] if len(mats) > 1 else mats))[:MAX_DISTRIBUTIONS]


def distribution_series(p: Param, side: str) -> list[Series]:
    """min..max and mean +- std bands and the mean line of one layer's weights over the steps."""
    assert p.weight_steps is not None and p.weight_std is not None and p.weight_spread is not None
    steps = p.weight_steps.astype(np.float64)
    mean, lo, hi = p.weight_spread
    chart = f"weight_dist:{p.fact.name}"
    note = " (flagged by a check)" if p.notable else ""
    out = []
    for label, low, high in (("min to max", lo, hi), ("mean +- std", mean - p.weight_std, mean + p.weight_std)):
        x, y = downsample(steps, high)
        _, y_low = downsample(steps, low)
        if any(v is None for v in y_low):
            continue  # a band needs both edges everywhere; a non-finite step shows on the mean line
        out.append(
            Series(
                chart=chart,
                label=f"{p.fact.name}{note}: {label}",
                side=side,
                style="band",
                x=x,
                y=y,
                y_low=[float(v) for v in y_low if v is not None],
                y_label="weight value",
            )
        )
    x, y = downsample(steps, mean)
    out.append(Series(chart=chart, label=f"{p.fact.name}{note}: mean", side=side, x=x, y=y, y_label="weight value"))
    return out


def weight_chart_params(params: list[Param], special: set[str | None]) -> list[Param]:
    """The matrix parameters whose weight std the report draws over the steps (as TensorBoard's and
    MindInsight's distribution views do, one line per layer): the first and last layer, the ones a check found
    notable (frozen, no gradient, an odd initial scale), then others spread over the depth."""
    mats = [p for p in params if p.fact.is_matrix and p.weight_std is not None and p.weight_std.size >= 2]
    picked = [p.fact.name in special or p.notable for p in mats]
    chosen = [p for p in mats if p.fact.name in special] + [p for p in mats if p.notable and p.fact.name not in special]
    rest = [p for p, taken in zip(mats, picked) if not taken]  # not `in chosen`: that compares their arrays
    room = MAX_WEIGHT_LINES - len(chosen)
    if room > 0 and rest:
        chosen += [rest[int(i)] for i in np.unique(np.linspace(0, len(rest) - 1, min(room, len(rest))).astype(int))]
    return sorted(chosen[:MAX_WEIGHT_LINES], key=lambda p: p.fact.layer_index)


def dynamics_series(
    params: list[Param], summary: TensorDynamics, gsteps: np.ndarray, gnorm: np.ndarray, side: str
) -> list[Series]:
    """The charts of one tensors file: the global gradient norm, the early and late layers' gradient RMS, the
    chosen layers' weight std and distributions, each thinned."""
    out: list[Series] = []
    if gsteps.size:
        x, y = downsample(gsteps.astype(np.float64), gnorm)
        out.append(
            Series(
                chart="grad_norm",
                label="global gradient norm",
                side=side,
                x=x,
                y=y,
                y_label="gradient norm",
                log_y=True,
            )
        )
    by_name = {p.fact.name: p for p in params}
    for label, pname in (("early", summary.early_layer), ("late", summary.late_layer)):
        if pname is not None:
            p = by_name[pname]
            x, y = downsample(p.grad_steps.astype(np.float64), p.grad_rms)
            out.append(
                Series(
                    chart="grad_norm",
                    label=f"{label} layer {pname} (gradient rms)",
                    side=side,
                    x=x,
                    y=y,
                    y_label="gradient norm",
                    log_y=True,
                )
            )
    for p in weight_chart_params(params, {summary.early_layer, summary.late_layer}):
        assert p.weight_steps is not None and p.weight_std is not None
        x, y = downsample(p.weight_steps.astype(np.float64), p.weight_std)
        out.append(
            Series(
                chart="weight_std",
                label=f"{p.fact.name}" + (" (frozen)" if p.fact.is_unchanged else ""),
                side=side,
                x=x,
                y=y,
                y_label="weight std",
                log_y=True,
            )
        )
    for p in distribution_params(params):
        out.extend(distribution_series(p, side))
    return out
