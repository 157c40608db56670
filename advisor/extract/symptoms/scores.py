"""Detectors of what the scores show and whether they agree with the loss: a held-out score at chance or at the
majority share, a detection or segmentation score near zero, an accuracy below chance while the loss moves, an
eval loss of exactly 0 or a cross-entropy below 0, and a loss that is exactly the error rate times a framework's
probability clip (every prediction a hard 0 or 1)."""

from __future__ import annotations

import math

from advisor.facts.symptom import Symptom
from advisor.knowledge.metrics import OVERLAP

from advisor.extract.symptoms.evidence import RunEvidence, frozen, is_accuracy, num, on_curve
from advisor.extract.symptoms.thresholds import (
    ZERO_BESIDE_PEAK,
    ZERO_LOSS_MIN_POINTS,
    ZERO_LOSS_MIN_SHARE,
    BELOW_CHANCE_SHARE,
    CE_FLOOR_SHARE,
    CLIP_BAND,
    HEALTHY_ACCURACY,
    MAJORITY_BAND,
    NEAR_ZERO_OVERLAP,
    NEAR_ZERO_SCORE,
    PROBABILITY_CLIPS,
    SCORE_CHANCE_FACTOR,
)


def _chance(ev: RunEvidence) -> float | None:
    return 1.0 / ev.n_classes if ev.n_classes and ev.n_classes >= 2 else None


def below_chance(ev: RunEvidence) -> list[Symptom]:
    """An accuracy that stays below half of chance (or near 0 when C is unknown) while the loss moves: no classifier
    scores below chance, so the metric does not measure what the loss trains."""
    acc = ev.accuracy()
    if acc is None:
        return []
    chance = _chance(ev)
    train = ev.train()
    moving = train is not None and not frozen(train) and train.points >= 2
    low = BELOW_CHANCE_SHARE * chance if chance is not None else NEAR_ZERO_SCORE
    # a score that ends below chance after it was above: the predictions turned systematically wrong
    ends_low = chance is not None and acc.points >= 2 and acc.last_value < low
    if not ((acc.best_value < low or ends_low) and moving):
        return []
    ref = f" (chance is {num(chance)})" if chance is not None else ""
    where = (
        f"stays at {num(acc.best_value)} or below{ref}"
        if acc.best_value < low
        else f"falls to {num(acc.last_value)} at the end (best {num(acc.best_value)}), below chance{ref},"
    )
    return [
        Symptom(
            name="metric_inconsistent",
            text=f"{acc.name} {where} while the loss moves: "
            + (
                "no classifier scores below chance, so the metric does not measure what the loss trains."
                if acc.best_value < low
                else "a model that learned nothing scores about chance; below it the predictions are systematically "
                "wrong (outputs that are not what the loss expects, or labels that changed)."
            ),
            metric_name=acc.name,
            level=acc.best_value if acc.best_value < low else acc.last_value,
            reference=chance,
            source=acc.source,
        )
    ]


def at_chance(ev: RunEvidence) -> list[Symptom]:
    """A held-out accuracy about 1/C, or at the majority class's share (60 % or more of the labels)."""
    acc = ev.accuracy()
    if acc is None:
        return []
    chance = _chance(ev)
    if chance is not None and acc.best_value <= SCORE_CHANCE_FACTOR * chance:
        return [
            Symptom(
                name="score_at_chance",
                text=f"{acc.name} is {num(acc.last_value)} (best {num(acc.best_value)}), about chance for "
                f"{ev.n_classes} classes ({num(chance)}).",
                metric_name=acc.name,
                level=acc.last_value,
                reference=chance,
                source=acc.source,
            )
        ]
    majority = ev.majority
    if majority is not None and majority >= 0.6 and abs(acc.last_value - majority) <= MAJORITY_BAND:
        return [
            Symptom(
                name="score_at_chance",
                text=f"{acc.name} is {num(acc.last_value)}, the share of the most common class in the labels "
                f"({num(majority)}): what predicting that class for every input scores.",
                metric_name=acc.name,
                level=acc.last_value,
                reference=majority,
                source=acc.source,
            )
        ]
    return []


def near_zero(ev: RunEvidence) -> list[Symptom]:
    """A detection or segmentation score that never left 0 (no accuracy logged; not yet a symptom in a run that
    logged a few of its planned epochs: a detector from scratch scores 0 for its first ones)."""
    if ev.accuracy() is not None or ev.early:
        return []
    for s in ev.scores:
        if s.is_higher_better and s.metric.lower() in OVERLAP and 0.0 <= s.best_value < NEAR_ZERO_OVERLAP:
            after = f" after {s.points} evaluations" if s.points > 1 else ""
            return [
                Symptom(
                    name="score_near_zero",
                    text=f"{s.name} is {num(s.last_value)} (best {num(s.best_value)}){after}: a model at this "
                    "level finds almost nothing (its chance level is about 0).",
                    metric_name=s.name,
                    level=s.last_value,
                    reference=0.0,
                    source=s.source,
                )
            ]
    return []


#: loss names that are below a plain cross-entropy by design (a distillation term, a focal weighting)
BELOW_CE_BY_DESIGN = ("focal", "distil")


