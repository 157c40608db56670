"""Data samples compared: the training split against the evaluation split (``data_shift``) and the run's
pipeline output against the baseline's (``pipeline_compare``)."""

from __future__ import annotations

import math

import numpy as np

from advisor.facts.base import Source
from advisor.facts.data import PipelineCompare, SplitShift
from advisor.read.samples import ArraySource, SampleSet

from advisor.extract.data_features import (
    ATOL,
    CHUNK_BYTES,
    FeatureStats,
    RTOL,
    row_hashes,
    standardised_mean_difference,
)
from advisor.extract.data_labels import (
    Labels,
)


def shift_fact(
    tr: tuple[SampleSet, FeatureStats, Labels | None], ev: tuple[SampleSet, FeatureStats, Labels | None]
) -> SplitShift | None:
    (s_tr, a, la), (s_ev, b, lb) = tr, ev
    if len(a.count) != len(b.count) or not len(a.count):
        return None
    sa, sb = a.std, b.std
    smd = standardised_mean_difference(a, b)
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
        side=s_tr.side,
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
