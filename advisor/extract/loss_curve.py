"""Loss series -> ``loss_curve`` facts (minimal: metrics.jsonl only; full analysis in issue 3)."""

from __future__ import annotations

import math

import numpy as np

from advisor.extract.base import CheckRun, Extraction, RunPair, Series
from advisor.facts.base import Source
from advisor.facts.loss_curve import LossCurve
from advisor.inventory import InputRecord, RunFolder
from advisor.read.metrics_jsonl import iter_records

TRAIN_KEYS = ("loss", "train_loss")
EVAL_KEYS = ("eval_loss", "val_loss")


def summarize(split: str, steps: np.ndarray, values: np.ndarray, source: Source, side: str) -> LossCurve:
    finite = np.isfinite(values)
    nonfinite_idx = np.flatnonzero(~finite)
    first_nonfinite = int(steps[nonfinite_idx[0]]) if nonfinite_idx.size else None
    fv = values[finite]
    first = float(fv[0]) if fv.size else None
    last = float(fv[-1]) if fv.size else None
    diverged = first_nonfinite is not None or (first is not None and last is not None and last > 10 * max(first, 1e-12))
    return LossCurve(split=split, points=int(values.size), first_step=int(steps[0]) if steps.size else None,
                     last_step=int(steps[-1]) if steps.size else None, first_value=first, last_value=last,
                     min_value=float(fv.min()) if fv.size else None, first_nonfinite_step=first_nonfinite,
                     diverged=bool(diverged), side=side, source=source)


def _from_folder(folder: RunFolder, out: Extraction) -> None:
    for rel in folder.glob(["*.jsonl"]):
        if rel.name == "tensors.jsonl":
            continue
        shown = folder.rel(folder.abs(rel))
        bad: list[int] = []
        series: dict[str, tuple[list[int], list[float]]] = {"train": ([], []), "eval": ([], [])}
        try:
            for lineno, rec in iter_records(folder.abs(rel), bad):
                step = rec.get("step", rec.get("global_step", lineno))
                for split, keys in (("train", TRAIN_KEYS), ("eval", EVAL_KEYS)):
                    for key in keys:
                        if key in rec:
                            try:
                                val = float(rec[key])
                                st = int(step)
                            except (TypeError, ValueError):
                                continue
                            series[split][0].append(st)
                            series[split][1].append(val)
                            break
        except OSError as exc:
            out.inputs.append(InputRecord(path=shown, kind="metrics", status="unreadable", why=str(exc), side=folder.side))
            continue
        if not series["train"][0] and not series["eval"][0]:
            continue
        for split, (steps, values) in series.items():
            if not steps:
                continue
            st = np.asarray(steps, dtype=np.int64)
            va = np.asarray(values, dtype=np.float64)
            out.facts.append(summarize(split, st, va, Source(path=shown), folder.side))
            out.series.append(Series(chart="loss", label=f"{split} loss", side=folder.side, x=[float(s) for s in st],
                                     y=[float(v) if math.isfinite(v) else None for v in va]))
        out.inputs.append(InputRecord(path=shown, kind="metrics", status="used", side=folder.side,
                                      why=f"{len(bad)} lines were not JSON objects" if bad else None))
        if folder.side == "run":
            out.checks.append(CheckRun(stage="loss_curve", inputs=[shown]))


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for folder in pair.sides():
        _from_folder(folder, out)
    return out
