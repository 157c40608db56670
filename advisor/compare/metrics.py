"""Error metrics of one tensor pair, in one chunked pass with float64 accumulation.

This module is the numpy pass (its per-chunk accumulators are in ``advisor.compare.accumulator``)
and the reference for the definitions below; the compiled kernel (``advisor.compare.kernel``,
numba, optional) computes the same accumulator 3-4x faster and the engine uses it for big
comparisons when numba is installed.

``r`` is the run's tensor, ``b`` the baseline's (the reference). Both are
flattened and read ``chunk`` elements at a time (memory maps stay on disk), so
memory does not grow with the tensor size. Partial results of chunks (or of
ranges handled by different threads) merge exactly (``Accumulator.merge``).

Definitions (``d = r - b``; sums run over the positions where both sides are
finite; NaN and Inf are counted per side and never make a pair "pass"):

- ``cosine``            Σ r·b / sqrt(Σ r² · Σ b²); 1 when both are all zero; None (undefined, and
  the verdict says why) when only one is
- ``max_abs_err``       max |d|
- ``mean_abs_err``      Σ|d| / n
- ``rmse``              sqrt(Σ d² / n)
- ``euclid_rel_dist``   ||d||₂ / ||b||₂ (0 when both are zero, inf when only b is)
- ``rel_err``           per element |d| / max(|b|, REL_FLOOR); ``max_rel_err``, ``mean_rel_err``
- ``accum_rel_err``     Σ rel_err (accumulated relative error: the sum of the element-wise relative
  errors, as docs/routine.md defines it; grows with the element count)
- ``accum_abs_err_ratio`` Σ|d| / Σ|b| (the accumulated error relative to the accumulated magnitude:
  size-independent)
- ``rel_err_within_1e3_ratio`` / ``rel_err_within_5e3_ratio``: share of elements whose rel_err is
  within 1/1000 and 5/1000 (msprobe's One/Five Thousandth Err Ratio: a pass share);
  ``rel_err_over_1e3_ratio`` / ``rel_err_over_5e3_ratio``: the share beyond (1 - within)
- ``kl_div``            KL divergence as MindStudio / CANN's accuracy comparison defines it, so the
  figure matches the tools users check against: each side scaled to [0, 1] by its own min and max
  (left as is when max = min), floored at float32's eps, normalised to sum 1; then KL(run || baseline)
  = Σ p log(p / q) with p the run's and q the baseline's distribution. Sums over the positions where
  both sides are finite (MindStudio gives NaN there); a second pass over differing pairs only
  (``minmax_kl``); identical pairs have 0.
- ``softmax_kl``        KL(softmax(b) || softmax(r)) over the whole flattened tensor: the tensors
  are treated as logits and softmax-normalised (streamed with running log-sum-exp); for tensors
  that already hold probabilities this is the KL of their softmax, 0 when equal, > 0 otherwise.
  The exponentials are float32 (the sums float64), so values below ~1e-7 are noise. Where a chunk's
  max|r - b| <= TAYLOR_MAX_DIFF only e^(b-mb) is taken: the run side's sum is Σ e^(b-mb) e^d with e^d
  by a degree-4 Taylor polynomial (relative error < 1e-12), one exponential per element instead of two.
- ``std_run``, ``std_baseline``, ``std_diff``: population standard deviations (Chan's merge)
- ``scaled_max_err``    max |d| / max |b|: the largest error relative to the tensor's scale
- per side: ``nan``, ``inf``, ``min``, ``max``, ``mean``, ``norm``, ``integer_ratio`` (share of
  the finite nonzero elements that are whole numbers, estimated on every 8th element of
  big chunks; None when all are zero)
"""

from __future__ import annotations

import math

import numpy as np

from advisor.compare.accumulator import CHUNK, Accumulator, PairMetrics, SideAcc, numpy_side_stats
from advisor.compare.kernel_loader import compiled_kernel, single_threaded_blas
from advisor.compare.kl import minmax_kl
from advisor.read.dumps import float_chunk

