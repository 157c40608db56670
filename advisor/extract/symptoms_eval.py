"""What the run's scores show: held-out scores at chance, near zero or saturated, eval worse than train, a
gap to the baseline or to a stated target (the score half of ``symptoms.py``)."""

from __future__ import annotations

import math

from advisor.knowledge.metrics import OVERLAP
from advisor.facts.benchmark import BenchmarkGap
from advisor.facts.evaluation import AccuracyLossBound, EvalScore, TrainScore
from advisor.facts.hparams import Hyperparameter
from advisor.facts.loss_curve import GeneralizationGap, LossCurve
from advisor.facts.symptom import Symptom

from advisor.extract.symptoms_base import (
    BELOW_CHANCE_SHARE,
    CLIP_BAND,
    EARLY_SHARE,
    EVALS_AFTER,
    EVAL_GAP_OF_CHANCE,
    EVAL_OVER_TRAIN,
    EVAL_RISE,
    FANO_RATIO,
    MAJORITY_BAND,
    NEAR_ZERO_OVERLAP,
    NEAR_ZERO_SCORE,
    PROBABILITY_CLIPS,
    SCORE_CHANCE_FACTOR,
    SCORE_GAP,
    TARGET_BAND,
    TRAIN_FLOOR_CHANCE_RATIO,
    TRAIN_OVER_EVAL,
    TRAIN_OVER_EVAL_WITH_DROPOUT,
    _frozen,
    _is_accuracy,
    _num,
    _on,
)


def _above_label_entropy(bounds: list[AccuracyLossBound], curves: list[LossCurve]) -> list[Symptom]:
    """A train loss levelled off far above the label entropy that the eval accuracy allows (Fano's bound)."""
    train = next((c for c in curves if c.split == "train" and not c.is_still_falling and not c.diverged), None)
    b = next((b for b in bounds if b.train_to_bound_ratio >= FANO_RATIO), None)
    if train is None or b is None:
        return []
    return [
        _on(
            train,
            name="loss_at_floor",
            text=f"The train loss levels off at {_num(b.train_end_level)} while the eval accuracy is "
            f"{_num(b.eval_accuracy)}: {_num(b.train_to_bound_ratio)}x the most uncertainty ({_num(b.bound_loss)} "
            f"nats) that labels predicted that well can hold.",
            level=b.train_end_level,
            reference=b.bound_loss,
        )
    ]


def _train_above_eval(gaps: list[GeneralizationGap], n_classes: int | None, dropout: bool) -> list[Symptom]:
    """A train loss levelled off well above the eval loss of the same model, and far from zero in units of ln(C):
    the held-out labels are predicted better than the training labels, which carry what the model cannot fit."""
    g = next((g for g in gaps if g.train_last is not None and g.eval_last and g.eval_points >= EVALS_AFTER), None)
    if g is None or g.train_last is None or not g.eval_last or g.eval_last <= 0 or not n_classes or n_classes < 2:
        return []
    ratio = g.train_last / g.eval_last
    of_chance = g.train_last / math.log(n_classes)
    needed = TRAIN_OVER_EVAL_WITH_DROPOUT if dropout else TRAIN_OVER_EVAL
    if ratio < needed or of_chance < TRAIN_FLOOR_CHANCE_RATIO:
        return []
    return [
        Symptom(
            name="loss_at_floor",
            text=f"The train loss levels off at {_num(g.train_last)}, {_num(ratio)}x the eval loss of the same model "
            f"({_num(g.eval_last)}) and {of_chance:.2f} x ln({n_classes}): the training labels hold something the "
            "model cannot fit and the held-out labels do not.",
            split="train",
            level=g.train_last,
            reference=g.eval_last,
            source=g.source,
        )
    ]


