"""Join the files of one run without double counting.

A run often logs the same curve twice (``train.log`` and ``stdout``; the console
dict prints and ``trainer_state.json``) and different curves in different files
(train loss in the log, eval loss in ``metrics.csv``). Per series name one file
is kept: the one whose points carry steps, then the one with the most points.
Events are not summed across files either: per kind, the file with the most wins
(rank 0 and rank 1 print the same overflow).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from advisor.read.logs.buffer import Buffer
from advisor.read.logs.records import LogEvent, LogRead, MetricSeries
from advisor.read.logs.keys import KeyInfo

_X_RANK = {"step": 2, "epoch": 1, "index": 0}


@dataclass
class MergedRun:
    series: dict[str, MetricSeries] = field(default_factory=dict)
    events: list[LogEvent] = field(default_factory=list)
    event_counts: dict[str, int] = field(default_factory=dict)
    event_paths: dict[str, str] = field(default_factory=dict)
    #: (series name, file not used for it, file used)
    duplicates: list[tuple[str, str, str]] = field(default_factory=list)
    #: optimizer steps per epoch stated by a log that was read (Keras ``n/N``); None: not stated
    steps_per_epoch: int | None = None

    def first(self, names: list[str]) -> MetricSeries | None:
        for n in names:
            if n in self.series:
                return self.series[n]
        return None


def merge_reads(reads: list[LogRead]) -> MergedRun:
    out = MergedRun()
    by_name: dict[str, list[MetricSeries]] = {}
    if any("tensorboard" in r.formats for r in reads):
        from advisor.read.logs.tensorboard import join_folders

        reads = join_folders(reads)  # the event files of one logger's folder are one run
    for read in reads:
        if read.problem is not None:
            continue
        for name, s in read.series.items():
            by_name.setdefault(name, []).append(s)
    for name, cands in by_name.items():
        best = max(cands, key=lambda s: (_X_RANK[s.x_kind()], s.buf.count))
        out.series[name] = best
        for s in cands:
            if s is not best:
                out.duplicates.append((name, s.path, best.path))
    out.steps_per_epoch = next((r.steps_per_epoch for r in reads if r.problem is None and r.steps_per_epoch), None)
    _map_epochs_to_steps(out)
    for split in ("train", "eval"):
        _sum_components(out, split)
    kinds = {k for r in reads if r.problem is None for k in r.event_counts}
    for kind in sorted(kinds):
        best_read = max((r for r in reads if r.problem is None), key=lambda r: r.event_counts.get(kind, 0))
        out.event_counts[kind] = best_read.event_counts[kind]
        out.event_paths[kind] = best_read.path
        out.events.extend(e for e in best_read.events if e.kind == kind)
    out.events.sort(key=lambda e: (e.step if e.step is not None else -1, e.line))
    return out


def _map_epochs_to_steps(out: MergedRun) -> None:
    """Give epoch-only series the run's epoch -> step map (last step logged in each epoch), when known."""
    epochs, steps = [], []
    for s in out.series.values():
        st, ep, _, _ = s.buf.arrays()
        both = np.isfinite(st) & np.isfinite(ep)
        epochs.append(ep[both])
        steps.append(st[both])
    if not epochs:
        return
    ep, st = np.concatenate(epochs), np.concatenate(steps)
    if ep.size == 0:
        return
    uniq = np.unique(ep)
    if uniq.size < 2:
        return
    order = np.argsort(ep, kind="stable")
    by_epoch = np.maximum.reduceat(st[order], np.searchsorted(ep[order], uniq))  # (the last step of each epoch)
    last = by_epoch[:10_000]
    if np.any(np.diff(last) < 0):
        return  # steps do not grow with epochs: no consistent map
    for s in out.series.values():
        if s.x_kind() == "epoch":
            s.epoch_map = (uniq[: last.size], last)


def _sum_components(out: MergedRun, split: str) -> None:
    """With no total loss logged for a split, add ``<split>/loss_sum``: the sum of the component losses logged
    on the same lines of one file (YOLOv5 6+ ``box_loss obj_loss cls_loss``; ``loss_cls`` + ``loss_bbox``).

    Not when the other split logs the same components (Ultralytics ``results.csv``: ``train/box_loss`` and
    ``val/box_loss``): then the first component of each side is the curve, so that train and eval compare
    like with like (an overfit in box regression alone would be hidden in a sum)."""
    if any(s.key.split == split and s.key.metric == "loss" for s in out.series.values()):
        return
    groups: dict[tuple[str, bytes], list[MetricSeries]] = {}
    for s in sorted(out.series.values(), key=lambda s: s.order):
        if s.key.split == split and s.key.metric == "loss_part" and not s.name.endswith("@epoch") and len(s.buf):
            groups.setdefault((s.path, s.buf.arrays()[3].tobytes()), []).append(s)
    parts = max(groups.values(), key=len, default=[])
    if len(parts) < 2:
        return
    other = {s.key.base for s in out.series.values() if s.key.split != split and s.key.metric == "loss_part"}
    if any(s.key.base in other for s in parts):
        return  # the other split logs the same components: compare those, like with like (first one)
    first = parts[0]
    steps, epochs, _, lines = first.buf.arrays()
    total = np.sum([s.buf.arrays()[2] for s in parts], axis=0)
    buf = Buffer(cap=max(first.buf.cap, len(first.buf) + 1))
    for i in range(total.size):
        buf.add(float(steps[i]), float(epochs[i]), float(total[i]), int(lines[i]))
    buf.count = first.buf.count  # the parts were thinned alike: the same count of logged points
    name = f"{split}/loss_sum"
    out.series[name] = MetricSeries(
        key=KeyInfo(series=name, split=split, metric="loss", base="loss_sum"),  # type: ignore[arg-type]
        raw_key=" + ".join(s.raw_key for s in parts),
        path=first.path,
        order=first.order,
        buf=buf,
        restarts=list(first.restarts),
        resumes=first.resumes,
        epoch_map=first.epoch_map,
    )
