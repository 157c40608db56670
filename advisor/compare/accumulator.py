"""The streaming statistics of a tensor pair: the numpy pass's per-chunk accumulators (``SideAcc`` for one
side, ``Accumulator`` for a pair) and the metrics they end in (``PairMetrics``).

The definitions of the metrics are in ``advisor.compare.metrics`` (its module docstring is the
reference), which runs these accumulators over whole tensors; the compiled kernel
(``advisor.compare.kernel``) fills the same accumulators. Kept apart so that both import them
without importing each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from advisor.read.dumps import float_chunk

try:  # OpenBLAS' own threads fight ours (measured: np.dot 10-250x slower on 2 busy cores)
    from threadpoolctl import threadpool_limits as _threadpool_limits
except ImportError:  # pragma: no cover - optional
    _threadpool_limits = None

if _threadpool_limits is None:  # pragma: no cover - without threadpoolctl, keep BLAS out of the pass

    def dot(a: np.ndarray, b: np.ndarray) -> float:
        """a·b of two float64 vectors as a Python float (einsum: BLAS's own threads stay out of the pass)."""
        return float(np.einsum("i,i->", a, b))
else:

    def dot(a: np.ndarray, b: np.ndarray) -> float:
        """a·b of two float64 vectors as a Python float (np.dot: BLAS, kept single-threaded by the caller)."""
        return float(np.dot(a, b))


#: elements per chunk: the (3, n) float64 block is 1.5 MB (L2/L3-resident) and the ~40 numpy
#: calls per chunk stay a small share; measured on an idle 2-core machine, 2^16..2^17 ran 1.5-2x
#: faster than 2^14 (under heavy load from other processes smaller chunks did better)
CHUNK = 1 << 16
#: the whole-number share is estimated on every 8th element of chunks above 256 elements
INTEGER_SAMPLE = 8
#: the stride of that sample: a prime, so that it does not fall on the same columns of every row of a
#: power-of-two layout (every 8th pixel of 8x8 images is the always-zero border column)
INTEGER_STRIDE = 7
#: chunks whose largest |r - b| is at most this take the run side's softmax sum from the baseline's
#: exponentials and a Taylor polynomial of e^(r-b) (one exponential per element instead of two)
TAYLOR_MAX_DIFF = 1e-2
#: denominator floor of the per-element relative error (avoids dividing by exact zeros)
REL_FLOOR = 1e-12


_ONES = np.ones(CHUNK)


def _ones(n: int) -> np.ndarray:
    return _ONES[:n]


def _real_part(x: np.ndarray) -> np.ndarray:
    """The real part of a complex chunk (its imaginary part is judged on its own, compare/engine.py), else ``x``:
    taken explicitly, so that numpy does not warn on the user's terminal about a cast that drops it."""
    return np.real(x) if np.iscomplexobj(x) else x


@dataclass
class SideAcc:
    """Streaming statistics of one side (finite elements only; NaN/Inf counted)."""

    n: int = 0
    nan: int = 0
    inf: int = 0
    min: float = math.inf
    max: float = -math.inf
    mean: float = 0.0
    m2: float = 0.0
    sumsq: float = 0.0
    sum_abs: float = 0.0
    integers: int = 0  # nonzero elements that are whole numbers
    nonzero: int = 0
    integers_complete: bool = True  # False when some chunk was not counted (ratio unknown)

    def add(
        self,
        x: np.ndarray,
        sumsq: float | None = None,
        total: float | None = None,
        count_integers: bool = True,
        minmax: bool = True,
    ) -> None:
        """Add finite float64 values ``x`` (``sumsq`` = x·x and ``total`` = Σx when already computed).

        Per chunk the second moment is Σx² - n·mean² in float64 (exact enough unless
        |mean|/std > 1e6); chunks then merge with Chan's formula.
        """
        n = x.size
        if n == 0:
            return
        s = float(x.sum()) if total is None else total
        sq = dot(x, x) if sumsq is None else sumsq
        mean_c = s / n
        self._merge_moments(n, mean_c, max(0.0, sq - s * mean_c))
        self.sumsq += sq
        if minmax:
            self.min = min(self.min, float(x.min()))
            self.max = max(self.max, float(x.max()))
        if count_integers:
            self.count_integers(x)
        else:
            self.integers_complete = False

    def add_known(self, n: int, total: float, sumsq: float, lo: float | None, hi: float | None) -> None:
        """Add a chunk from its count, Σx, Σx² and range (computed by the caller)."""
        mean_c = total / n
        self._merge_moments(n, mean_c, max(0.0, sumsq - total * mean_c))
        self.sumsq += sumsq
        if lo is not None and hi is not None:
            self.min = min(self.min, lo)
            self.max = max(self.max, hi)

    def count_integers(self, x: np.ndarray) -> None:
        """Whole numbers among the nonzero elements, on every INTEGER_SAMPLE-th element of big chunks."""
        if x.size > 4 * INTEGER_SAMPLE * INTEGER_SAMPLE:
            x = x[::INTEGER_STRIDE]
        nz = int(np.count_nonzero(x))
        self.nonzero += nz
        self.integers += int(np.count_nonzero(np.trunc(x) == x)) - (x.size - nz)

    @property
    def integer_ratio(self) -> float | None:
        if not self.integers_complete or not self.nonzero:
            return None
        return self.integers / self.nonzero

    def _merge_moments(self, n: int, mean: float, m2: float) -> None:
        tot = self.n + n
        delta = mean - self.mean
        self.m2 += m2 + delta * delta * self.n * n / tot
        self.mean += delta * n / tot
        self.n = tot

    def merge(self, o: "SideAcc") -> None:
        self.nan += o.nan
        self.inf += o.inf
        if o.n:
            self._merge_moments(o.n, o.mean, o.m2)
        self.sumsq += o.sumsq
        self.sum_abs += o.sum_abs
        self.min = min(self.min, o.min)
        self.max = max(self.max, o.max)
        self.integers += o.integers
        self.nonzero += o.nonzero
        self.integers_complete = self.integers_complete and o.integers_complete


@dataclass
class Accumulator:
    """Streaming pair statistics; ``update`` per chunk, ``merge`` partial results, ``result`` at the end."""

    r: SideAcc = field(default_factory=SideAcc)
    b: SideAcc = field(default_factory=SideAcc)
    d: SideAcc = field(default_factory=SideAcc)
    total: int = 0
    dot_rb: float = 0.0
    max_abs_d: float = 0.0
    sum_rel: float = 0.0
    max_rel: float = 0.0
    over_1e3: int = 0
    over_5e3: int = 0
    nonfinite_mismatch: int = 0  # positions where NaN/Inf differ between the sides
    # streamed log-sum-exp of both sides and Σ exp(b - mb) (b - r), for the softmax KL
    lse_mr: float = -math.inf
    lse_sr: float = 0.0
    lse_mb: float = -math.inf
    lse_sb: float = 0.0
    kl_t: float = 0.0
    with_kl: bool = True  # the KL's exponential(s) cost about 40% of the pass on differing chunks
    # set by ``accumulate``: identical chunks leave the KL to a replay, needed only when another chunk differs
    defer_identical: bool = False
    identical_chunks: int = 0

    def update(self, rc: np.ndarray, bc: np.ndarray, _finite: bool = False) -> None:
        with np.errstate(all="ignore"):  # NaN/Inf are counted, not warned about
            self._update(_real_part(float_chunk(rc)), _real_part(float_chunk(bc)), _finite)

    def _update(self, rc: np.ndarray, bc: np.ndarray, _finite: bool) -> None:
        n = int(np.size(rc))
        self.total += n
        # one (3, n) float64 block [r; b; r - b]: row-wise reductions halve the numpy calls per chunk
        # (its Gram matrix m @ m.T measured 3-5x slower than four dot products here)
        m = np.empty((3, n))
        m[0] = np.ravel(rc)
        m[1] = np.ravel(bc)
        np.subtract(m[0], m[1], out=m[2])
        rr, bb, dd = dot(m[0], m[0]), dot(m[1], m[1]), dot(m[2], m[2])
        if not _finite and not math.isfinite(rr + bb + dd):
            self._update_masked(m[0], m[1])
            return
        if n == 0:
            return
        if dd == 0.0:  # bit-identical chunk (usual before the source operator): a third of the work
            self._update_identical(m[0], rr)
            return
        sums = m.sum(axis=1)
        lo = m[:2].min(axis=1)
        hi = m[:2].max(axis=1)
        r, b, d = m[0], m[1], m[2]
        ints, nonzero = self.r.integers, self.r.nonzero
        self.r.add_known(n, float(sums[0]), rr, float(lo[0]), float(hi[0]))
        self.r.count_integers(r)
        ints, nonzero = self.r.integers - ints, self.r.nonzero - nonzero
        self.b.add_known(n, float(sums[1]), bb, float(lo[1]), float(hi[1]))
        if ints >= 0.9 * nonzero:  # the baseline's whole-number share only matters where the run's is high
            self.b.count_integers(b)
        else:
            self.b.integers_complete = False
        self.d.add_known(n, float(sums[2]), dd, None, None)
        self.d.integers_complete = False
        self.dot_rb += dot(r, b)
        if self.with_kl:
            self._kl_update(np.ravel(rc), np.ravel(bc), d, dd)  # the raw slices: a cheaper float32 cast
        self._rel_update(m[1:])

    def _update_identical(self, r: np.ndarray, rr: float) -> None:
        """Both sides equal on this chunk: one side's statistics serve for both, errors are 0."""
        n = r.size
        total, lo, hi = float(r.sum()), float(r.min()), float(r.max())
        ints, nonzero = self.r.integers, self.r.nonzero
        self.r.add_known(n, total, rr, lo, hi)
        self.r.count_integers(r)
        self.b.add_known(n, total, rr, lo, hi)
        self.b.integers += self.r.integers - ints
        self.b.nonzero += self.r.nonzero - nonzero
        self.d.add_known(n, 0.0, 0.0, None, None)
        self.d.integers_complete = False
        self.dot_rb += rr
        self.b.sum_abs += float(np.abs(r).sum())
        if self.defer_identical:
            self.identical_chunks += 1
        elif self.with_kl:
            self._kl_identical(r)

    def _kl_identical(self, r: np.ndarray) -> None:
        """The KL's sums over a chunk where both sides equal ``r``: one exponential per element."""
        n = r.size
        mr = max(self.lse_mr, self.r.max)
        mb = max(self.lse_mb, self.b.max)
        if abs(mr - mb) > 50.0:  # keep exp(mr - mb) finite and exact: take the general path
            self._kl_update(r, r, np.zeros(n))
            return
        zsum = float(np.exp(np.subtract(r, mr, dtype=np.float32)).sum(dtype=np.float64))
        scale_r = math.exp(self.lse_mr - mr) if self.lse_sr else 0.0
        scale_b = math.exp(self.lse_mb - mb) if self.lse_sb else 0.0
        self.lse_sr = self.lse_sr * scale_r + zsum
        self.lse_sb = self.lse_sb * scale_b + zsum * math.exp(mr - mb)
        self.kl_t *= scale_b  # this chunk adds Σ e^(b-mb) (b - r) = 0
        self.lse_mr, self.lse_mb = mr, mb

    def _rel_update(self, bd: np.ndarray) -> None:
        """Absolute and relative errors from the rows [b; d] (overwritten)."""
        a = np.abs(bd, out=bd)
        sa = a.sum(axis=1)
        self.b.sum_abs += float(sa[0])
        self.d.sum_abs += float(sa[1])
        self.max_abs_d = max(self.max_abs_d, float(a[1].max()))
        den = np.maximum(a[0], REL_FLOOR, out=a[0])
        rel = np.divide(a[1], den, out=den)
        self.sum_rel += float(rel.sum())
        self.max_rel = max(self.max_rel, float(rel.max()))
        self.over_1e3 += int(np.count_nonzero(rel > 1e-3))
        self.over_5e3 += int(np.count_nonzero(rel > 5e-3))

    def _update_masked(self, r: np.ndarray, b: np.ndarray) -> None:
        """The chunk holds NaN/Inf (or overflows float64): count them, compare the finite rest."""
        fr, fb = np.isfinite(r), np.isfinite(b)
        self.r.nan += int(np.count_nonzero(np.isnan(r)))
        self.b.nan += int(np.count_nonzero(np.isnan(b)))
        self.r.inf += int(np.count_nonzero(np.isinf(r)))
        self.b.inf += int(np.count_nonzero(np.isinf(b)))
        same = (r == b) | (np.isnan(r) & np.isnan(b))
        self.nonfinite_mismatch += int(np.count_nonzero((fr != fb) | (~fr & ~fb & ~same)))
        both = fr & fb
        if not both.any():
            return
        self.total -= int(both.sum())  # update() counts them again
        self._update(r[both], b[both], True)  # finite now (a float64 overflow stays inf)

    def _kl_update(self, r: np.ndarray, b: np.ndarray, d: np.ndarray, dd: float | None = None) -> None:
        """Stream the log-sum-exp of ``r`` and ``b`` and Σ e^(b-mb) (b - r); ``d`` = r - b in float64.

        ``dd`` = d·d when known: Σd² <= TAYLOR_MAX_DIFF² bounds max|d| without a max/min pass.
        """
        mr = max(self.lse_mr, self.r.max)  # the running maxima already include this chunk
        mb = max(self.lse_mb, self.b.max)
        scale_r = math.exp(self.lse_mr - mr) if self.lse_sr else 0.0
        scale_b = math.exp(self.lse_mb - mb) if self.lse_sb else 0.0
        n = d.size
        if dd is None:
            dd = dot(d, d)
        if (
            n
            and abs(mr - mb) < 50.0
            and (dd <= TAYLOR_MAX_DIFF**2 or max(float(d.max()), -float(d.min())) <= TAYLOR_MAX_DIFF)
        ):
            # one exponential: e^(r-mr) = e^(b-mb) e^d e^(mb-mr), e^d by its Taylor polynomial
            # (degree 4: relative error <= |d|^5/120 < 1e-12, below the float32 exponential's own);
            # the power sums Σ e_b d^k as dot products (BLAS: 2-3x faster than ndarray.sum here)
            e = np.exp(np.subtract(b, mb, dtype=np.float32)).astype(np.float64)
            d2 = d * d
            s0 = dot(e, _ones(n)) if n <= _ONES.size else float(e.sum())
            s1, s2 = dot(e, d), dot(e, d2)
            w = np.multiply(e, d2, out=e)  # e_b d^2
            s3, s4 = dot(w, d), dot(w, d2)
            self.lse_sr = self.lse_sr * scale_r + (s0 + s1 + s2 / 2 + s3 / 6 + s4 / 24) * math.exp(mb - mr)
            self.lse_sb = self.lse_sb * scale_b + s0
            self.kl_t = self.kl_t * scale_b - s1
            self.lse_mr, self.lse_mb = mr, mb
            return
        # exponentials in float32 (3x faster than float64 here), sums in float64
        z = np.empty((2, d.size), dtype=np.float32)
        np.subtract(r, mr, out=z[0], casting="unsafe")
        np.subtract(b, mb, out=z[1], casting="unsafe")
        np.exp(z, out=z)
        sums = z.sum(axis=1, dtype=np.float64)
        self.lse_sr = self.lse_sr * scale_r + float(sums[0])
        self.lse_sb = self.lse_sb * scale_b + float(sums[1])
        self.kl_t = self.kl_t * scale_b - dot(z[1].astype(np.float64), d)
        self.lse_mr, self.lse_mb = mr, mb

    def merge(self, o: "Accumulator") -> None:
        self.r.merge(o.r)
        self.b.merge(o.b)
        self.d.merge(o.d)
        self.total += o.total
        self.dot_rb += o.dot_rb
        self.max_abs_d = max(self.max_abs_d, o.max_abs_d)
        self.sum_rel += o.sum_rel
        self.max_rel = max(self.max_rel, o.max_rel)
        self.over_1e3 += o.over_1e3
        self.over_5e3 += o.over_5e3
        self.nonfinite_mismatch += o.nonfinite_mismatch
        self.merge_kl(o)

    def merge_kl(self, o: "Accumulator") -> None:
        """Merge only the KL's streamed sums (from ``kl_accumulate`` or another range)."""
        if o.lse_sb or o.lse_sr:
            mr = max(self.lse_mr, o.lse_mr)
            mb = max(self.lse_mb, o.lse_mb)
            a_r = math.exp(self.lse_mr - mr) if self.lse_sr else 0.0
            o_r = math.exp(o.lse_mr - mr) if o.lse_sr else 0.0
            a_b = math.exp(self.lse_mb - mb) if self.lse_sb else 0.0
            o_b = math.exp(o.lse_mb - mb) if o.lse_sb else 0.0
            self.lse_sr = self.lse_sr * a_r + o.lse_sr * o_r
            self.lse_sb = self.lse_sb * a_b + o.lse_sb * o_b
            self.kl_t = self.kl_t * a_b + o.kl_t * o_b
            self.lse_mr, self.lse_mb = mr, mb

    def result(self) -> "PairMetrics":
        n = self.r.n
        m = PairMetrics(
            elements=self.total,
            compared=n,
            nan_run=self.r.nan,
            inf_run=self.r.inf,
            nan_baseline=self.b.nan,
            inf_baseline=self.b.inf,
            nonfinite_mismatch=self.nonfinite_mismatch,
        )
        if n == 0:
            return m
        nr, nb = math.sqrt(self.r.sumsq), math.sqrt(self.b.sumsq)
        nd = math.sqrt(self.d.sumsq)
        if nr == 0 and nb == 0:
            m.cosine = 1.0
        elif nr == 0 or nb == 0:
            m.cosine = None  # undefined: one side is all zero (judge() says so)
        else:
            m.cosine = max(-1.0, min(1.0, self.dot_rb / (nr * nb)))
        m.max_abs_err = self.max_abs_d
        m.mean_abs_err = self.d.sum_abs / n
        m.rmse = math.sqrt(self.d.sumsq / n)
        m.euclid_rel_dist = nd / nb if nb else (0.0 if nd == 0 else math.inf)
        m.accum_abs_err_ratio = (
            self.d.sum_abs / self.b.sum_abs if self.b.sum_abs else (0.0 if self.d.sum_abs == 0 else math.inf)
        )
        m.accum_rel_err = self.sum_rel
        m.max_rel_err = self.max_rel
        m.mean_rel_err = self.sum_rel / n
        m.rel_err_over_1e3_ratio = self.over_1e3 / n
        m.rel_err_over_5e3_ratio = self.over_5e3 / n
        m.rel_err_within_1e3_ratio = (n - self.over_1e3) / n
        m.rel_err_within_5e3_ratio = (n - self.over_5e3) / n
        # KL(p||q), p = softmax(b), q = softmax(r): Σ p (b - r) - LSE(b) + LSE(r)
        if self.lse_sb and self.lse_sr:
            lse_b = self.lse_mb + math.log(self.lse_sb)
            lse_r = self.lse_mr + math.log(self.lse_sr)
            m.softmax_kl = max(0.0, self.kl_t / self.lse_sb - lse_b + lse_r)
        elif self.max_abs_d == 0 and self.nonfinite_mismatch == 0:
            m.softmax_kl = 0.0  # identical tensors (the KL pass is skipped for them)
        if self.max_abs_d == 0 and self.nonfinite_mismatch == 0:
            m.kl_div = 0.0
        m.std_run = math.sqrt(self.r.m2 / n)
        m.std_baseline = math.sqrt(self.b.m2 / n)
        m.std_diff = math.sqrt(self.d.m2 / n)
        scale = max(abs(self.b.max), abs(self.b.min))
        m.scaled_max_err = self.max_abs_d / scale if scale else (0.0 if self.max_abs_d == 0 else math.inf)
        m.identical = bool(self.max_abs_d == 0 and self.nonfinite_mismatch == 0)
        for side, acc in (("run", self.r), ("baseline", self.b)):
            setattr(m, f"min_{side}", acc.min)
            setattr(m, f"max_{side}", acc.max)
            setattr(m, f"mean_{side}", acc.mean)
            setattr(m, f"norm_{side}", math.sqrt(acc.sumsq))
            setattr(m, f"integer_ratio_{side}", acc.integer_ratio)
        return m


@dataclass(slots=True)  # 10^5 of them in a big dump: no per-instance dict
class PairMetrics:
    """The metrics of one tensor pair (None = not computed: no finite element in common)."""

    elements: int = 0
    compared: int = 0
    nan_run: int = 0
    inf_run: int = 0
    nan_baseline: int = 0
    inf_baseline: int = 0
    nonfinite_mismatch: int = 0
    identical: bool | None = None
    cosine: float | None = None
    max_abs_err: float | None = None
    mean_abs_err: float | None = None
    rmse: float | None = None
    euclid_rel_dist: float | None = None
    accum_rel_err: float | None = None
    accum_abs_err_ratio: float | None = None
    max_rel_err: float | None = None
    mean_rel_err: float | None = None
    rel_err_within_1e3_ratio: float | None = None
    rel_err_within_5e3_ratio: float | None = None
    rel_err_over_1e3_ratio: float | None = None
    rel_err_over_5e3_ratio: float | None = None
    kl_div: float | None = None
    softmax_kl: float | None = None
    std_run: float | None = None
    std_baseline: float | None = None
    std_diff: float | None = None
    scaled_max_err: float | None = None
    min_run: float | None = None
    max_run: float | None = None
    mean_run: float | None = None
    norm_run: float | None = None
    integer_ratio_run: float | None = None
    min_baseline: float | None = None
    max_baseline: float | None = None
    mean_baseline: float | None = None
    norm_baseline: float | None = None
    integer_ratio_baseline: float | None = None

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def numpy_side_stats(xf: np.ndarray, start: int, stop: int, chunk: int = CHUNK) -> SideAcc:
    """Statistics of the flat ``xf[start:stop]`` alone by the numpy pass (``metrics.side_stats``)."""
    acc = SideAcc()
    for i in range(start, stop, chunk):
        c = np.asarray(float_chunk(xf[i : min(stop, i + chunk)]), dtype=np.float64)
        fin = np.isfinite(c)
        if not fin.all():
            acc.nan += int(np.count_nonzero(np.isnan(c)))
            acc.inf += int(np.count_nonzero(np.isinf(c)))
            c = c[fin]
        acc.add(c)
    return acc
