"""The run's evaluation scores on their own: one ``eval_score`` fact per side, from the logs already read.

A score logged with no eval loss (MindSpore ``Model.eval``'s ``{'Accuracy': 0.94}`` printed after training)
is the only held-out evidence of such runs; the loss-curve extractor compares train and eval *losses* and
has nothing to compare there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from advisor.extract.base import Extraction, RunPair
from advisor.facts.base import Fact, Source
from advisor.facts.evaluation import AccuracyLossBound, EvalScore, FinalEvaluation, TrainScore
from advisor.facts.loss_curve import LossCurve
from advisor.facts.model import Task
from advisor.knowledge.metrics import HEADLINE, PARTIAL, lower_is_better
from advisor.read.logs.records import MetricSeries

#: the least error rate a score is taken to show: a perfect score on a finite eval set bounds the error only to
#: its resolution (half a percent, the last digit of a score printed in percent)
MIN_ERROR = 0.005


def _score(series: dict[str, MetricSeries]) -> MetricSeries | None:
    """The eval score to report: the task's headline score (accuracy, mAP, F1) first, else the first eval score
    logged, precision and recall last."""
    scores = [s for s in series.values() if s.key.split == "eval" and s.key.metric == "score" and s.buf.count]
    for name in HEADLINE:
        for s in scores:
            if s.key.base == name:
                return s
    scores.sort(key=lambda s: s.key.base in PARTIAL)  # stable: otherwise in the order logged
    return scores[0] if scores else None


def _train_score(series: dict[str, MetricSeries], score: MetricSeries) -> np.ndarray | None:
    """The finite values of the training series of the eval score's metric (``accuracy`` beside
    ``val_accuracy``), or None when the run logs none."""
    for s in series.values():
        if s.key.split == "train" and s.key.metric == "score" and s.key.base == score.key.base and s.buf.count:
            values = s.buf.arrays()[2]
            values = values[np.isfinite(values)]
            if values.size:
                return values
    return None


def _train_comparison(train: np.ndarray | None, eval_last: float, higher: bool) -> dict[str, float | None]:
    """The held-out score against the training score: the gap, the training score's gain per point at the end,
    and the gap in units of that gain (the gain floored at MIN_ERROR, a score's resolution)."""
    if train is None:
        return {}
    sign = 1.0 if higher else -1.0
    lead = sign * (eval_last - float(train[-1]))
    out: dict[str, float | None] = {
        "train_last_value": float(train[-1]),
        "eval_minus_train": eval_last - float(train[-1]),
    }
    if train.size >= 4:
        gain = sign * float(train[-1] - train[-4]) / 3.0
        out["train_end_gain_per_point"] = gain
        out["eval_lead_in_train_gains"] = lead / max(gain, MIN_ERROR)
    return out


def _ce_floor_ratio(series: dict[str, MetricSeries], score: MetricSeries) -> float | None:
    """The last eval loss over (1 - accuracy) ln 2, the least cross-entropy that the accuracy of the same evaluation
    allows; None unless an eval loss was logged with every accuracy and the accuracy is below 1."""
    loss = series.get("eval/loss")
    if score.key.base not in ("acc", "accuracy") or loss is None or loss.buf.count != score.buf.count:
        return None
    acc, value = score.buf.arrays()[2], loss.buf.arrays()[2]
    if not acc.size or acc.size != value.size or not (np.isfinite(acc[-1]) and np.isfinite(value[-1])):
        return None
    error = 1.0 - float(acc[-1])
    if not MIN_ERROR <= error <= 1.0:
        return None
    return float(value[-1]) / (error * math.log(2.0))


def _train_only(series: dict[str, MetricSeries], side: str) -> TrainScore | None:
    """A training accuracy when no eval score is logged (what a log of Keras' ``acc`` alone shows)."""
    for s in series.values():
        if s.key.split == "train" and s.key.metric == "score" and s.key.base in ("acc", "accuracy") and s.buf.count:
            values, lines = s.buf.arrays()[2], s.buf.arrays()[3]
            finite = np.isfinite(values)
            y = values[finite]
            if not y.size or not (0.0 <= y.min() and y.max() <= 1.0):
                continue
            return TrainScore(
                name=s.raw_key,
                points=int(y.size),
                last_value=float(y[-1]),
                best_value=float(y.max()),
                is_frozen=bool(y.size >= 2 and y.min() == y.max()),
                side=side,
                source=Source(path=s.path, line=int(lines[finite][0]), line_end=int(lines[finite][-1])),
            )
    return None


def _last(series: dict[str, MetricSeries], key: str) -> float | None:
    s = series.get(key)
    if s is None or not s.buf.count:
        return None
    values = s.buf.arrays()[2]
    values = values[np.isfinite(values)]
    return float(values[-1]) if values.size else None


def _final_evaluation(series: dict[str, MetricSeries], side: str) -> FinalEvaluation | None:
    """The test split's last loss and score against the validation's last, when both sides of a pair logged."""
    test_loss, val_loss = _last(series, "test/loss"), _last(series, "eval/loss")
    score = next((k.split("/", 1)[1] for k in series if k.startswith("test/") and k != "test/loss"), None)
    test_score = _last(series, f"test/{score}") if score else None
    val_score = _last(series, f"eval/{score}") if score else None
    if (test_loss is None or val_loss is None) and (test_score is None or val_score is None):
        return None
    higher = score is not None and not lower_is_better(score)
    drop = None
    if test_score is not None and val_score is not None:
        drop = (val_score - test_score) if higher else (test_score - val_score)
    test = series.get("test/loss") or series.get(f"test/{score}")
    return FinalEvaluation(
        test_loss=test_loss,
        validation_loss=val_loss,
        loss_ratio=test_loss / val_loss if test_loss is not None and val_loss else None,
        score_name=series[f"test/{score}"].raw_key if score and f"test/{score}" in series else None,
        test_score=test_score,
        validation_score=val_score,
        score_drop=drop,
        side=side,
        source=Source(path=test.path, line=int(test.buf.arrays()[3][-1])) if test is not None else None,
    )


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for side in pair.sides():
        merged = pair.view(side).curves
        final = _final_evaluation(merged.series, side.side)
        if final is not None:
            out.facts.append(final)
        score = _score(merged.series)
        if score is None:
            train_only = _train_only(merged.series, side.side)
            if train_only is not None:
                out.facts.append(train_only)
            continue
        steps, _, values, lines = score.buf.arrays()
        finite = np.isfinite(values)
        if not finite.any():
            continue
        y = values[finite]
        higher = not lower_is_better(score.key.base)
        last_step = float(steps[finite][-1])
        train = merged.series.get("train/loss")
        train_last = None
        if train is not None and train.buf.count:
            tsteps = train.buf.arrays()[0]
            tsteps = tsteps[np.isfinite(tsteps)]
            train_last = float(tsteps[-1]) if tsteps.size else None
        at_end = bool(np.isfinite(last_step) and train_last is not None and last_step >= train_last)
        versus_train = _train_comparison(_train_score(merged.series, score), float(y[-1]), higher)
        out.facts.append(
            EvalScore(
                name=score.raw_key,
                metric=score.key.base,
                points=int(y.size),
                last_value=float(y[-1]),
                best_value=float(y.max() if higher else y.min()),
                best_minus_last=float(y.max() - y[-1]) if higher else float(y[-1] - y.min()),
                is_higher_better=higher,
                last_step=last_step if np.isfinite(last_step) else None,
                is_at_end=at_end,
                has_eval_loss="eval/loss" in merged.series,
                **versus_train,
                eval_loss_to_ce_floor_ratio=_ce_floor_ratio(merged.series, score),
                side=side.side,
                source=Source(path=score.path, line=int(lines[finite][-1])),
            )
        )
    return out


def fano_bound(accuracy: float, n_classes: int) -> float:
    """h(e) + e ln(C - 1), e = 1 - accuracy (nats): the most conditional label entropy a classifier erring on a
    share e allows (Fano's inequality); for e above (C - 1) / C, the bound ln(C)."""
    e = min(max(1.0 - accuracy, 0.0), (n_classes - 1) / n_classes)
    if e <= 0.0:
        return 0.0
    h = -e * math.log(e) - (1.0 - e) * math.log(1.0 - e) if e < 1.0 else 0.0
    return h + e * math.log(n_classes - 1) if n_classes > 1 else h


def accuracy_loss_bounds(facts: Sequence[Fact]) -> list[Fact]:
    """One ``accuracy_loss_bound`` per side with a classification task, an eval accuracy and a train loss level."""
    out: list[Fact] = []
    for side in ("run", "baseline"):
        task = next((f for f in facts if isinstance(f, Task) and f.side == side), None)
        score = next((f for f in facts if isinstance(f, EvalScore) and f.side == side), None)
        curve = next((f for f in facts if isinstance(f, LossCurve) and f.side == side and f.split == "train"), None)
        if task is None or score is None or curve is None or curve.end_level is None:
            continue
        n = task.n_classes
        if n is None or n < 2 or task.task_type not in ("binary", "multiclass") or score.metric != "accuracy":
            continue
        if not 0.0 <= score.last_value <= 1.0:
            continue
        bound = fano_bound(min(score.last_value, 1.0 - MIN_ERROR), n)
        out.append(
            AccuracyLossBound(
                n_classes=n,
                eval_accuracy=score.last_value,
                bound_loss=bound,
                train_end_level=curve.end_level,
                train_to_bound_ratio=curve.end_level / bound,
                train_chance_ratio=curve.end_level / math.log(n),
                has_eval_loss=score.has_eval_loss,
                side=side,
                source=score.source,
            )
        )
    return out
