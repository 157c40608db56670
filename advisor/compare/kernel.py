"""The comparison's compiled kernel: every metric of a tensor pair in one pass (numba).

Optional (``pip install "accuracy-advisor[fast]"``): ``advisor.compare.metrics.accumulate``
uses it for big float16/bfloat16/float32/float64 pairs when numba is installed, and the numpy
path otherwise. numba has neither half type on CPU: float16 is read as uint16 and bfloat16
(``BFloat16Bits``) as int16, both converted bit by bit, exactly, inside the loops.
Same definitions as ``advisor.compare.metrics`` (whose module docstring is the reference),
same float64 accumulation; differences to the numpy path:

- the pass runs over blocks of ``BLOCK`` elements in compiled, SIMD-vectorised loops (about
  ten numpy calls per chunk become one loop per block);
- the softmax exponentials of the KL are float64, by a polynomial (relative error < 1e-11,
  tested; the numpy path's float32 ``exp`` gives ~1e-7) written so that the compiler
  vectorises it;
- the whole-number share counts every element instead of every 8th (the baseline's, as in the
  numpy path, only in blocks where the run's share reaches ``WHOLE_SHARE``).

A block holding NaN or Inf (or whose squares overflow float64) is not summed here: its start
is returned and the caller passes it through the numpy path, which counts and masks them.

The loops release the GIL, so the engine's threads run them on every core. Compiled code is
cached on disk (numba's ``cache=True``); the first use in a fresh environment compiles for a
few seconds, so the engine only asks for this kernel when a comparison is big enough.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit  # first: without numba, the ImportError names numba

from advisor.compare.accumulator import Accumulator, SideAcc, numpy_side_stats
from advisor.compare.kernel_math import as_f64, exp_nonpositive, floor_f64, fmax_f64, fmin_f64
from advisor.read.dumps import BFloat16Bits

#: elements per block: two float32 blocks fit the 32 KB L1 cache with room to spare
BLOCK = 4096
#: the per-element relative error's denominator floor (as ``accumulator.REL_FLOOR``)
REL_FLOOR = 1e-12
#: blocks whose max|r - b| is at most this take the KL's run-side exponentials from the baseline's
NEAR_DIFF = 1e-2
#: the baseline's whole numbers are counted where the run's share in a block reaches this
#: (as in the numpy path: only a high share matters, e.g. an integer division in the run)
WHOLE_SHARE = 0.9

# fast-math flags: reassociation lets the sums vectorise; no nnan/ninf, so that a NaN or Inf
# still shows in the block's sums (and the block goes to the numpy path)
_SUM_FLAGS = {"nsz", "arcp", "contract", "afn", "reassoc"}
# blocks known to be finite: nnan/ninf let min/max vectorise as reductions
_FINITE_FLAGS = _SUM_FLAGS | {"nnan", "ninf"}

# output slots (float64); the caller turns them into an Accumulator
(
    N,
    R_MEAN,
    R_M2,
    R_SUMSQ,
    R_MIN,
    R_MAX,
    R_INTS,
    R_NZ,
    B_MEAN,
    B_M2,
    B_SUMSQ,
    B_SUMABS,
    B_MIN,
    B_MAX,
    B_INTS,
    B_NZ,
    D_MEAN,
    D_M2,
    D_SUMSQ,
    D_SUMABS,
    DOT_RB,
    MAX_ABS_D,
    SUM_REL,
    MAX_REL,
    OVER_1E3,
    OVER_5E3,
    LSE_MR,
    LSE_SR,
    LSE_MB,
    LSE_SB,
    KL_T,
    B_WHOLE_SKIPPED,
) = range(32)
SLOTS = 32


@njit(nogil=True, fastmath=_SUM_FLAGS, cache=True)
def _block_sums(r, b, s, e, o):
    """The sums of r[s:e], b[s:e] into ``o[0:9]`` (no nnan/ninf flags: a NaN/Inf shows in them)."""
    sr = sb = sd = srr = sbb = sdd = srb = sab = sad = 0.0
    for j in range(e - s):
        i = np.uint64(s) + np.uint64(j)  # unsigned: no negative-index wraparound in the loop
        x = as_f64(r[i])
        y = as_f64(b[i])
        d = x - y
        sr += x
        sb += y
        sd += d
        srr += x * x
        sbb += y * y
        sdd += d * d
        srb += x * y
        sab += abs(y)
        sad += abs(d)
    o[0] = sr
    o[1] = sb
    o[2] = sd
    o[3] = srr
    o[4] = sbb
    o[5] = sdd
    o[6] = srb
    o[7] = sab
    o[8] = sad


@njit(nogil=True, fastmath=_FINITE_FLAGS, cache=True)
def _block_extremes(r, b, s, e, o):
    """Extremes, relative errors and the run's whole-number counts of a finite block into ``o[9:20]``."""
    lr = math.inf
    hr = -math.inf
    lb = math.inf
    hb = -math.inf
    mad = 0.0
    srel = 0.0
    mrel = 0.0
    c1 = 0.0
    c2 = 0.0
    zeros = 0.0
    whole = 0.0
    for j in range(e - s):
        i = np.uint64(s) + np.uint64(j)
        x = as_f64(r[i])
        y = as_f64(b[i])
        ad = abs(x - y)
        lr = fmin_f64(lr, x)
        hr = fmax_f64(hr, x)
        lb = fmin_f64(lb, y)
        hb = fmax_f64(hb, y)
        mad = fmax_f64(mad, ad)
        q = ad / fmax_f64(abs(y), REL_FLOOR)
        srel += q
        mrel = fmax_f64(mrel, q)
        c1 += 1.0 if q > 1e-3 else 0.0  # float counters vectorise better than int64 ones here
        c2 += 1.0 if q > 5e-3 else 0.0
        zeros += 1.0 if x == 0.0 else 0.0
        whole += 1.0 if floor_f64(x) == x else 0.0
    o[9] = lr
    o[10] = hr
    o[11] = lb
    o[12] = hb
    o[13] = mad
    o[14] = srel
    o[15] = mrel
    o[16] = c1
    o[17] = c2
    o[18] = whole - zeros  # nonzero whole numbers
    o[19] = (e - s) - zeros


