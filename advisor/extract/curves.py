"""Numbers on logged curves: noise-aware shape features. Pure numpy, float64; no causes.

Every threshold is relative (to the curve's own level or noise) and lives in
``CurveThresholds``; a user overrides one with the extractor option
``loss_curve.<name>`` (``--param`` on the command line).

How the features are computed (n finite points of the last run in the series):
- level windows: ``w = max(3, n // 10)`` points; start/end level = their medians;
- running median with an odd window ``k = max(3, n // 20)`` gives the smoothed
  curve ``s``; residuals ``y - s`` give the noise (1.4826 x MAD);
- spike: residual above ``spike_z`` sigmas and above ``spike_min_ratio`` of ``s``;
- end trend: least-squares line over the points in the last ``end_share`` of the
  run's steps (at least ``end_min_points`` points); its change over that window
  relative to the fitted level at the window's start (a fall stops at -100%), and
  its t statistic, with the noise taken as the smaller of the window's own residual
  spread and the spread of first differences over the curve's second half;
- plateau: a wider running median (``max(5, n // 10)`` points) stays within
  ``plateau_band`` of the end level (or 3 noise sigmas of that median, whichever
  is larger) for 95% of the points from some step to the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from advisor.read.logs.keys import printed_as


@dataclass(frozen=True)
class CurveThresholds:
    spike_z: float = field(default=6.0, metadata={"help": "robust sigmas above the running median"})
    spike_min_ratio: float = field(
        default=0.25, metadata={"help": "a spike is also at least this share of the running median above it"}
    )
    rise_ratio_diverged: float = field(
        default=2.0, metadata={"help": "end level >= this x the smoothed minimum (and above the start): diverged"}
    )
    rise_noise_z_diverged: float = field(
        default=4.0,
        metadata={
            "help": "a divergence also rises this many times the curve's step-to-step noise (a minibatch loss that only scatters around one level rises that far between its luckiest and unluckiest batches)"
        },
    )
    end_share: float = field(default=0.2, metadata={"help": 'share of the run whose trend tells "still falling"'})
    end_min_points: float = field(default=5, metadata={"help": "the end window holds at least this many points"})
    fall_ratio: float = field(
        default=0.03, metadata={"help": "relative fall over that share that counts as still falling"}
    )
    trend_t: float = field(default=3.0, metadata={"help": "|t| above which a trend is beyond noise"})
    plateau_band: float = field(
        default=0.02, metadata={"help": "relative band around the end level that counts as flat"}
    )
    plateau_share: float = field(default=0.5, metadata={"help": "flat for at least this share of the run: plateau"})
    stagnant_drop: float = field(
        default=0.05, metadata={"help": "a plateau having removed less than this share of the loss: stagnant"}
    )
    oscillation_noise: float = field(
        default=0.15,
        metadata={
            "help": "noise_ratio at or above this, with drop_ratio below oscillation_drop: oscillating without progress"
        },
    )
    oscillation_drop: float = field(
        default=0.1,
        metadata={
            "help": "drop_ratio below this, with noise_ratio at or above oscillation_noise: oscillating without progress"
        },
    )
    slow_drop: float = field(default=0.1, metadata={"help": "still falling but removed less than this share: slow"})
    chance_band: float = field(default=0.05, metadata={"help": "|end_level / ln C - 1| within this: at chance level"})
    eval_rise: float = field(
        default=0.05, metadata={"help": "eval loss this far above its best at the last evals: rising"}
    )
    eval_rise_of_range: float = field(
        default=0.05, metadata={"help": "the eval loss's rise is also at least this share of what it had removed"}
    )
    improving_share: float = field(
        default=0.1, metadata={"help": "the end window brought >= this share of the eval curve's whole gain: improving"}
    )
    stalled_share: float = field(
        default=0.02, metadata={"help": "the eval score's end window brought < this share of its gain: stalled"}
    )
    calibration_share: float = field(
        default=0.1, metadata={"help": "first share of the steps where loss-scale reductions are calibration"}
    )
    min_band: float = field(default=0.03, metadata={"help": "smallest relative band around a baseline curve"})


#: windows whose median is taken at once by running_median
_MEDIAN_BLOCK = 4096


def running_median(y: np.ndarray, k: int) -> np.ndarray:
    """Centered running median with an odd window k (edges use the available points)."""
    n = y.size
    if n == 0 or k <= 1:
        return y.astype(np.float64, copy=True)
    k = min(k | 1, n if n % 2 else n - 1) if n > 2 else 1
    if k <= 1:
        return y.astype(np.float64, copy=True)
    h = k // 2
    pad = np.concatenate([np.full(h, y[0]), y, np.full(h, y[-1])])
    win = np.lib.stride_tricks.sliding_window_view(pad, k)
    if np.isnan(y).any():
        out = np.median(win, axis=1)
    else:  # the same values 5-10x faster: only the middle element, in blocks that stay in the cache
        out = np.empty(n, dtype=np.median(win[:1], axis=1).dtype)  # as np.median: float32 stays float32
        for s in range(0, n, _MEDIAN_BLOCK):
            out[s : s + _MEDIAN_BLOCK] = np.partition(win[s : s + _MEDIAN_BLOCK], h, axis=1)[:, h]
    # edges: shrink the window instead of repeating the end value
    for i in range(min(h, n)):
        out[i] = np.median(y[: i + h + 1])
        out[n - 1 - i] = np.median(y[n - 1 - i - h :])
    return out


def robust_sigma(r: np.ndarray) -> float:
    if r.size == 0:
        return 0.0
    med = np.median(r)
    return float(1.4826 * np.median(np.abs(r - med)))


def trend(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(slope, t statistic) of the least-squares line y ~ a + b x (float64)."""
    with np.errstate(over="ignore", invalid="ignore"):  # a diverged curve (1e308): t = 0, no warning on stderr
        return _trend(x, y)