def _saturated(curves: list[LossCurve], scores: list[EvalScore], train_scores: list[TrainScore]) -> list[Symptom]:
    """A cross-entropy equal to the error rate times -ln of a framework's probability clip: every prediction is a
    hard 0 or 1, right ones cost nothing and each wrong one costs exactly the clip (PROBABILITY_CLIPS)."""
    train = next((c for c in curves if c.split == "train" and c.last_value is not None), None)
    acc: float | None = None
    name = ""
    score = next((s for s in train_scores), None)
    if score is not None:
        acc, name = score.last_value, score.name
    else:
        ev = next((s for s in scores if _is_accuracy(s) and s.train_last_value is not None), None)
        if ev is not None and ev.train_last_value is not None:
            acc, name = ev.train_last_value, f"training {ev.metric}"
    if train is None or train.last_value is None or acc is None or not 0.0 < 1.0 - acc < 1.0:
        return []
    per_error = train.last_value / (1.0 - acc)
    for clip, log_clip, who in sorted(PROBABILITY_CLIPS, key=lambda c: abs(per_error / c[1] - 1.0)):
        if abs(per_error / log_clip - 1.0) <= CLIP_BAND:
            return [
                _on(
                    train,
                    name="predictions_saturated",
                    text=f"The train loss ({train.metric_name or 'loss'}) {_num(train.last_value)} is the error rate "
                    f"{_num(1.0 - acc)} (1 - {name} {_num(acc)}) times {_num(log_clip)}, the cost of one wrong "
                    f"prediction at the probability clip of {who} ({clip}): every output is a hard 0 or 1.",
                    level=train.last_value,
                    reference=(1.0 - acc) * log_clip,
                )
            ]
    return []


def _eval_worse(gaps: list[GeneralizationGap], scores: list[EvalScore], n_classes: int | None = None) -> list[Symptom]:
    for g in gaps:
        rising = g.is_eval_rising or (
            (g.eval_rise_ratio or 0) >= EVAL_RISE
            and g.evals_after_min >= EVALS_AFTER
            and (g.train_drop_after_turn_ratio or 0) > 0
        )
        if rising and g.eval_last is not None and g.eval_min is not None:
            return [
                Symptom(
                    name="eval_worse_than_train",
                    text=f"The eval loss rose {g.eval_rise_ratio or 0:.0%} above its best ({_num(g.eval_min)}"
                    + (f" at {g.eval_min_step}" if g.eval_min_step is not None else "")
                    + f") to {_num(g.eval_last)} while the train loss kept falling.",
                    split="eval",
                    step=g.eval_min_step,
                    level=g.eval_last,
                    reference=g.eval_min,
                    source=g.source,
                )
            ]
    for g in gaps:
        if not n_classes or n_classes < 2 or g.train_last is None or g.eval_last is None or g.eval_points < 2:
            continue
        spread = (g.eval_last - g.train_last) / math.log(n_classes)
        if g.eval_last >= EVAL_OVER_TRAIN * g.train_last and spread >= EVAL_GAP_OF_CHANCE:
            return [
                Symptom(
                    name="eval_worse_than_train",
                    text=f"The eval loss ends at {_num(g.eval_last)}, {_num(g.eval_last / max(g.train_last, 1e-12))}x "
                    f"the train loss ({_num(g.train_last)}) and {spread:.2f} x ln({n_classes}) above it: the model "
                    "fits its training labels, not the held-out ones.",
                    split="eval",
                    level=g.eval_last,
                    reference=g.train_last,
                    source=g.source,
                )
            ]
    for s in scores:
        if _is_accuracy(s) and s.eval_minus_train is not None and s.eval_minus_train <= -SCORE_GAP:
            return [
                Symptom(
                    name="eval_worse_than_train",
                    text=f"{s.name} ends at {_num(s.last_value)}, {-s.eval_minus_train:.0%} below the training "
                    f"accuracy ({_num(s.train_last_value or 0.0)}).",
                    split="eval",
                    metric_name=s.name,
                    level=s.last_value,
                    reference=s.train_last_value,
                    source=s.source,
                )
            ]
    return []


def _score(
    scores: list[EvalScore],
    curves: list[LossCurve],
    n_classes: int | None,
    majority: float | None,
    already: set[str],
    early: bool = False,
) -> list[Symptom]:
    acc = next((s for s in scores if _is_accuracy(s)), None)
    if acc is None:
        return _overlap_near_zero(scores, early) if not already & {"loss_at_chance", "loss_stuck"} else []
    chance = 1.0 / n_classes if n_classes and n_classes >= 2 else None
    train = next((c for c in curves if c.split == "train"), None)
    moving = train is not None and not _frozen(train) and train.points >= 2
    low = BELOW_CHANCE_SHARE * chance if chance is not None else NEAR_ZERO_SCORE
    if acc.best_value < low and moving:
        ref = f" (chance is {_num(chance)})" if chance is not None else ""
        return [
            Symptom(
                name="metric_inconsistent",
                text=f"{acc.name} stays at {_num(acc.best_value)} or below{ref} while the loss moves: no classifier "
                "scores below chance, so the metric does not measure what the loss trains.",
                metric_name=acc.name,
                level=acc.best_value,
                reference=chance,
                source=acc.source,
            )
        ]
    if already & {"loss_at_chance", "loss_stuck"}:
        return []  # a loss at chance already says the score is
    if chance is not None and acc.best_value <= SCORE_CHANCE_FACTOR * chance:
        return [
            Symptom(
                name="score_at_chance",
                text=f"{acc.name} is {_num(acc.last_value)} (best {_num(acc.best_value)}), about chance for "
                f"{n_classes} classes ({_num(chance)}).",
                metric_name=acc.name,
                level=acc.last_value,
                reference=chance,
                source=acc.source,
            )
        ]
    if majority is not None and majority >= 0.6 and abs(acc.last_value - majority) <= MAJORITY_BAND:
        return [
            Symptom(
                name="score_at_chance",
                text=f"{acc.name} is {_num(acc.last_value)}, the share of the most common class in the labels "
                f"({_num(majority)}): what predicting that class for every input scores.",
                metric_name=acc.name,
                level=acc.last_value,
                reference=majority,
                source=acc.source,
            )
        ]
    return []


