"""Data samples -> ``data_features``, ``label_stats``, ``label_noise``, ``sample_size``, ``split_shift``,
``pipeline_compare`` facts.

Features are read in chunks of about ``CHUNK_BYTES`` (as float64) and every
per-feature statistic is accumulated in one pass (Chan's parallel update of
count/mean/M2, min/max, NaN counts, robust z-scores against a median/IQR
taken first from a subsample of ``SUBSAMPLE_ROWS`` rows, 64-bit row hashes for
duplicates, over the first ``DUP_MAX_ROWS`` rows), so memory stays bounded
whatever the file size. Labels are counted in a second chunked pass.

Likely label errors: k-nearest-neighbour votes on a subsample of
``KNN_ROWS`` standardised rows (randomly projected to ``KNN_DIMS`` dimensions
when wider), and a confident-learning estimate (Northcutt et al. 2021,
https://arxiv.org/abs/1911.00068): a sample labelled i is a likely error when
the vote for another class j reaches the average vote that samples labelled j
give their own class and outvotes i (the label is not the neighbours' plurality, cleanlab's
"predicted_neq_given" test on top of the class thresholds), while its own vote stays below that average for i.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from advisor.extract.base import CheckRun, Extraction, RunPair, Series
from advisor.facts.base import Source
from advisor.facts.data import DataFeatures, LabelNoise, LabelStats, PipelineCompare, SampleSize, SplitShift
from advisor.inventory import InputRecord
from advisor.extract.view import RunView
from advisor.read.run import RunRead
from advisor.read.samples import ArraySource, SampleReadError, SampleSet

CHUNK_BYTES = 8 << 20
SUBSAMPLE_ROWS = 4096
KNN_ROWS = 3000
KNN_DIMS = 256
KNN_K = 10
DUP_MAX_ROWS = 1_000_000
OUTLIER_Z = 5.0
EXTREME_Z = 20.0
MAX_CLASSES = 1000
MAX_POSITIONS = 1 << 20  # per-position statistics for image/sequence rows up to this many values
RTOL, ATOL = 1e-5, 1e-8


# -- layout ----------------------------------------------------------------------
def feature_view(block: np.ndarray) -> np.ndarray:
    """Rows -> (rows, features, values per feature): columns, image channels, or the last axis of sequences."""
    n = block.shape[0]
    if block.ndim == 1:
        return block.reshape(n, 1, 1)
    if block.ndim == 2:
        return block.reshape(n, block.shape[1], 1)
    if block.ndim == 3:
        return block.transpose(0, 2, 1)
    if block.ndim == 4:
        if block.shape[-1] in (1, 3, 4) and block.shape[1] not in (1, 3, 4):
            return block.reshape(n, -1, block.shape[-1]).transpose(0, 2, 1)
        if block.shape[1] in (1, 3, 4):
            return block.reshape(n, block.shape[1], -1)
    return block.reshape(n, -1, 1)


def row_hashes(block: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's bytes (multiply-add over 8-byte words, then mixed)."""
    b = np.ascontiguousarray(block).reshape(block.shape[0], -1)
    raw = b.view(np.uint8).reshape(b.shape[0], -1)
    pad = (-raw.shape[1]) % 8
    if pad:
        raw = np.concatenate([raw, np.zeros((raw.shape[0], pad), np.uint8)], axis=1)
    words = raw.view(np.uint64)
    mult = _multipliers(words.shape[1])
    h = (
        np.einsum("ij,j->i", words, mult, dtype=np.uint64, casting="unsafe")
        if words.shape[1]
        else np.zeros(words.shape[0], np.uint64)
    )
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return h


_MULT_CACHE: dict[int, np.ndarray] = {}