@njit(nogil=True, fastmath=_FINITE_FLAGS, cache=True)
def _block_whole(x, s, e):
    """(nonzero whole numbers, nonzero elements) of x[s:e]."""
    zeros = 0.0
    whole = 0.0
    for j in range(e - s):
        v = as_f64(x[np.uint64(s) + np.uint64(j)])
        zeros += 1.0 if v == 0.0 else 0.0
        whole += 1.0 if floor_f64(v) == v else 0.0
    return whole - zeros, (e - s) - zeros


@njit(nogil=True, fastmath=_FINITE_FLAGS, cache=True)
def _block_kl_near(r, b, s, e, mr, mb, o):
    """``_block_kl`` where max|r - b| <= NEAR_DIFF: one exponential per element.

    e^(r-mr) = e^(b-mb) e^d e^(mb-mr) with e^d by its degree-4 Taylor polynomial (relative error
    <= |d|^5/120 < 1e-12).
    """
    zr = 0.0
    zb = 0.0
    t = 0.0
    for j in range(e - s):
        i = np.uint64(s) + np.uint64(j)
        x = as_f64(r[i])
        y = as_f64(b[i])
        d = x - y
        eb = exp_nonpositive(y - mb)
        zb += eb
        zr += eb * (1.0 + d * (1.0 + d * (0.5 + d * (1.0 / 6 + d * (1.0 / 24)))))
        t -= eb * d
    o[22] = zr * math.exp(mb - mr)
    o[23] = zb
    o[24] = t


@njit(nogil=True, fastmath=_FINITE_FLAGS, cache=True)
def _block_kl(r, b, s, e, mr, mb, o):
    """Σ e^(r-mr), Σ e^(b-mb) and Σ e^(b-mb) (b - r) over r[s:e], b[s:e] into ``o[22:25]``."""
    zr = 0.0
    zb = 0.0
    t = 0.0
    for j in range(e - s):
        i = np.uint64(s) + np.uint64(j)  # unsigned: no negative-index wraparound, so the loop vectorises
        x = as_f64(r[i])
        y = as_f64(b[i])
        er = exp_nonpositive(x - mr)
        eb = exp_nonpositive(y - mb)
        zr += er
        zb += eb
        t += eb * (y - x)
    o[22] = zr
    o[23] = zb
    o[24] = t