def _trend(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    n = x.size
    if n < 3:
        return 0.0, 0.0
    x = x.astype(np.float64)
    y = y.astype(np.float64)
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    if sxx == 0:
        return 0.0, 0.0
    b = float(((x - xm) * (y - ym)).sum() / sxx)
    resid = y - (ym + b * (x - xm))
    s2 = float((resid**2).sum() / (n - 2))
    se = math.sqrt(s2 / sxx) if s2 > 0 and math.isfinite(s2) else (0.0 if s2 == 0 else math.inf)
    if se == 0:
        return b, (math.copysign(math.inf, b) if b else 0.0)
    if not math.isfinite(b):
        return 0.0, 0.0
    return b, b / se


@dataclass
class Shape:
    start_level: float
    end_level: float
    drop_ratio: float
    min_value: float
    min_index: int
    smooth_min: float
    smooth_min_index: int
    rise_from_min_ratio: float
    noise_ratio: float
    spike_count: int
    spike_max_ratio: float | None
    peak_over_start_ratio: float | None
    frozen_tail_points: int
    end_change_ratio: float | None
    end_trend_t: float | None
    is_still_falling: bool
    plateau_start_index: int | None
    is_plateau: bool
    is_stagnant: bool
    is_oscillating: bool
    is_slow: bool
    diverged_rise: bool


def end_window(x: np.ndarray, th: CurveThresholds) -> int:
    """Points in the end window: those in the last ``end_share`` of the run's x span, at least ``end_min_points``."""
    n = x.size
    cut = x[-1] - th.end_share * (x[-1] - x[0])
    inside = int(n - np.searchsorted(x, cut, side="left")) if np.all(np.diff(x) >= 0) else int((x >= cut).sum())
    return int(min(n, max(inside, int(th.end_min_points))))


def diff_sigma(y: np.ndarray) -> float:
    """Noise of a curve from its first differences (robust: 1.4826 x MAD / sqrt 2); a smooth trend barely moves it."""
    if y.size < 3:
        return 0.0
    d = np.diff(y.astype(np.float64))
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(2.0))


