"""Data samples -> ``data_features``, ``label_stats``, ``label_noise``, ``sample_size``, ``split_shift``,
``pipeline_compare`` facts: the extractor, on ``data_features.py`` (the features' one-pass statistics),
``data_labels.py`` (labels, batches, label noise) and ``data_compare.py`` (train vs eval, run vs baseline).

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

import numpy as np

from advisor.chart_data import Series
from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.facts.base import Source
from advisor.facts.data import PipelineCompare, SampleSize
from advisor.inventory import InputRecord
from advisor.extract.view import RunView
from advisor.read.run import RunRead
from advisor.read.samples import SampleReadError, SampleSet

from advisor.extract.data_features import (
    FeatureStats,
    feature_stats,
    features_fact,
    finite_or_none,
    standardised_mean_difference,
)
from advisor.extract.data_labels import (
    BATCH_ROWS,
    Labels,
    labels_fact,
    noise_fact,
    read_labels,
)
from advisor.extract.data_compare import (
    compare_pipeline_arrays,
    shift_fact,
)


# -- the extractor ------------------------------------------------------------------
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
                y=[finite_or_none(v) for v in mean + std],
                y_low=[float(v) if math.isfinite(v) else 0.0 for v in mean - std],
                x_label="feature",
                y_label="value",
            )
        )


def _max_shift(a: FeatureStats, b: FeatureStats) -> float | None:
    """Largest standardised mean difference over features between two arrays (None if not comparable)."""
    if len(a.count) != len(b.count):
        return None
    smd = standardised_mean_difference(a, b)
    return float(min(smd.max(), 1e6)) if smd.size else None


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