@njit(nogil=True, fastmath=_FINITE_FLAGS, cache=True)
def _block_extremes_identical(r, s, e, o):
    """``_block_extremes`` of a finite block where both sides equal r[s:e] (errors are 0)."""
    lo = math.inf
    hi = -math.inf
    ints = 0
    nz = 0
    for j in range(e - s):
        x = as_f64(r[np.uint64(s) + np.uint64(j)])
        lo = fmin_f64(lo, x)
        hi = fmax_f64(hi, x)
        z = np.int64(x != 0.0)
        nz += z
        ints += z * np.int64(floor_f64(x) == x)
    o[9] = lo
    o[10] = hi
    o[11] = lo
    o[12] = hi
    o[13] = 0.0
    o[14] = 0.0
    o[15] = 0.0
    o[16] = 0.0
    o[17] = 0.0
    o[18] = ints
    o[19] = nz
    o[20] = ints
    o[21] = nz


@njit(nogil=True, fastmath=_FINITE_FLAGS, cache=True)
def _block_softmax_sum(r, s, e, m):
    """Σ e^(r-m) over r[s:e]: the KL's sums of a block where both sides are equal."""
    z = 0.0
    for j in range(e - s):
        z += exp_nonpositive(as_f64(r[np.uint64(s) + np.uint64(j)]) - m)
    return z


@njit(nogil=True, cache=True)
def _merge_moments(out, mean_at, m2_at, n_old, n_new, total, sumsq):
    """Chan's merge of a block (count, Σx, Σx²) into the running mean and M2 at ``out[mean_at]``."""
    mean_c = total / n_new
    m2_c = max(0.0, sumsq - total * mean_c)
    tot = n_old + n_new
    delta = mean_c - out[mean_at]
    out[m2_at] += m2_c + delta * delta * n_old * n_new / tot
    out[mean_at] += delta * n_new / tot


@njit(nogil=True, cache=True)
def pair_pass(r, b, start, stop, with_kl, out, bad):
    """Accumulate r[start:stop] vs b[start:stop] into ``out`` (SLOTS float64, see the slot names).

    ``out`` must come zeroed; blocks holding NaN/Inf are skipped and their starts written to
    ``bad``; returns how many.
    """
    o = np.empty(25)
    out[R_MIN] = math.inf
    out[R_MAX] = -math.inf
    out[B_MIN] = math.inf
    out[B_MAX] = -math.inf
    out[LSE_MR] = -math.inf
    out[LSE_MB] = -math.inf
    nbad = 0
    n = 0.0
    for s in range(start, stop, BLOCK):
        e = min(stop, s + BLOCK)
        _block_sums(r, b, s, e, o)
        if not (math.isfinite(o[3]) and math.isfinite(o[4]) and math.isfinite(o[5])):
            bad[nbad] = s
            nbad += 1
            continue
        identical = o[8] == 0.0  # Σ|d| = 0 on a finite block: bit-identical (usual before the source op)
        if identical:
            _block_extremes_identical(r, s, e, o)
        else:
            _block_extremes(r, b, s, e, o)
            if o[18] >= WHOLE_SHARE * o[19]:
                o[20], o[21] = _block_whole(b, s, e)
            else:
                o[20] = 0.0
                o[21] = 0.0
                out[B_WHOLE_SKIPPED] += 1.0
        m = float(e - s)
        _merge_moments(out, R_MEAN, R_M2, n, m, o[0], o[3])
        _merge_moments(out, B_MEAN, B_M2, n, m, o[1], o[4])
        _merge_moments(out, D_MEAN, D_M2, n, m, o[2], o[5])
        n += m
        out[R_SUMSQ] += o[3]
        out[B_SUMSQ] += o[4]
        out[D_SUMSQ] += o[5]
        out[DOT_RB] += o[6]
        out[B_SUMABS] += o[7]
        out[D_SUMABS] += o[8]
        out[R_MIN] = min(out[R_MIN], o[9])
        out[R_MAX] = max(out[R_MAX], o[10])
        out[B_MIN] = min(out[B_MIN], o[11])
        out[B_MAX] = max(out[B_MAX], o[12])
        out[MAX_ABS_D] = max(out[MAX_ABS_D], o[13])
        out[SUM_REL] += o[14]
        out[MAX_REL] = max(out[MAX_REL], o[15])
        out[OVER_1E3] += o[16]
        out[OVER_5E3] += o[17]
        out[R_INTS] += o[18]
        out[R_NZ] += o[19]
        out[B_INTS] += o[20]
        out[B_NZ] += o[21]
        if with_kl:
            # streamed softmax sums against the running maxima (rescaled when a maximum grows)
            mr = max(out[LSE_MR], o[10])
            mb = max(out[LSE_MB], o[12])
            if out[LSE_SR] != 0.0:
                out[LSE_SR] *= math.exp(out[LSE_MR] - mr)
            if out[LSE_SB] != 0.0:
                scale = math.exp(out[LSE_MB] - mb)
                out[LSE_SB] *= scale
                out[KL_T] *= scale
            out[LSE_MR] = mr
            out[LSE_MB] = mb
            if identical and abs(mr - mb) < 50.0:  # one exponential: e^(x-mb) = e^(x-mr) e^(mr-mb)
                z = _block_softmax_sum(r, s, e, mr)
                o[22] = z
                o[23] = z * math.exp(mr - mb)
                o[24] = 0.0
            elif o[13] <= NEAR_DIFF and abs(mr - mb) < 50.0:
                _block_kl_near(r, b, s, e, mr, mb, o)
            else:
                _block_kl(r, b, s, e, mr, mb, o)
            out[LSE_SR] += o[22]
            out[LSE_SB] += o[23]
            out[KL_T] += o[24]
    out[N] = n
    return nbad


