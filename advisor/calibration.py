"""From the rules' combined certainty factor to a confidence that reads as a probability.

The rules' confidences are set by hand, one rule at a time, and combined by
rank.py; measured on labelled runs, the combined figure is not a probability
(of the causes it put at 0.3-0.5, about one in seven was right). A monotone
map, learnt from labelled runs by isotonic regression (pool-adjacent-violators,
Zadrozny & Elkan 2002) and shipped as data in
``advisor/knowledge/calibration_map.py``, turns it into one: of the causes
shown at 70-80 %, about three in four should be right.

The map is monotone, so it never changes which cause ranks first; it is
piecewise linear between its knots, and the identity where it has none. It is
refitted by one command (``python benchmarks/calibrate.py``, see
docs/calibration.md); ``raw_confidence`` in the report keeps the figure before
the map.
"""

from __future__ import annotations

import bisect
from typing import Sequence

from advisor.knowledge.calibration_map import KNOTS


def calibrate(raw: float, knots: Sequence[tuple[float, float]] = KNOTS) -> float:
    """The calibrated confidence of a combined certainty factor ``raw`` (values <= 0 stay 0)."""
    if raw <= 0:
        return 0.0
    raw = min(raw, 1.0)
    if not knots:
        return raw
    xs = [x for x, _ in knots]
    i = bisect.bisect_right(xs, raw)
    if i == 0:  # below the first knot: straight from (0, 0)
        x1, y1 = knots[0]
        return y1 * raw / x1 if x1 > 0 else y1
    if i == len(knots):  # above the last knot: straight to (1, last y), never above it
        x0, y0 = knots[-1]
        return y0
    (x0, y0), (x1, y1) = knots[i - 1], knots[i]
    return y0 + (y1 - y0) * (raw - x0) / (x1 - x0) if x1 > x0 else y1


def fit_isotonic(points: Sequence[tuple[float, bool]], min_block: int = 8) -> list[tuple[float, float]]:
    """Knots of the isotonic (non-decreasing) fit of hit against raw confidence.

    Pool-adjacent-violators over the points sorted by raw confidence; blocks smaller than ``min_block``
    are pooled with a neighbour so that no knot rests on a handful of runs. Each block gives one knot:
    (its mean raw confidence, its hit rate). Hit rates are kept inside [0.02, 0.98]: a few dozen labelled
    runs cannot show certainty either way.
    """
    pts = sorted((float(x), 1.0 if hit else 0.0) for x, hit in points if x > 0)
    blocks: list[list[float]] = []  # [sum of raw, sum of hits, count], hit rates increasing
    for x, y in pts:
        blocks.append([x, y, 1.0])
        _pool_violators(blocks)
    merged: list[list[float]] = []
    for b in blocks:  # pool a block that is too small with the one before, then restore the order
        if merged and (b[2] < min_block or merged[-1][2] < min_block):
            merged[-1] = [merged[-1][k] + b[k] for k in range(3)]
        else:
            merged.append(list(b))
        _pool_violators(merged)
    return [(round(sx / n, 4), round(min(max(sy / n, 0.02), 0.98), 4)) for sx, sy, n in merged]


def _pool_violators(blocks: list[list[float]]) -> None:
    """Merge the last blocks while their hit rates do not increase (pool-adjacent-violators)."""
    while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
        b = blocks.pop()
        blocks[-1] = [blocks[-1][k] + b[k] for k in range(3)]