def below_its_accuracy(ev: RunEvidence) -> list[Symptom]:
    """An eval loss far below (1 - accuracy) ln 2, the least mean cross-entropy the accuracy of the same evaluation
    allows (a misclassified sample gives its own class a probability below 1/2, so it costs more than ln 2): the
    loss is not a cross-entropy of the predictions the accuracy counts (a regression loss on class ids, an accuracy
    of another output), unless a focal or distillation loss is configured."""
    if ev.task is None or ev.task.task_type not in ("binary", "multiclass"):
        return []
    named = " ".join(f"{h.name} {h.raw_key} {h.value}".lower() for h in ev.hparams)
    if ev.loss is not None:
        named += f" {ev.loss.name} {ev.loss.family}".lower()
    if any(word in named for word in BELOW_CE_BY_DESIGN):
        return []
    s = next(
        (
            s
            for s in ev.scores
            if is_accuracy(s)
            and s.eval_loss_to_ce_floor_ratio is not None
            and s.eval_loss_to_ce_floor_ratio <= CE_FLOOR_SHARE
        ),
        None,
    )
    if s is None or s.eval_loss_to_ce_floor_ratio is None or s.best_value >= HEALTHY_ACCURACY:
        return []  # (at a healthy accuracy the pairing costs nothing this run shows)
    floor = (1.0 - s.last_value) * math.log(2.0)
    return [
        Symptom(
            name="metric_inconsistent",
            text=f"{s.name} is {num(s.last_value)} while the eval loss of the same evaluation is "
            f"{num(s.eval_loss_to_ce_floor_ratio * floor)}, {s.eval_loss_to_ce_floor_ratio:.2f} x the least "
            f"cross-entropy that accuracy allows ({num(floor)}): the loss is not a cross-entropy of the predictions "
            "the accuracy counts.",
            metric_name=s.name,
            level=s.last_value,
            reference=floor,
            source=s.source,
        )
    ]


def impossible_loss(ev: RunEvidence) -> list[Symptom]:
    """An eval loss of exactly 0 at every evaluation beside a nonzero train loss (nothing was evaluated), or a
    cross-entropy below 0 (no cross-entropy of probabilities is negative)."""
    return _eval_loss_zero(ev) or _negative_loss(ev)


def _eval_loss_zero(ev: RunEvidence) -> list[Symptom]:
    evals = next((c for c in ev.curves if c.split == "eval"), None)
    train = ev.train()
    if evals is None or train is None or evals.first_value != 0.0 or evals.last_value != 0.0 or evals.min_value != 0.0:
        return []
    if not train.last_value:
        return []
    return [
        on_curve(
            evals,
            name="metric_inconsistent",
            text=f"The eval loss ({evals.metric_name or 'eval loss'}) is exactly 0 at every evaluation while the "
            f"train loss is {num(train.last_value)}: the evaluation did not run on what the model predicts.",
            level=0.0,
        )
    ]


def _negative_loss(ev: RunEvidence) -> list[Symptom]:
    train = next((c for c in ev.curves if c.split == "train" and c.min_value is not None and c.min_value < 0), None)
    loss = ev.loss
    if train is None or loss is None or loss.family not in ("cross_entropy", "bce", "nll"):
        return []
    return [
        on_curve(
            train,
            name="metric_inconsistent",
            text=f"The train loss ({train.metric_name or 'loss'}) goes down to {num(train.min_value or 0.0)}, "
            f"below 0, which no {loss.name} of probabilities can be: the targets or outputs are not what the loss "
            "expects.",
            level=train.min_value,
            reference=0.0,
        )
    ]


def saturated(ev: RunEvidence) -> list[Symptom]:
    """A cross-entropy equal to the error rate times -ln of a framework's probability clip: every prediction is a
    hard 0 or 1, right ones cost nothing and each wrong one costs exactly the clip (PROBABILITY_CLIPS)."""
    train = next((c for c in ev.curves if c.split == "train" and c.last_value is not None), None)
    acc: float | None = None
    name = ""
    score = next(iter(ev.train_scores), None)
    if score is not None:
        acc, name = score.last_value, score.name
    else:
        held = next((s for s in ev.scores if is_accuracy(s) and s.train_last_value is not None), None)
        if held is not None and held.train_last_value is not None:
            acc, name = held.train_last_value, f"training {held.metric}"
    if train is None or train.last_value is None or acc is None or not 0.0 < 1.0 - acc < 1.0:
        return []
    per_error = train.last_value / (1.0 - acc)
    for clip, log_clip, who in sorted(PROBABILITY_CLIPS, key=lambda c: abs(per_error / c[1] - 1.0)):
        if abs(per_error / log_clip - 1.0) <= CLIP_BAND:
            return [
                on_curve(
                    train,
                    name="predictions_saturated",
                    text=f"The train loss ({train.metric_name or 'loss'}) {num(train.last_value)} is the error rate "
                    f"{num(1.0 - acc)} (1 - {name} {num(acc)}) times {num(log_clip)}, the cost of one wrong "
                    f"prediction at the probability clip of {who} ({clip}): every output is a hard 0 or 1.",
                    level=train.last_value,
                    reference=(1.0 - acc) * log_clip,
                )
            ]
    return []


def zero_beside_huge(ev: RunEvidence) -> list[Symptom]:
    """A train loss exactly 0.0 at many logged values and in the tens or more at others: the logits are so far apart
    (weights blown up) that each prediction is a hard 0 or 1 with no clip: a right one costs 0.0 in floating
    point, a wrong one its whole margin."""
    train = ev.train(finite=True)
    if train is None or train.max_value is None or train.points <= 0:
        return []
    zeros, peak = train.zero_count, train.max_value
    if zeros < ZERO_LOSS_MIN_POINTS or zeros < ZERO_LOSS_MIN_SHARE * train.points or peak < ZERO_BESIDE_PEAK:
        return []
    return [
        on_curve(
            train,
            name="predictions_saturated",
            text=f"The train loss ({train.metric_name or 'loss'}) is exactly 0 at {zeros} of its {train.points} "
            f"values and reaches {num(peak)} at others: the logits are so large that every prediction is a hard 0 "
            "or 1, free when right and costing its whole margin when wrong.",
            level=peak,
        )
    ]
