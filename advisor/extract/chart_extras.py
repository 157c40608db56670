"""What the charts add to the curves, computed where the curves are made (issue 30: the report draws, it does
not compute): the baseline's noise band around each baseline loss curve, and the loss scale's drops as markers.
"""

from __future__ import annotations

import math

import numpy as np

from advisor.chart_data import BAND_SUFFIX, Marker, Series
from advisor.extract.curves import running_median


def _finite_xy(s: Series, finite_x: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The series' points as float arrays, without those whose y (and x, with ``finite_x``) is not finite."""
    x = np.asarray(s.x, dtype=np.float64)
    y = np.asarray([np.nan if v is None else v for v in s.y], dtype=np.float64)
    ok = np.isfinite(y) & (np.isfinite(x) if finite_x else True)
    return x[ok], y[ok]


def baseline_band(s: Series, r: float | None, min_band: float) -> Series | None:
    """The baseline's noise band around the baseline curve ``s``: its running median x (1 ± r).

    ``r``: the band the loss-curve comparison used (``baseline_deviation.noise_band_ratio``); without one, the
    same estimate made here: 3x the median relative distance of the curve from its running median, at least
    ``min_band``. None when the curve has fewer than three finite points."""
    x, y = _finite_xy(s)
    if y.size < 3:
        return None
    smooth = running_median(y, min(max(3, y.size // 20), 101))
    if r is None or not math.isfinite(r) or r <= 0:
        scale = np.where(np.abs(smooth) > 0, np.abs(smooth), 1.0)
        r = max(3 * float(np.median(np.abs(y - smooth) / scale)), min_band)
    width = r * np.abs(smooth)
    return Series(
        chart=s.chart,
        label=f"{s.label}{BAND_SUFFIX}{100 * r:.0f}%",
        side="baseline",
        style="band",
        x=[float(v) for v in x],
        y=[float(v) for v in smooth + width],
        y_low=[float(v) for v in smooth - width],
        x_label=s.x_label,
        y_label=s.y_label,
    )


def loss_scale_drop_markers(s: Series) -> list[Marker]:
    """The steps where the run's loss scale went down: one marker each on the loss-scale chart, and one on the
    loss chart at the first ("loss scale drops (Nx, first)")."""
    x, y = _finite_xy(s, finite_x=False)
    if y.size < 2:
        return []
    drops = sorted({float(v) for v in x[1:][np.diff(y) < 0]})
    if not drops:
        return []
    n = len(drops)
    return [Marker(chart="loss_scale", x=d, kind="scale_drop", label="loss scale drop") for d in drops] + [
        Marker(
            chart="loss", x=drops[0], kind="scale_drop", label="loss scale drops" + (f" ({n}x, first)" if n > 1 else "")
        )
    ]