def _multipliers(n: int) -> np.ndarray:
    if n not in _MULT_CACHE:
        rng = np.random.default_rng(0x5EED)
        _MULT_CACHE[n] = rng.integers(0, 2**63, size=n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    return _MULT_CACHE[n]


# -- one-pass feature statistics --------------------------------------------------
@dataclass
class FeatureStats:
    """What one pass over a features array gives (per-feature arrays kept for comparisons)."""

    n_rows: int
    count: np.ndarray
    mean: np.ndarray
    m2: np.ndarray
    vmin: np.ndarray
    vmax: np.ndarray
    nan: np.ndarray
    values_per_row: int
    inf_count: int = 0
    is_integer: bool = True
    max_z: float | None = None
    max_z_feature: int | None = None
    outlier_rows: int = 0
    extreme_rows: int = 0
    worst: list[tuple[float, int]] = field(default_factory=list)
    hashes: list[np.ndarray] = field(default_factory=list)
    pos_count: np.ndarray | None = None  # per value position of a row (images, sequences): count, mean, M2
    pos_mean: np.ndarray | None = None
    pos_m2: np.ndarray | None = None
    median: np.ndarray | None = None  # per feature, from the subsample
    iqr_scale: np.ndarray | None = None  # per feature IQR/1.349, from the subsample

    @property
    def std(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.sqrt(np.where(self.count > 0, self.m2 / np.maximum(self.count, 1), np.nan))

    def all_hashes(self) -> np.ndarray | None:
        return np.concatenate(self.hashes) if self.hashes else None


def _robust_reference(src: ArraySource) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-feature (median, 1/scale, IQR/1.349) from an evenly spaced subsample; 1/scale = 0 where unusable."""
    n = src.n_rows
    idx = np.unique(np.linspace(0, n - 1, num=min(n, SUBSAMPLE_ROWS)).astype(np.int64))
    sub = feature_view(src.take(idx)).astype(np.float64)
    flat = np.moveaxis(sub, 1, 0).reshape(sub.shape[1], -1)  # (F, values)
    flat = np.where(np.isfinite(flat), flat, np.nan)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            q1, med, q3 = np.nanpercentile(flat, [25, 50, 75], axis=1)
            lo, hi = np.nanmin(flat, axis=1), np.nanmax(flat, axis=1)
    iqr_scale = np.nan_to_num((q3 - q1) / 1.349)
    scale = np.where(iqr_scale > 0, iqr_scale, (hi - lo) / 6.0)
    inv = np.where(np.isfinite(scale) & (scale > 0), 1.0 / np.where(scale > 0, scale, 1.0), 0.0)
    return np.nan_to_num(med), inv, iqr_scale


def feature_stats(src: ArraySource, robust: bool = True, hashes: bool = True) -> FeatureStats:
    """One chunked pass over ``src``; memory ~ CHUNK_BYTES plus 8 bytes per row for hashes."""
    probe = feature_view(np.zeros((1,) + src.shape[1:], dtype=np.float32))
    n_feat, per_row = probe.shape[1], probe.shape[1] * probe.shape[2]
    st = FeatureStats(
        n_rows=src.n_rows,
        count=np.zeros(n_feat),
        mean=np.zeros(n_feat),
        m2=np.zeros(n_feat),
        vmin=np.full(n_feat, np.inf),
        vmax=np.full(n_feat, -np.inf),
        nan=np.zeros(n_feat, np.int64),
        values_per_row=per_row,
    )
    if len(src.shape) >= 3 and per_row <= MAX_POSITIONS:
        st.pos_count, st.pos_mean, st.pos_m2 = np.zeros(per_row), np.zeros(per_row), np.zeros(per_row)
    med, inv, iqr_scale = _robust_reference(src) if robust else (None, None, None)
    st.median, st.iqr_scale = med, iqr_scale
    is_float = src.dtype.kind == "f"
    if not is_float:
        st.is_integer = True
    chunk_rows = max(1, CHUNK_BYTES // max(1, per_row * 8))
    for start, block in src.iter_chunks(chunk_rows):
        if hashes and start < DUP_MAX_ROWS:
            st.hashes.append(row_hashes(block[: max(0, DUP_MAX_ROWS - start)]))
        x = feature_view(block).astype(np.float64)
        r = x.shape[0]
        fin = np.isfinite(x) if is_float else None
        all_fin = fin is None or bool(fin.all())
        if all_fin:
            cnt = np.full(n_feat, float(r * x.shape[2]))
            s = x.sum(axis=(0, 2))
            mn, mx = x.min(axis=(0, 2)), x.max(axis=(0, 2))
            xz = x
        else:
            nanm = np.isnan(x)
            st.nan += nanm.sum(axis=(0, 2))
            st.inf_count += int((~fin & ~nanm).sum())
            xz = np.where(fin, x, 0.0)
            cnt = fin.sum(axis=(0, 2)).astype(np.float64)
            s = xz.sum(axis=(0, 2))
            mn = np.where(fin, x, np.inf).min(axis=(0, 2))
            mx = np.where(fin, x, -np.inf).max(axis=(0, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            cmean = np.where(cnt > 0, s / np.maximum(cnt, 1), 0.0)
        if st.pos_count is not None:
            _merge_positions(st, xz.reshape(r, -1), None if all_fin else fin.reshape(r, -1))
        dev = np.subtract(x, cmean[None, :, None])
        if not all_fin:
            dev[~fin] = 0.0
        cm2 = np.einsum("ijk,ijk->j", dev, dev)
        # Chan et al.: merge (count, mean, M2) of the chunk into the running totals
        tot = st.count + cnt
        with np.errstate(invalid="ignore", divide="ignore"):
            delta = cmean - st.mean
            st.mean = np.where(tot > 0, st.mean + delta * cnt / np.maximum(tot, 1), 0.0)
            st.m2 = st.m2 + cm2 + np.where(tot > 0, delta * delta * st.count * cnt / np.maximum(tot, 1), 0.0)
        st.count = tot
        st.vmin, st.vmax = np.minimum(st.vmin, mn), np.maximum(st.vmax, mx)
        if is_float and st.is_integer:
            st.is_integer = bool(np.array_equal(xz, np.rint(xz)))
        if med is not None:
            z = dev  # reused in place: |x - median| / scale, 0 where not finite
            z += (cmean - med)[None, :, None]
            np.abs(z, out=z)
            z *= inv[None, :, None]
            if not all_fin:
                z[~fin] = 0.0
            zf = z.reshape(r, -1)
            rowmax = zf.max(axis=1)
            st.outlier_rows += int((rowmax > OUTLIER_Z).sum())
            st.extreme_rows += int((rowmax > EXTREME_Z).sum())
            top = np.argsort(rowmax)[-5:]
            st.worst = sorted(st.worst + [(float(rowmax[i]), start + int(i)) for i in top], reverse=True)[:5]
            if st.worst and (st.max_z is None or st.worst[0][0] > st.max_z):
                i_best = st.worst[0][1] - start
                if 0 <= i_best < r:
                    st.max_z = st.worst[0][0]
                    st.max_z_feature = int(np.argmax(z[i_best].max(axis=1)))
    return st


def _merge_positions(st: FeatureStats, x: np.ndarray, fin: np.ndarray | None) -> None:
    """Chan update of per-position (count, mean, M2) with the rows ``x`` (non-finite already zeroed)."""
    cnt = np.full(x.shape[1], float(x.shape[0])) if fin is None else fin.sum(axis=0).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        cmean = np.where(cnt > 0, x.sum(axis=0) / np.maximum(cnt, 1), 0.0)
        dev = x - cmean[None, :]
        if fin is not None:
            dev[~fin] = 0.0
        cm2 = np.einsum("ij,ij->j", dev, dev)
        tot = st.pos_count + cnt
        delta = cmean - st.pos_mean
        st.pos_mean = np.where(tot > 0, st.pos_mean + delta * cnt / np.maximum(tot, 1), 0.0)
        st.pos_m2 = st.pos_m2 + cm2 + np.where(tot > 0, delta * delta * st.pos_count * cnt / np.maximum(tot, 1), 0.0)
    st.pos_count = tot


def _f(v: float) -> float | None:
    return float(v) if v is not None and math.isfinite(v) else None


def _robust_levels(st: FeatureStats) -> dict:
    if st.iqr_scale is None or st.median is None:
        return {}
    pos = st.iqr_scale[st.iqr_scale > 0]
    level = np.maximum(np.abs(st.median), st.iqr_scale)
    out = {"max_robust_level": _f(float(level.max())) if level.size else None}
    if pos.size:
        out.update(
            min_robust_scale=_f(float(pos.min())),
            max_robust_scale=_f(float(pos.max())),
            robust_scale_ratio=_f(float(pos.max() / pos.min())),
        )
    return out


def features_fact(sset: SampleSet, src: ArraySource, st: FeatureStats) -> DataFeatures:
    per_feature_total = st.n_rows * (st.values_per_row // max(1, len(st.count)))
    nan_share_f = st.nan / max(1, per_feature_total)
    finite_f = st.count > 0
    std = st.std
    nonconst = finite_f & (st.vmax > st.vmin)
    pos_std = std[nonconst & (std > 0)]
    vmin = float(st.vmin[finite_f].min()) if finite_f.any() else None
    vmax = float(st.vmax[finite_f].max()) if finite_f.any() else None
    max_std = float(pos_std.max()) if pos_std.size else None
    min_std = float(pos_std.min()) if pos_std.size else None
    max_abs_mean = float(np.abs(st.mean[finite_f]).max()) if finite_f.any() else None
    raw_pixels = bool(
        vmin is not None and vmin >= 0 and vmax is not None and 16 < vmax <= 255 and (st.is_integer or vmax == 255.0)
    )
    hashes = st.all_hashes()
    dup = None
    if hashes is not None and hashes.size:
        dup = float(1.0 - np.unique(hashes).size / hashes.size)
    has_robust = st.max_z is not None
    return DataFeatures(
        file=src.file,
        array=src.name,
        split=sset.split,
        n_samples=st.n_rows,
        n_features=int(len(st.count)),
        dtype=str(src.dtype),
        nan_share=float(st.nan.sum() / max(1, st.n_rows * st.values_per_row)),
        nan_count=int(st.nan.sum()),
        inf_count=int(st.inf_count),
        features_with_nan=int((st.nan > 0).sum()),
        max_feature_nan_share=float(nan_share_f.max()) if nan_share_f.size else 0.0,
        worst_nan_feature=int(np.argmax(st.nan)) if st.nan.any() else None,
        all_nan_features=int((~finite_f & (st.nan > 0)).sum()),
        constant_features=int((finite_f & (st.vmax == st.vmin)).sum()),
        value_min=_f(vmin),
        value_max=_f(vmax),
        max_abs_mean=_f(max_abs_mean) if max_abs_mean is not None else None,
        max_std=_f(max_std),
        min_std=_f(min_std),
        std_ratio=_f(max_std / min_std) if max_std and min_std else None,
        **_robust_levels(st),
        is_integer_valued=bool(st.is_integer and finite_f.any()),
        looks_like_raw_pixels=raw_pixels,
        max_robust_z=_f(st.max_z) if has_robust else None,
        outlier_sample_share=float(st.outlier_rows / max(1, st.n_rows)) if has_robust else None,
        extreme_sample_count=int(st.extreme_rows) if has_robust else None,
        worst_samples=", ".join(str(i) for z, i in st.worst if z > OUTLIER_Z) or None if has_robust else None,
        worst_outlier_feature=st.max_z_feature,
        duplicate_share=dup,
        side=_side(sset),
        source=Source(path=src.file),
    )


# -- labels -----------------------------------------------------------------------
LABEL_CHUNK_ROWS = 1 << 20


@dataclass
class Labels:
    """Class counts of a labels array from one chunked pass; class ids of chosen rows on demand."""

    src: ArraySource
    n: int
    nan_count: int
    classes: np.ndarray | None  # class names as text (None: continuous or multi-label targets)
    counts: np.ndarray | None  # samples per class, aligned with ``classes``
    keys: np.ndarray | None = None  # sorted raw class values (numbers or text) the names come from
    layout: str = "plain"  # plain | column | onehot

    def index_of(self, rows: np.ndarray) -> np.ndarray:
        """Class index of each of the (sorted) ``rows``; -1 where the label is missing."""
        y = _label_view(self.src.take(rows), self.layout)
        out = np.full(y.shape[0], -1, np.int64)
        ok = ~_missing(y)
        pos = np.searchsorted(self.keys, y[ok])
        pos = np.clip(pos, 0, len(self.keys) - 1)
        hit = self.keys[pos] == y[ok]
        idx = np.where(hit, pos, -1)
        out[ok] = idx
        return out


def _label_view(block: np.ndarray, layout: str) -> np.ndarray:
    if layout == "column":
        return block[:, 0]
    if layout == "onehot":
        return block.argmax(axis=1)
    return block


def _missing(y: np.ndarray) -> np.ndarray:
    if y.dtype.kind in "US":
        t = np.char.strip(y.astype(str))
        return (t == "") | (np.char.lower(t) == "nan")
    if y.dtype.kind == "f":
        return ~np.isfinite(y)
    return np.zeros(y.shape[0], bool)


def read_labels(src: ArraySource) -> Labels:
    """One chunked pass: missing labels, distinct values and their counts (up to MAX_CLASSES)."""
    layout = "plain"
    if len(src.shape) == 2 and src.shape[1] == 1:
        layout = "column"
    elif len(src.shape) == 2 and src.dtype.kind in "biuf":
        layout = "onehot"  # confirmed chunk by chunk below
    elif len(src.shape) != 1:
        return Labels(src, src.n_rows, 0, None, None)
    counts: dict = {}
    nan = 0
    integral = True
    for _, block in src.iter_chunks(LABEL_CHUNK_ROWS):
        if layout == "onehot" and not (np.isin(block, (0, 1)).all() and np.all(block.sum(axis=1) == 1)):
            return Labels(
                src, src.n_rows, int((~np.isfinite(block)).sum()) if block.dtype.kind == "f" else 0, None, None
            )
        y = _label_view(block, layout)
        miss = _missing(y)
        nan += int(miss.sum())
        good = y[~miss]
        if good.dtype.kind == "f" and integral and not np.array_equal(good, np.rint(good)):
            integral = False
        if counts is not None:
            vals, cnt = np.unique(good, return_counts=True)
            for v, c in zip(vals.tolist(), cnt.tolist()):
                counts[v] = counts.get(v, 0) + c
            if len(counts) > MAX_CLASSES:
                counts = None  # too many distinct values for classes
    n = src.n_rows
    text = src.dtype.kind in "US"
    if counts is None or not counts or (not text and (not integral or len(counts) > max(2, n // 2))):
        return Labels(src, n, nan, None, None)
    keys = np.array(sorted(counts))
    names = np.array([str(k) if text else str(int(k)) for k in keys.tolist()])
    return Labels(src, n, nan, names, np.array([counts[k] for k in keys.tolist()], dtype=np.int64), keys, layout)


#: the array advisor's capture adds to data/train.npz: rows per batch, in the order the batches came
BATCH_ROWS = "batch_rows"
#: labels of at most this many rows are read whole for the batch mix
MAX_BATCH_MIX_ROWS = 100_000


def _majority_shares(idx: np.ndarray, bounds: np.ndarray) -> float:
    """Mean over batches (``bounds``: their start offsets and the end) of the share of the batch's top class."""
    shares = [np.bincount(idx[a:b]).max() / (b - a) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    return float(np.mean(shares))


def _batch_mix(sset: SampleSet, lab: Labels) -> dict[str, Any]:
    """``batches_recorded``, ``batch_majority_share`` and its shuffled counterpart, for a sample that records
    its batches (advisor's capture); empty otherwise."""
    rows = sset.arrays.get(BATCH_ROWS)
    if rows is None or lab.n > MAX_BATCH_MIX_ROWS or rows.n_rows > lab.n:
        return {}
    sizes = rows.load().reshape(-1)
    if sizes.dtype.kind not in "iu" or len(sizes) < 2 or (sizes <= 0).any() or int(sizes.sum()) != lab.n:
        return {}
    idx = lab.index_of(np.arange(lab.n))
    if (idx < 0).any():
        return {}
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    rng = np.random.default_rng(0)
    shuffled = float(np.mean([_majority_shares(rng.permutation(idx), bounds) for _ in range(20)]))
    return {
        "batches_recorded": int(len(sizes)),
        "batch_majority_share": _majority_shares(idx, bounds),
        "shuffled_batch_majority_share": shuffled,
    }


def labels_fact(sset: SampleSet, src: ArraySource, lab: Labels) -> LabelStats:
    common = dict(
        file=src.file,
        array=src.name,
        split=sset.split,
        n_samples=int(lab.n),
        nan_count=lab.nan_count,
        side=_side(sset),
        source=Source(path=src.file),
    )
    if lab.classes is None:
        return LabelStats(is_classification=False, **common)
    counts = lab.counts
    if counts.sum() == 0:
        return LabelStats(is_classification=True, n_classes=0, **common)
    lo, hi = int(np.argmin(counts)), int(np.argmax(counts))
    return LabelStats(
        is_classification=True,
        **_batch_mix(sset, lab),
        n_classes=int(len(lab.classes)),
        min_class_count=int(counts[lo]),
        max_class_count=int(counts[hi]),
        imbalance_ratio=float(counts[hi] / max(1, counts[lo])),
        majority_share=float(counts[hi] / counts.sum()),
        minority_class=str(lab.classes[lo]),
        majority_class=str(lab.classes[hi]),
        **common,
    )


def knn_label_noise(x: np.ndarray, y: np.ndarray, k: int = KNN_K) -> tuple[float, float, np.ndarray]:
    """(kNN disagreement share, confident-learning error share, suspect indices by confidence) for rows x, classes y."""
    x = x.reshape(x.shape[0], -1).astype(np.float64)
    mu, sd = x.mean(axis=0), x.std(axis=0)
    x = (x - mu) / np.where(sd > 0, sd, 1.0)
    if x.shape[1] > KNN_DIMS:  # Johnson-Lindenstrauss: distances kept within a small factor
        proj = np.random.default_rng(0).standard_normal((x.shape[1], KNN_DIMS)) / math.sqrt(KNN_DIMS)
        x = x @ proj
    n = x.shape[0]
    k = min(k, n - 1)
    sq = np.einsum("ij,ij->i", x, x)
    nbr = np.empty((n, k), dtype=np.int64)
    for s in range(0, n, 512):
        d = sq[s : s + 512, None] + sq[None, :] - 2.0 * (x[s : s + 512] @ x.T)
        d[np.arange(d.shape[0]), np.arange(s, s + d.shape[0])] = np.inf
        nbr[s : s + 512] = np.argpartition(d, k - 1, axis=1)[:, :k]
    n_cls = int(y.max()) + 1
    votes = np.zeros((n, n_cls))
    np.add.at(votes, (np.repeat(np.arange(n), k), y[nbr].ravel()), 1.0)
    p = votes / k
    own = p[np.arange(n), y]
    thresholds = np.array([p[y == j, j].mean() if (y == j).any() else 1.0 for j in range(n_cls)])
    # another class's vote reaches the average vote that class's own samples give it, and outvotes the label:
    # under class imbalance a minority class whose samples sit among the majority has an average self-vote near
    # its prior, so one minority neighbour would reach it by chance; a label that still wins the vote is not suspect
    above = (p >= thresholds[None, :]) & (p > own[:, None])
    above[np.arange(n), y] = False
    suspect = above.any(axis=1) & (own < thresholds[y])
    disagree = p.argmax(axis=1) != y
    order = np.argsort(own[suspect])
    return float(disagree.mean()), float(suspect.mean()), np.flatnonzero(suspect)[order]


def noise_fact(sset: SampleSet, feats: ArraySource, lab: Labels) -> LabelNoise | None:
    if lab.classes is None or len(lab.classes) < 2 or feats.n_rows != lab.n:
        return None
    n = feats.n_rows
    idx = np.unique(np.linspace(0, n - 1, num=min(n, KNN_ROWS)).astype(np.int64))
    y = lab.index_of(idx)
    x = feats.take(idx).reshape(idx.size, -1).astype(np.float64)
    ok = (y >= 0) & np.isfinite(x).all(axis=1)
    if ok.sum() < 30:
        return None
    idx, x, y = idx[ok], x[ok], y[ok]
    _, y = np.unique(y, return_inverse=True)
    if y.max() < 1:
        return None
    disagree, est, suspects = knn_label_noise(x, y)
    return LabelNoise(
        file=feats.file,
        split=sset.split,
        checked_samples=int(idx.size),
        k=min(KNN_K, idx.size - 1),
        knn_disagreement_share=disagree,
        estimated_error_share=est,
        suspect_samples=", ".join(str(int(i)) for i in idx[suspects[:10]]) or None,
        side=_side(sset),
        source=Source(path=feats.file),
    )


# -- comparisons ------------------------------------------------------------------
def shift_fact(
    tr: tuple[SampleSet, FeatureStats, Labels | None], ev: tuple[SampleSet, FeatureStats, Labels | None]
) -> SplitShift | None:
    (s_tr, a, la), (s_ev, b, lb) = tr, ev
    if len(a.count) != len(b.count) or not len(a.count):
        return None
    sa, sb = a.std, b.std
    smd = _smd(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(
            (sa > 0) & (sb > 0), np.maximum(sa, sb) / np.minimum(np.where(sa > 0, sa, 1), np.where(sb > 0, sb, 1)), 1.0
        )
    ratio = np.nan_to_num(ratio, nan=1.0)
    tvd = None
    if la is not None and lb is not None and la.classes is not None and lb.classes is not None:
        names = sorted(set(la.classes.tolist()) | set(lb.classes.tolist()))
        pa = _class_shares(la, names)
        pb = _class_shares(lb, names)
        tvd = float(0.5 * np.abs(pa - pb).sum())
    pos_share = pos_max = None
    if a.pos_count is not None and b.pos_count is not None and a.pos_count.size == b.pos_count.size:
        va = a.pos_m2 / np.maximum(a.pos_count, 1)
        vb = b.pos_m2 / np.maximum(b.pos_count, 1)
        pooled_p = np.sqrt((va + vb) / 2.0)
        dp = np.abs(a.pos_mean - b.pos_mean)
        with np.errstate(invalid="ignore", divide="ignore"):
            smd_p = np.where(pooled_p > 0, dp / np.where(pooled_p > 0, pooled_p, 1.0), 0.0)
        pos_share = float((smd_p > 1.0).mean())
        pos_max = float(min(smd_p.max(), 1e6))
    rng = lambda st: f"{_g(st.vmin.min())}..{_g(st.vmax.max())}"  # noqa: E731
    return SplitShift(
        train_file=s_tr.files[0],
        eval_file=s_ev.files[0],
        n_features=int(len(smd)),
        max_mean_shift_std=float(min(smd.max(), 1e6)),
        worst_feature=int(np.argmax(smd)),
        shifted_feature_share=float((smd > 0.5).mean()),
        max_std_ratio=float(ratio.max()),
        train_range=rng(a),
        eval_range=rng(b),
        label_distribution_distance=tvd,
        shifted_position_share=pos_share,
        max_position_shift_std=pos_max,
        side=_side(s_tr),
        source=Source(path=s_ev.files[0]),
    )


def _class_shares(lab: Labels, names: list[str]) -> np.ndarray:
    counts = lab.counts
    pos = {n: i for i, n in enumerate(names)}
    out = np.zeros(len(names))
    for name, c in zip(lab.classes.tolist(), counts):
        out[pos[name]] = c
    return out / max(1.0, out.sum())


def _g(v: float) -> str:
    return f"{v:.4g}" if math.isfinite(v) else str(v)


def compare_pipeline_arrays(
    run: ArraySource, base: ArraySource, run_hashes: np.ndarray | None = None, base_hashes: np.ndarray | None = None
) -> PipelineCompare:
    """Chunked np.allclose of two arrays, with where and by how much they differ."""
    common = dict(
        file=run.file,
        array=run.name,
        run_shape=str(tuple(run.shape)),
        baseline_shape=str(tuple(base.shape)),
        source=Source(path=run.file),
    )
    numeric = run.dtype.kind in "biuf" and base.dtype.kind in "biuf"
    if tuple(run.shape) != tuple(base.shape):
        return PipelineCompare(same_shape=False, is_allclose=False, **common)
    if not numeric:
        same = bool(np.array_equal(run.load(), base.load()))
        return PipelineCompare(same_shape=True, is_allclose=same, mismatch_share=0.0 if same else None, **common)
    per_row = max(1, int(np.prod(run.shape[1:], dtype=np.int64)))
    rows = max(1, CHUNK_BYTES // (per_row * 8))
    mismatches = 0
    total = 0
    max_abs = 0.0
    sum_abs = 0.0
    n_abs = 0
    first = None
    need_hashes = run_hashes is None
    rh, bh = [], []
    for (start, a), (_, b) in zip(run.iter_chunks(rows), base.iter_chunks(rows)):
        if need_hashes:
            rh.append(row_hashes(a))
            bh.append(row_hashes(b))
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        close = np.isclose(a64, b64, rtol=RTOL, atol=ATOL, equal_nan=True)
        bad = ~close.reshape(close.shape[0], -1)
        nbad = int(bad.sum())
        mismatches += nbad
        total += bad.size
        if nbad and first is None:
            first = start + int(np.flatnonzero(bad.any(axis=1))[0])
        with np.errstate(invalid="ignore"):
            d = np.abs(a64 - b64)
        d = d[np.isfinite(d)]
        if d.size:
            max_abs = max(max_abs, float(d.max()))
            sum_abs += float(d.sum())
            n_abs += d.size
    if need_hashes and rh:
        run_hashes, base_hashes = np.concatenate(rh), np.concatenate(bh)
    reordered = None
    if mismatches and run_hashes is not None and base_hashes is not None and run_hashes.size == base_hashes.size:
        reordered = bool(np.array_equal(np.sort(run_hashes), np.sort(base_hashes)))
    return PipelineCompare(
        same_shape=True,
        is_allclose=mismatches == 0,
        mismatch_share=float(mismatches / max(1, total)),
        max_abs_diff=max_abs,
        mean_abs_diff=float(sum_abs / n_abs) if n_abs else None,
        first_mismatch_row=first,
        is_same_rows_reordered=reordered,
        **common,
    )


# -- the extractor ------------------------------------------------------------------
def _side(sset: SampleSet) -> str:
    return sset.side


@dataclass
class SideResult:
    sets: list[tuple[SampleSet, FeatureStats | None, Labels | None]] = field(default_factory=list)
    used: list[str] = field(default_factory=list)


def _analyse(side_read: RunRead, out: Extraction, view: RunView) -> SideResult:
    res = SideResult()
    found = side_read.samples()
    for path, why in found.unreadable:
        out.inputs.append(InputRecord(path=path, kind="data", status="unreadable", why=why, side=side_read.side))
    notes = dict(found.notes)
    for sset in found.sets:
        try:
            st = lab = None
            if sset.features is not None and sset.features.dtype.kind in "US":
                raise SampleReadError(
                    f"features array '{sset.features.name}' holds text (dtype {sset.features.dtype}); "
                    "encode features as numbers before saving the sample"
                )
            if sset.features is not None:
                st = feature_stats(sset.features)
                out.facts.append(features_fact(sset, sset.features, st))
            if sset.labels is not None:
                lab = read_labels(sset.labels)
                out.facts.append(labels_fact(sset, sset.labels, lab))
                if sset.features is not None and sset.split == "train":
                    nf = noise_fact(sset, sset.features, lab)
                    if nf is not None:
                        out.facts.append(nf)
        except (SampleReadError, OSError, ValueError, MemoryError) as exc:
            for f in sset.files:
                out.inputs.append(
                    InputRecord(path=f, kind="data", status="unreadable", why=str(exc), side=side_read.side)
                )
            continue
        if sset.features is not None and sset.labels is not None and sset.features.n_rows != sset.labels.n_rows:
            notes[sset.files[0]] = (
                f"{sset.features.n_rows} feature rows but {sset.labels.n_rows} labels; "
                "label checks that pair rows were skipped"
            )
        res.sets.append((sset, st, lab))
        for f in sset.files:
            out.inputs.append(InputRecord(path=f, kind="data", status="used", why=notes.get(f), side=side_read.side))
            res.used.append(f)
        if side_read.side == "run":
            _series(sset, st, lab, out)
    _split_and_size(side_read, res, out, view)
    return res


def _split_and_size(side_read: RunRead, res: SideResult, out: Extraction, view: RunView) -> None:
    trains = [t for t in res.sets if t[0].split == "train"]
    evals = [t for t in res.sets if t[0].split == "eval"]
    for tr in trains:
        for ev in evals:
            if tr[1] is not None and ev[1] is not None:
                fact = shift_fact(tr, ev)
                if fact is not None:
                    out.facts.append(fact)
    if not trains:
        return
    sset, st, lab = trains[0]
    hp = view.settings
    n_from_hp = hp.get("num_train_samples")
    n_file = sset.labels.n_rows if sset.labels is not None else sset.features.n_rows
    n_train = int(n_from_hp) if isinstance(n_from_hp, float) and n_from_hp > 0 else n_file
    n_classes = min_per_class = None
    if lab is not None and lab.classes is not None and len(lab.classes):
        counts = lab.counts
        n_classes = int(len(lab.classes))
        min_per_class = float(n_train * counts.min() / max(1, counts.sum()))
    params = hp.get("num_parameters")
    params = float(params) if isinstance(params, float) and params > 0 else None
    out.facts.append(
        SampleSize(
            n_train_samples=n_train,
            samples_source="hparams" if n_train != n_file or isinstance(n_from_hp, float) else "sample_file",
            n_classes=n_classes,
            min_samples_per_class=min_per_class,
            mean_samples_per_class=float(n_train / n_classes) if n_classes else None,
            num_parameters=params,
            params_per_sample=float(params / n_train) if params and n_train else None,
            side=side_read.side,
            source=Source(path=sset.files[0]),
        )
    )


def _series(sset: SampleSet, st: FeatureStats | None, lab: Labels | None, out: Extraction) -> None:
    if lab is not None and lab.classes is not None and 0 < len(lab.classes) <= 1000:
        counts = lab.counts
        out.series.append(
            Series(
                chart="class_hist",
                label=f"{sset.split} classes ({sset.files[0]})",
                style="bar",
                x=[float(i) for i in range(len(counts))],
                y=[float(c) for c in counts],
                categories=[str(c) for c in lab.classes],
                x_label="class",
                y_label="samples",
            )
        )
    if st is not None and len(st.count):
        idx = np.unique(np.linspace(0, len(st.count) - 1, num=min(len(st.count), 1000)).astype(np.int64))
        mean, std = st.mean[idx], st.std[idx]
        out.series.append(
            Series(
                chart="feature_range",
                label=f"{sset.split} feature mean +- std",
                style="band",
                x=[float(i) for i in idx],
                y=[_f(v) for v in mean + std],
                y_low=[float(v) if math.isfinite(v) else 0.0 for v in mean - std],
                x_label="feature",
                y_label="value",
            )
        )


def _max_shift(a: FeatureStats, b: FeatureStats) -> float | None:
    """Largest standardised mean difference over features between two arrays (None if not comparable)."""
    if len(a.count) != len(b.count):
        return None
    smd = _smd(a, b)
    return float(min(smd.max(), 1e6)) if smd.size else None


def _smd(a: FeatureStats, b: FeatureStats) -> np.ndarray:
    """Per-feature standardised mean difference |mean_a - mean_b| / pooled std (1e6 where only the means differ)."""
    sa, sb = a.std, b.std
    pooled = np.sqrt((sa * sa + sb * sb) / 2.0)
    diff = np.abs(a.mean - b.mean)
    with np.errstate(invalid="ignore", divide="ignore"):
        smd = np.where(pooled > 0, diff / np.where(pooled > 0, pooled, 1.0), np.where(diff > 0, 1e6, 0.0))
    return np.nan_to_num(smd, nan=0.0)


def _compare_sides(run: SideResult, base: SideResult, out: Extraction) -> None:
    by_key = {s.key: (s, st) for s, st, _ in base.sets}
    by_split: dict[str, list[tuple[SampleSet, FeatureStats | None]]] = {}
    for s, st, _ in base.sets:
        by_split.setdefault(s.split, []).append((s, st))
    for s, st, _ in run.sets:
        other, other_st = by_key.get(s.key, (None, None))
        if other is None and len(by_split.get(s.split, [])) == 1:
            other, other_st = by_split[s.split][0]
        if other is None:
            continue
        facts: dict[str, PipelineCompare] = {}
        for name, arr in sorted(s.arrays.items(), key=lambda kv: kv[1] is s.features):  # labels before features
            b = other.arrays.get(name)
            if b is None or name == BATCH_ROWS:  # how the capture cut the batches is no pipeline output
                continue
            try:
                facts[name] = compare_pipeline_arrays(arr, b)
            except (SampleReadError, OSError, ValueError) as exc:
                out.inputs.append(
                    InputRecord(
                        path=arr.file,
                        kind="data",
                        status="unreadable",
                        why=f"comparison with the baseline failed: {exc}",
                    )
                )
        if s.features is not None and s.features.name in facts:
            extra = {}
            if s.labels is not None and s.labels.name in facts:
                extra["same_labels"] = facts[s.labels.name].is_allclose
            if st is not None and other_st is not None:
                extra["max_mean_shift_std"] = _max_shift(st, other_st)
            facts[s.features.name] = facts[s.features.name].model_copy(update=extra)
        out.facts.extend(facts.values())


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    run = _analyse(pair.run, out, pair.view(pair.run))
    base = _analyse(pair.baseline, out, pair.view(pair.baseline)) if pair.baseline is not None else None
    if run.used:
        note = None
        if base is not None and base.used:
            _compare_sides(run, base, out)
            note = "compared with the baseline's samples"
        out.checks.append(CheckRun(stage="input_data", inputs=run.used, note=note))
    return out
