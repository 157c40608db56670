"""The KL divergences of a tensor pair: the softmax KL's second pass over ranges that were identical in a pair
that differs elsewhere (``kl_accumulate``), and MindStudio's min-max KL over both sides' value ranges
(``minmax_kl``)."""

from __future__ import annotations

import math

import numpy as np

from advisor.compare.accumulator import CHUNK, Accumulator, dot
from advisor.read.dumps import float_chunk


def kl_accumulate(
    r: np.ndarray,
    b: np.ndarray,
    max_run: float,
    max_baseline: float,
    start: int = 0,
    stop: int | None = None,
    chunk: int = CHUNK,
) -> Accumulator:
    """The KL's sums alone over ``[start, stop)``, given both tensors' maxima from a first pass.

    The engine runs this second pass only over ranges of a split tensor that were identical
    throughout while another range of the same pair differs (``accumulate`` leaves such ranges
    without KL sums; identical pairs have KL 0).
    """
    rf, bf = r.reshape(-1), b.reshape(-1)
    stop = rf.size if stop is None else stop
    acc = Accumulator()
    acc.r.max, acc.b.max = max_run, max_baseline
    with np.errstate(all="ignore"):
        for i in range(start, stop, chunk):
            j = min(stop, i + chunk)
            rc, bc = float_chunk(rf[i:j]), float_chunk(bf[i:j])
            d = np.subtract(rc, bc, dtype=np.float64)  # float32 inputs: exact, no copies of r and b
            dd: float | None = dot(d, d)
            if dd is not None and not math.isfinite(dd):  # a NaN/Inf on either side (or a float64 overflow)
                keep = np.isfinite(rc) & np.isfinite(bc)
                rc, bc = rc[keep], bc[keep]
                d = np.subtract(rc, bc, dtype=np.float64)
                dd = None
            if d.size:
                acc._kl_update(rc, bc, d, dd)
    return acc


#: MindStudio's floor of the [0, 1]-scaled values (keeps every probability > 0)
KL_FLOOR = float(np.finfo(np.float32).eps)


def minmax_kl(
    r: np.ndarray, b: np.ndarray, min_r: float, max_r: float, min_b: float, max_b: float, chunk: int = CHUNK
) -> float | None:
    """``kl_div`` (see the module doc) given each side's finite min and max from the first pass.

    With a_i, b_i the scaled, floored values, A = Σ a, B = Σ b:
    KL = Σ (a/A) log((a/A) / (b/B)) = (Σ a log(a/b)) / A - log A + log B, streamed chunk by chunk.
    """
    rf, bf = r.reshape(-1), b.reshape(-1)
    span_r, span_b = max_r - min_r, max_b - min_b
    sum_a = sum_b = t = 0.0
    with np.errstate(all="ignore"):
        for i in range(0, rf.size, chunk):
            rc = np.asarray(float_chunk(rf[i : i + chunk]), dtype=np.float64)
            bc = np.asarray(float_chunk(bf[i : i + chunk]), dtype=np.float64)
            keep = np.isfinite(rc) & np.isfinite(bc)
            if not keep.all():
                rc, bc = rc[keep], bc[keep]
            a = np.maximum((rc - min_r) / span_r if span_r else rc, KL_FLOOR)
            q = np.maximum((bc - min_b) / span_b if span_b else bc, KL_FLOOR)
            sum_a += float(a.sum())
            sum_b += float(q.sum())
            t += float(np.dot(a, np.log(a) - np.log(q)))
    if sum_a <= 0 or sum_b <= 0:
        return None
    value = t / sum_a - math.log(sum_a) + math.log(sum_b)
    return 0.0 if abs(value) < KL_FLOOR else value