# one tensor alone (``metrics.side_stats``: run-side scans without a baseline)
(S_N, S_MEAN, S_M2, S_SUMSQ, S_MIN, S_MAX, S_INTS, S_NZ) = range(8)
SIDE_SLOTS = 8


@njit(nogil=True, fastmath=_SUM_FLAGS, cache=True)
def _side_sums(x, s, e):
    """(Σx, Σx²) of x[s:e] (no nnan/ninf flags: a NaN/Inf shows in them)."""
    t = 0.0
    q = 0.0
    for j in range(e - s):
        v = as_f64(x[np.uint64(s) + np.uint64(j)])
        t += v
        q += v * v
    return t, q


@njit(nogil=True, cache=True)
def side_pass(x, start, stop, out, bad):
    """Statistics of x[start:stop] into ``out`` (SIDE_SLOTS float64, zeroed); NaN/Inf blocks into ``bad``."""
    o = np.empty(25)
    out[S_MIN] = math.inf
    out[S_MAX] = -math.inf
    nbad = 0
    n = 0.0
    for s in range(start, stop, BLOCK):
        e = min(stop, s + BLOCK)
        t, q = _side_sums(x, s, e)
        if not (math.isfinite(t) and math.isfinite(q)):
            bad[nbad] = s
            nbad += 1
            continue
        _block_extremes_identical(x, s, e, o)
        m = float(e - s)
        _merge_moments(out, S_MEAN, S_M2, n, m, t, q)
        n += m
        out[S_SUMSQ] += q
        out[S_MIN] = min(out[S_MIN], o[9])
        out[S_MAX] = max(out[S_MAX], o[10])
        out[S_INTS] += o[18]
        out[S_NZ] += o[19]
    out[S_N] = n
    return nbad


#: the dtypes the kernel takes (float16 as its uint16 bit patterns); others take the numpy path
DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))


def _takes(x: np.ndarray) -> bool:
    return (x.dtype in DTYPES or isinstance(x, BFloat16Bits)) and x.flags.c_contiguous and x.dtype.isnative