def _early(curves: list[LossCurve], hparams: list[Hyperparameter]) -> bool:
    """Whether the run logged less than EARLY_SHARE of the epochs it planned (``epochs`` in its settings)."""
    planned = next((h.value for h in hparams if h.name == "epochs" and isinstance(h.value, (int, float))), None)
    seen = max((c.last_step for c in curves if c.x_unit == "epoch" and c.last_step is not None), default=None)
    return bool(planned) and seen is not None and seen < EARLY_SHARE * float(planned)  # type: ignore[arg-type]


def _overlap_near_zero(scores: list[EvalScore], early: bool) -> list[Symptom]:
    """A detection or segmentation score that never left 0: the model finds almost nothing (not a symptom yet in
    a run that logged a few of its planned epochs: a detector from scratch scores 0 for its first ones)."""
    for s in scores if not early else ():
        if s.is_higher_better and s.metric.lower() in OVERLAP and 0.0 <= s.best_value < NEAR_ZERO_OVERLAP:
            after = f" after {s.points} evaluations" if s.points > 1 else ""
            return [
                Symptom(
                    name="score_near_zero",
                    text=f"{s.name} is {_num(s.last_value)} (best {_num(s.best_value)}){after}: a model at this "
                    "level finds almost nothing (its chance level is about 0).",
                    metric_name=s.name,
                    level=s.last_value,
                    reference=0.0,
                    source=s.source,
                )
            ]
    return []


def _baseline(gaps: list[BenchmarkGap]) -> list[Symptom]:
    g = next((g for g in gaps if g.is_worse), None)
    if g is None:
        return []
    what = (g.text or "").removeprefix("the run is worse than its baseline: ")
    return [
        Symptom(
            name="baseline_gap",
            text="The run is worse than its baseline" + (f": {what}." if what else "."),
            step=g.first_departure_step,
            x_unit="step" if g.first_departure_step is not None else None,
            level=g.worst_rel_gap,
            source=g.source,
        )
    ]


def _target(hparams: list[Hyperparameter], scores: list[EvalScore], curves: list[LossCurve]) -> list[Symptom]:
    out: list[Symptom] = []
    by_name = {h.name: h for h in hparams if isinstance(h.value, (int, float)) and not isinstance(h.value, bool)}
    target = by_name.get("target_accuracy")
    acc = next((s for s in scores if _is_accuracy(s)), None)
    if target is not None and acc is not None:
        goal = float(target.value)  # type: ignore[arg-type]
        if goal > 1.0 and acc.best_value <= 1.0:
            goal /= 100.0  # a target written in percent
        if acc.best_value < goal * (1 - TARGET_BAND):
            out.append(
                Symptom(
                    name="target_gap",
                    text=f"{acc.name} reaches {_num(acc.best_value)} at best, below the stated target "
                    f"{_num(goal)} ({target.raw_key}).",
                    metric_name=acc.name,
                    level=acc.best_value,
                    reference=goal,
                    source=acc.source,
                )
            )
    target_loss = by_name.get("target_loss")
    train = next((c for c in curves if c.split == "train" and c.min_value is not None), None)
    if target_loss is not None and train is not None and train.min_value is not None:
        goal = float(target_loss.value)  # type: ignore[arg-type]
        if train.min_value > goal * (1 + TARGET_BAND):
            out.append(
                _on(
                    train,
                    name="target_gap",
                    text=f"The train loss gets no lower than {_num(train.min_value)}, above the stated target "
                    f"{_num(goal)} ({target_loss.raw_key}).",
                    level=train.min_value,
                    reference=goal,
                )
            )
    return out[:1]
