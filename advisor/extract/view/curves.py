"""Which logged series is a side's primary loss, and its x axis: shared by the curve and loss-scale extractors.

The merged logs of a side (``RunView.curves``) hold every series under its normalised key; these pure
functions pick the main loss of a split and give any series as (x, y) along steps, epochs or its index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from advisor.knowledge.metrics import lower_is_better
from advisor.read.logs.merge import MergedRun
from advisor.read.logs.records import MetricSeries
from advisor.read.logs.keys import LOSS_NAMES


@dataclass
class FinalScore:
    """A side's last logged evaluation score: its key, value, direction and file (the benchmark gap compares the
    two sides' ones)."""

    name: str
    last: float
    lower_better: bool
    path: str


def primary_loss(merged: MergedRun, split: str) -> MetricSeries | None:
    """The main loss of a split: the best-named loss series, else the first component loss logged."""
    cands = [s for s in merged.series.values() if s.key.split == split]
    for agg in (False, True):
        for name in LOSS_NAMES:
            for s in cands:
                if s.key.metric == "loss" and s.key.base == name and s.name.endswith("@epoch") == agg:
                    return s
    parts = sorted(
        (s for s in cands if s.key.metric == "loss_part" and not s.name.endswith("@epoch")), key=lambda s: s.order
    )
    return parts[0] if parts else None


def curve_xy(s: MetricSeries) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, int]:
    """(x, y, lines, x unit, index where the last run starts) of a series, in file order."""
    steps, epochs, vals, lines = s.buf.arrays()
    have = np.isfinite(steps)
    if have.all() and steps.size:
        x, unit = steps, "step"
    elif steps.size and have.mean() >= 0.5:
        idx = np.where(have, np.arange(steps.size), 0)
        np.maximum.accumulate(idx, out=idx)
        x, unit = steps[idx], "step"
        if not have[0]:
            x[: int(np.argmax(have))] = steps[have][0]
    elif epochs.size and np.isfinite(epochs).all():
        x, unit = epochs, "epoch"
        if s.epoch_map is not None:
            me, ms = s.epoch_map
            if epochs.min() >= me[0] and epochs.max() <= me[-1]:
                x, unit = np.interp(epochs, me, ms), "step"
    else:
        x, unit = np.arange(vals.size, dtype=np.float64), "index"
    start = s.restarts[-1] if s.restarts else 0
    return x, vals, lines, unit, start


def train_span(merged: MergedRun) -> tuple[float, float] | None:
    """(first, last) step of the train loss when it is logged by step, else None."""
    s = primary_loss(merged, "train")
    if s is None:
        return None
    x, _, _, unit, _ = curve_xy(s)
    if unit != "step" or x.size < 2:
        return None
    return float(x.min()), float(x.max())


def step_int(v: float | None) -> int | None:
    return None if v is None or not math.isfinite(v) else int(round(v))


def final_score(merged: MergedRun) -> FinalScore | None:
    """The last finite value of the first eval score logged (accuracy, f1, wer ...), with its direction."""
    score = next(
        (
            s
            for s in sorted(merged.series.values(), key=lambda s: s.order)
            if s.key.split == "eval" and s.key.metric == "score"
        ),
        None,
    )
    if score is None:
        return None
    _, y, _, _, start = curve_xy(score)
    y = y[start:][np.isfinite(y[start:])]
    if not y.size:
        return None
    return FinalScore(
        name=score.raw_key,
        last=float(y[-1]),
        path=score.path,
        lower_better=lower_is_better(score.key.base),
    )