def printed_decimals(v: float) -> int:
    """Decimals of the shortest text that reads back as ``v`` (``17.2694`` -> 4, ``1e-05`` -> 5): the precision a
    log printed it at."""
    text = np.format_float_positional(v, trim="-")
    dot = text.find(".")
    return len(text) - dot - 1 if dot >= 0 else 0


#: the fewest decimals a log is taken to have printed a value at (a parsed ``0.4000`` reads back as ``0.4``, so
#: a coarse value's own decimals understate its precision; logs print losses at four decimals or more)
MIN_PRINTED_DECIMALS = 4


def same_printed(a: float, b: float) -> bool:
    """``a`` and ``b`` are one value printed at two precisions: the finer one rounds to the coarser one at the
    coarser one's decimals, at least four (``17.269388197455335`` and ``17.2694``: a per-batch print and a
    progress bar of the same loss; ``0.41`` and ``0.4`` differ)."""
    if a == b:
        return True
    da, db = printed_decimals(a), printed_decimals(b)
    if da == db:
        return False
    fine, coarse = (a, b) if da > db else (b, a)
    return printed_as(fine, coarse, MIN_PRINTED_DECIMALS)


def frozen_tail_points(y: np.ndarray) -> int:
    """How many values at the end of ``y`` repeat its last value, to the precision each was printed at."""
    n = y.size
    last = float(y[-1])
    changed = np.flatnonzero(y != last)
    # walk back over the values that differ exactly, while each is the last value at another precision
    for i in changed[::-1]:
        if not same_printed(float(y[i]), last):
            return int(n - i - 1)
    return n


def _rel(a: float, b: float) -> float:
    return a / b if b != 0 else (math.inf if a else 0.0)


