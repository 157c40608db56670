"""The labels of a data sample: class counts, missing labels, the class mix of each batch, and label noise
from nearest neighbours -> ``label_stats`` and ``label_noise`` facts (the data extractor's label half)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from advisor.facts.base import Source
from advisor.facts.data import LabelNoise, LabelStats
from advisor.read.samples import ArraySource, SampleSet

from advisor.extract.data_features import (
    KNN_DIMS,
    KNN_K,
    KNN_ROWS,
    MAX_CLASSES,
)


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
        side=sset.side,
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
        side=sset.side,
        source=Source(path=feats.file),
    )