__all__ = [
    "CHUNK",
    "Accumulator",
    "PairMetrics",
    "SideAcc",
    "accumulate",
    "compare_arrays",
    "ranges",
    "side_stats",
]


def ranges(size: int, parts: int, chunk: int = CHUNK) -> list[tuple[int, int]]:
    """Split ``size`` elements into at most ``parts`` contiguous ranges aligned on chunks."""
    if size <= chunk or parts <= 1:
        return [(0, size)]
    nchunks = -(-size // chunk)
    per = -(-nchunks // parts)
    return [(i * per * chunk, min(size, (i + 1) * per * chunk)) for i in range(parts) if i * per * chunk < size]


def accumulate(
    r: np.ndarray,
    b: np.ndarray,
    start: int = 0,
    stop: int | None = None,
    chunk: int = CHUNK,
    with_kl: bool = True,
    compiled: bool = False,
) -> Accumulator:
    """Statistics of ``r[start:stop]`` vs ``b[start:stop]`` (flattened), chunk by chunk.

    ``compiled``: use the numba kernel (``advisor.compare.kernel``, 3-4x faster) where it is installed
    and takes the pair's dtypes.
    """
    rf, bf = r.reshape(-1), b.reshape(-1)
    stop = rf.size if stop is None else stop
    kernel = compiled_kernel() if compiled else None
    if kernel is not None:
        if kernel.supports(rf, bf):
            return kernel.pair_accumulate(rf, bf, start, stop, with_kl)
    acc = Accumulator(with_kl=with_kl, defer_identical=with_kl)
    identical: list[int] = []
    for i in range(start, stop, chunk):
        j = min(stop, i + chunk)
        seen = acc.identical_chunks
        acc.update(rf[i:j], bf[i:j])
        if acc.identical_chunks != seen:
            identical.append(i)
    # identical chunks have no KL of their own, but their exponentials enter both softmax sums when
    # some other chunk differs: replay them then (a range identical throughout keeps no KL sums)
    if identical and (acc.lse_sb or acc.max_abs_d > 0 or acc.nonfinite_mismatch):
        with np.errstate(all="ignore"):
            for i in identical:
                rc, bc = float_chunk(rf[i : min(stop, i + chunk)]), float_chunk(bf[i : min(stop, i + chunk)])
                if not math.isfinite(float(np.sum(rc, dtype=np.float64) + np.sum(bc, dtype=np.float64))):
                    keep = np.isfinite(rc) & np.isfinite(bc)
                    rc = rc[keep]
                if rc.size:
                    acc._kl_identical(rc)
    acc.defer_identical = False
    return acc


def compare_arrays(r: np.ndarray, b: np.ndarray, chunk: int = CHUNK, compiled: bool = False) -> PairMetrics:
    """All metrics of one pair (same number of elements), single-threaded (``compiled``: the numba kernel)."""
    if r.size != b.size:
        raise ValueError(f"element counts differ: {r.size} vs {b.size}")
    with single_threaded_blas():
        m = accumulate(r, b, chunk=chunk, compiled=compiled).result()
        if not m.identical and m.min_run is not None and m.min_baseline is not None:
            m.kl_div = minmax_kl(r, b, m.min_run, m.max_run, m.min_baseline, m.max_baseline, chunk)
        return m


def side_stats(
    x: np.ndarray, start: int = 0, stop: int | None = None, chunk: int = CHUNK, compiled: bool = False
) -> SideAcc:
    """Statistics of one tensor alone (run-only scans: NaN/Inf, range, integer-valued share).

    ``compiled``: by the numba kernel where installed (every element's whole-number test, not every 8th).
    """
    xf = x.reshape(-1)
    stop = xf.size if stop is None else stop
    kernel = compiled_kernel() if compiled else None
    if kernel is not None and kernel.supports(xf, xf):
        return kernel.side_accumulate(xf, start, stop)
    return numpy_side_stats(xf, start, stop, chunk)
