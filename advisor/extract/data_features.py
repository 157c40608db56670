"""The features of a data sample in one streamed pass: per-feature and per-position statistics, robust
levels, row hashes for duplicates -> ``data_features`` facts (and the statistics the comparisons use)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from advisor.facts.base import Source
from advisor.facts.data import DataFeatures
from advisor.read.samples import ArraySource, SampleSet

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


def finite_or_none(v: float) -> float | None:
    """The value as a float, or None when it is missing or not finite (a fact field holds no NaN)."""
    return float(v) if v is not None and math.isfinite(v) else None


def _robust_levels(st: FeatureStats) -> dict:
    if st.iqr_scale is None or st.median is None:
        return {}
    pos = st.iqr_scale[st.iqr_scale > 0]
    level = np.maximum(np.abs(st.median), st.iqr_scale)
    out = {"max_robust_level": finite_or_none(float(level.max())) if level.size else None}
    if pos.size:
        out.update(
            min_robust_scale=finite_or_none(float(pos.min())),
            max_robust_scale=finite_or_none(float(pos.max())),
            robust_scale_ratio=finite_or_none(float(pos.max() / pos.min())),
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
        value_min=finite_or_none(vmin),
        value_max=finite_or_none(vmax),
        max_abs_mean=finite_or_none(max_abs_mean) if max_abs_mean is not None else None,
        max_std=finite_or_none(max_std),
        min_std=finite_or_none(min_std),
        std_ratio=finite_or_none(max_std / min_std) if max_std and min_std else None,
        **_robust_levels(st),
        is_integer_valued=bool(st.is_integer and finite_f.any()),
        looks_like_raw_pixels=raw_pixels,
        max_robust_z=finite_or_none(st.max_z) if has_robust else None,
        outlier_sample_share=float(st.outlier_rows / max(1, st.n_rows)) if has_robust else None,
        extreme_sample_count=int(st.extreme_rows) if has_robust else None,
        worst_samples=", ".join(str(i) for z, i in st.worst if z > OUTLIER_Z) or None if has_robust else None,
        worst_outlier_feature=st.max_z_feature,
        duplicate_share=dup,
        side=sset.side,
        source=Source(path=src.file),
    )


def standardised_mean_difference(a: FeatureStats, b: FeatureStats) -> np.ndarray:
    """Per-feature standardised mean difference |mean_a - mean_b| / pooled std (1e6 where only the means differ)."""
    sa, sb = a.std, b.std
    pooled = np.sqrt((sa * sa + sb * sb) / 2.0)
    diff = np.abs(a.mean - b.mean)
    with np.errstate(invalid="ignore", divide="ignore"):
        smd = np.where(pooled > 0, diff / np.where(pooled > 0, pooled, 1.0), np.where(diff > 0, 1e6, 0.0))
    return np.nan_to_num(smd, nan=0.0)