def shape(x: np.ndarray, y: np.ndarray, th: CurveThresholds) -> Shape | None:
    """Shape features of a finite curve (x increasing); None below 4 points (four carry a trend: a one-epoch
    MindSpore run whose LossMonitor prints every quarter of the epoch)."""
    n = y.size
    if n < 4:
        return None
    w = max(3, n // 10)
    start = float(np.median(y[:w]))
    end = float(np.median(y[-w:]))
    k = min(max(3, n // 20), 101)
    s = running_median(y, k)
    resid = y - s
    sigma = robust_sigma(resid)
    scale = abs(end) if end != 0 else (abs(start) or 1.0)
    noise_ratio = sigma / scale
    spikes = (resid > th.spike_z * max(sigma, 1e-12)) & (resid > th.spike_min_ratio * np.abs(s))
    spike_count = int(spikes.sum())
    spike_max = float(np.max(y[spikes] / np.where(s[spikes] != 0, np.abs(s[spikes]), 1.0))) if spike_count else None
    # the highest value after the start window against the start level: a loss that climbs far above where
    # training started has blown up on the way, whatever it ends at
    peak_over_start = float(np.max(y[w:]) / start) if start > 0 else None
    frozen_tail = frozen_tail_points(y)
    smin_i = int(np.argmin(s))
    smin = float(s[smin_i])
    rise = _rel(end, smin) - 1.0 if smin > 0 else (0.0 if end <= smin else math.inf)
    drop = (start - end) / abs(start) if start != 0 else 0.0
    # trend at the end: the last end_share of the run in x (steps), at least end_min_points points
    span = x[-1] - x[0]
    m = end_window(x, th)
    xe, ye = x[-m:], y[-m:]
    slope, t_own = trend(xe, ye)
    # noise: the window's own residuals (few points: a weak estimate) or the first differences of the curve's
    # second half (robust, but a curved trend adds to it), whichever is smaller
    sigma_d = diff_sigma(y[n // 2 :] if n >= 10 else y)
    sxx = float(((xe - xe.mean()) ** 2).sum())
    t_diff = slope / (sigma_d / math.sqrt(sxx)) if sigma_d > 0 and sxx > 0 else t_own
    t = t_own if abs(t_own) >= abs(t_diff) else t_diff
    end_change = None
    if span > 0 and m >= 2:
        fit_start = float(ye.mean() + slope * (xe[0] - xe.mean()))
        ref = abs(fit_start) if fit_start != 0 else (abs(float(np.median(ye))) or 1.0)
        end_change = max(slope * float(xe[-1] - xe[0]) / ref, -1.0)  # a fall cannot remove more than 100%
    still = bool(end_change is not None and end_change <= -th.fall_ratio and t <= -th.trend_t)
    # plateau: from which index does a wider running median stay (95% of its points) within the band of the end level
    kp = min(max(5, n // 10), 201)
    sp = running_median(y, kp)
    band = max(th.plateau_band * scale, 3 * sigma / math.sqrt(kp))
    outside = (np.abs(sp - end) > band).astype(np.int64)
    out_after = np.cumsum(outside[::-1])[::-1]  # outside points from i to the end
    ok = np.flatnonzero(out_after <= 0.05 * (n - np.arange(n)))
    p_start = int(ok[0]) if ok.size else None
    plateau = bool(p_start is not None and span > 0 and (x[-1] - x[p_start]) >= th.plateau_share * span and not still)
    stagnant = bool(plateau and drop < th.stagnant_drop)
    oscillating = bool(noise_ratio >= th.oscillation_noise and drop < th.oscillation_drop)
    slow = bool(still and 0 <= drop < th.slow_drop)
    noise = diff_sigma(y)
    diverged = bool(
        smin > 0
        and end >= th.rise_ratio_diverged * smin
        and end > start
        and end - smin > th.rise_noise_z_diverged * noise
    )
    return Shape(
        start_level=start,
        end_level=end,
        drop_ratio=drop,
        min_value=float(np.min(y)),
        min_index=int(np.argmin(y)),
        smooth_min=smin,
        smooth_min_index=smin_i,
        rise_from_min_ratio=rise,
        noise_ratio=noise_ratio,
        spike_count=spike_count,
        spike_max_ratio=spike_max,
        peak_over_start_ratio=peak_over_start,
        frozen_tail_points=frozen_tail,
        end_change_ratio=end_change,
        end_trend_t=t if math.isfinite(t) else math.copysign(1e9, t),
        is_still_falling=still,
        plateau_start_index=p_start,
        is_plateau=plateau,
        is_stagnant=stagnant,
        is_oscillating=oscillating,
        is_slow=slow,
        diverged_rise=diverged,
    )


def align(
    run_x: np.ndarray, run_y: np.ndarray, base_x: np.ndarray, base_y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run points inside the baseline's x range with the baseline interpolated there: (x, run, baseline)."""
    if run_x.size == 0 or base_x.size < 2:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    order = np.argsort(base_x, kind="stable")
    bx, by = base_x[order], base_y[order]
    inside = (run_x >= bx[0]) & (run_x <= bx[-1])
    xs = run_x[inside]
    return xs, run_y[inside], np.interp(xs, bx, by)


def first_sustained(mask: np.ndarray, run: int = 3) -> int | None:
    """Index of the first point from which ``mask`` holds for ``run`` consecutive points."""
    if mask.size < run:
        return None
    c = np.convolve(mask.astype(np.int64), np.ones(run, dtype=np.int64), mode="valid")
    hits = np.flatnonzero(c == run)
    return int(hits[0]) if hits.size else None


def downsample(x: np.ndarray, y: np.ndarray, limit: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """At most ``limit`` points, evenly spaced, always keeping the last one and every non-finite value's place."""
    n = x.size
    if n <= limit:
        return x, y
    idx = np.unique(
        np.concatenate([np.linspace(0, n - 1, limit - 50).astype(np.int64), np.flatnonzero(~np.isfinite(y))[:50]])
    )
    return x[idx], y[idx]