def supports(r: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``pair_accumulate`` takes this pair (float16/32/64 or bfloat16 bits, contiguous, native order)."""
    return _takes(r) and _takes(b)


def _kernel_view(x: np.ndarray) -> np.ndarray:
    """The plain array the compiled loops read: float16 as uint16, bfloat16 as int16 (converted inside)."""
    if isinstance(x, BFloat16Bits):
        return np.asarray(x).view(np.int16)
    return np.asarray(x.view(np.uint16) if x.dtype == np.float16 else x)


def pair_accumulate(r: np.ndarray, b: np.ndarray, start: int, stop: int, with_kl: bool):
    """``metrics.accumulate`` of r[start:stop] vs b[start:stop] (flat, ``supports``) by the kernel."""
    r, b = r.reshape(-1), b.reshape(-1)  # views (a memmap or BFloat16Bits; _kernel_view makes them plain)
    out = np.zeros(SLOTS)
    bad = np.empty(max(1, -(-(stop - start) // BLOCK)), dtype=np.int64)
    nbad = pair_pass(_kernel_view(r), _kernel_view(b), start, stop, with_kl, out, bad)
    out = out.tolist()  # Python floats: numpy scalars would leak into the report (JSON cannot take np.bool_)
    n = int(out[N])
    acc = Accumulator(with_kl=with_kl)
    acc.total = n
    if n:
        acc.r = SideAcc(
            n=n,
            mean=out[R_MEAN],
            m2=out[R_M2],
            sumsq=out[R_SUMSQ],
            min=out[R_MIN],
            max=out[R_MAX],
            integers=int(out[R_INTS]),
            nonzero=int(out[R_NZ]),
        )
        acc.b = SideAcc(
            n=n,
            mean=out[B_MEAN],
            m2=out[B_M2],
            sumsq=out[B_SUMSQ],
            sum_abs=out[B_SUMABS],
            min=out[B_MIN],
            max=out[B_MAX],
            integers=int(out[B_INTS]),
            nonzero=int(out[B_NZ]),
            integers_complete=out[B_WHOLE_SKIPPED] == 0,
        )
        acc.d = SideAcc(
            n=n, mean=out[D_MEAN], m2=out[D_M2], sumsq=out[D_SUMSQ], sum_abs=out[D_SUMABS], integers_complete=False
        )
        acc.dot_rb = out[DOT_RB]
        acc.max_abs_d = out[MAX_ABS_D]
        acc.sum_rel = out[SUM_REL]
        acc.max_rel = out[MAX_REL]
        acc.over_1e3 = int(out[OVER_1E3])
        acc.over_5e3 = int(out[OVER_5E3])
        if with_kl:
            acc.lse_mr, acc.lse_sr = out[LSE_MR], out[LSE_SR]
            acc.lse_mb, acc.lse_sb = out[LSE_MB], out[LSE_SB]
            acc.kl_t = out[KL_T]
    for s in bad[:nbad]:  # blocks with NaN/Inf: the numpy path counts and masks them
        part = Accumulator(with_kl=with_kl)
        e = min(stop, int(s) + BLOCK)
        part.update(r[int(s) : e], b[int(s) : e])
        acc.merge(part)
    return acc


def _example(dtype: np.dtype | str) -> np.ndarray:
    """Two elements of this dtype as the loops will see them ('bfloat16': BFloat16Bits)."""
    if str(dtype) == "bfloat16":
        return BFloat16Bits(np.zeros(2, np.int16))
    return np.zeros(2, dtype)


def warm_up(dtypes: set[tuple[np.dtype, np.dtype]], side: bool = False, writable: bool = False) -> None:
    """Compile (or load from numba's cache) the pair pass (``side``: the one-side pass) for these dtypes.

    On this thread, before the workers start. numba compiles writable and read-only arrays
    separately: the memory maps of .npy dumps are read-only, tensors loaded from .pt files
    writable (``writable``).
    """
    for dr, db in dtypes:
        r, b = _example(dr), _example(db)
        r.flags.writeable = b.flags.writeable = writable
        if side:
            side_accumulate(r, 0, 2)
        else:
            pair_accumulate(r, b, 0, 2, True)


def side_accumulate(x: np.ndarray, start: int, stop: int):
    """``metrics.side_stats`` of x[start:stop] (flat, a ``DTYPES`` dtype, contiguous) by the kernel."""
    x = x.reshape(-1)
    out = np.zeros(SIDE_SLOTS)
    bad = np.empty(max(1, -(-(stop - start) // BLOCK)), dtype=np.int64)
    nbad = side_pass(_kernel_view(x), start, stop, out, bad)
    out = out.tolist()
    n = int(out[S_N])
    acc = SideAcc()
    if n:
        acc = SideAcc(
            n=n,
            mean=out[S_MEAN],
            m2=out[S_M2],
            sumsq=out[S_SUMSQ],
            min=out[S_MIN],
            max=out[S_MAX],
            integers=int(out[S_INTS]),
            nonzero=int(out[S_NZ]),
        )
    for s in bad[:nbad]:  # blocks with NaN/Inf: the numpy path counts and masks them
        acc.merge(numpy_side_stats(x, int(s), min(stop, int(s) + BLOCK)))
    return acc
