"""Detectors of a loss that does not come down: at the loss of a uniform guess over C classes (ln C), at the floor
a softmax applied twice allows, frozen or never leaving its start, or falling so slowly that the run ends near
where it began."""

from __future__ import annotations

import math

from advisor.extract.chance import classes_at_level
from advisor.facts.loss_curve import ChanceLevel, LossCurve
from advisor.facts.symptom import Symptom

from advisor.extract.symptoms.evidence import RunEvidence, frozen, is_accuracy, num, on_curve
from advisor.extract.symptoms.thresholds import (
    ABOVE_CHANCE_MAX,
    CHANCE_BAND,
    FLAT_DROP,
    FLOOR_BAND,
    LEAP_SHARE,
    MAX_CHANCE_LEVEL,
)


def chance_of_level(curve: LossCurve, accuracy: float | None) -> int | None:
    """C when a curve that never moved sits at ln(C) and the accuracy beside it is 1/C (no class count stated)."""
    level = curve.end_level if curve.end_level is not None else curve.last_value
    if level is None or level <= 0.5 or level > MAX_CHANCE_LEVEL or accuracy is None or not 0.0 <= accuracy <= 1.0:
        return None
    k = classes_at_level(level)
    if k < 2:
        return None
    off = abs(level - math.log(k)) / math.log(k)
    # within 1 % of ln(C) with an accuracy about 1/C; or within the chance band with an accuracy close to 1/C
    if off <= 0.01:
        return k if abs(accuracy - 1 / k) <= 0.5 / k else None
    return k if off <= CHANCE_BAND and abs(accuracy - 1 / k) <= 0.25 / k else None


def accuracy_beside(ev: RunEvidence) -> tuple[str, float] | None:
    """(name, last value) of the accuracy logged beside the loss: the held-out one, else the training one (fastai's
    table and Keras without validation print an unprefixed ``accuracy``)."""
    acc = ev.accuracy()
    if acc is not None:
        return acc.name, acc.last_value
    train = next((t for t in ev.train_scores if 0.0 <= t.last_value <= 1.0), None)
    return (train.name, train.last_value) if train is not None else None


def _chance_fact(ev: RunEvidence) -> ChanceLevel | None:
    chance = next((c for c in ev.chances if c.split == "train"), None)
    return chance if chance is not None and chance.end_ratio is not None else None


def _levelled(train: LossCurve) -> bool:
    flat = train.points >= 5 and train.drop_ratio is not None and abs(train.drop_ratio) < FLAT_DROP
    return train.is_plateau or train.is_stagnant or frozen(train) or flat


def _softmax_floor_reached(ev: RunEvidence) -> bool:
    train, chance = ev.train(finite=True), _chance_fact(ev)
    return (
        train is not None
        and chance is not None
        and chance.min_over_softmax_floor_ratio is not None
        and 1.0 <= chance.min_over_softmax_floor_ratio <= FLOOR_BAND
        and not train.is_still_falling
    )


def _at_ln_c(ev: RunEvidence) -> list[Symptom]:
    """A levelled train loss within the chance band of ln(C), or above it up to ABOVE_CHANCE_MAX x (C known)."""
    train, chance = ev.train(finite=True), _chance_fact(ev)
    if train is None or chance is None or chance.end_ratio is None or not _levelled(train):
        return []
    if 1.0 + CHANCE_BAND < chance.end_ratio <= ABOVE_CHANCE_MAX and not train.is_window:
        return [
            on_curve(
                train,
                name="loss_at_chance",
                text=f"The train loss ({train.metric_name or 'loss'}) levels off at {num(train.end_level or 0.0)}, "
                f"{chance.end_ratio:.2f} x ln({chance.n_classes}): worse than a uniform guess over "
                f"{chance.n_classes} classes ({num(chance.chance_loss)}).",
                level=train.end_level,
                reference=chance.chance_loss,
            )
        ]
    if abs(chance.end_ratio - 1.0) <= CHANCE_BAND:
        return [
            on_curve(
                train,
                name="loss_at_chance",
                text=f"The train loss ({train.metric_name or 'loss'}) levels off at {num(train.end_level or 0.0)}, "
                f"ln({chance.n_classes}) = {num(chance.chance_loss)}: the loss of a uniform guess over "
                f"{chance.n_classes} classes.",
                step=train.plateau_start_step,
                x_unit=train.x_unit,
                level=train.end_level,
                reference=chance.chance_loss,
            )
        ]
    return []


def label_entropy(ev: RunEvidence) -> float | None:
    """The cross-entropy of predicting the label shares without looking at the inputs, for two classes whose
    majority share the label sample gives: -(p ln p + (1 - p) ln(1 - p)) nats (ln 2 when balanced)."""
    p = ev.majority
    if ev.n_classes != 2 or p is None or not 0.5 <= p < 1.0:
        return None
    return -(p * math.log(p) + (1 - p) * math.log(1 - p))


def _at_label_entropy(ev: RunEvidence) -> list[Symptom]:
    """A levelled train loss of a two-class task at or above the entropy of its label shares (the model predicts
    the shares, not the inputs' classes), when the shares are unequal enough that ln 2 is not that level."""
    train, floor = ev.train(finite=True), label_entropy(ev)
    if train is None or floor is None or train.is_window or not _levelled(train) or train.end_level is None:
        return []
    ratio = train.end_level / floor
    if abs(floor - math.log(2)) <= CHANCE_BAND * math.log(2) or not 1.0 - CHANCE_BAND <= ratio <= ABOVE_CHANCE_MAX:
        return []
    return [
        on_curve(
            train,
            name="loss_at_chance",
            text=f"The train loss ({train.metric_name or 'loss'}) levels off at {num(train.end_level)}, {ratio:.2f} x "
            f"the entropy of its labels ({num(floor)} nats, {ev.majority:.0%} of one class): what predicting the "
            "class shares without looking at the inputs costs.",
            level=train.end_level,
            reference=floor,
        )
    ]


def _unmoved(train: LossCurve) -> bool:
    return frozen(train) or (train.is_stagnant and not train.is_oscillating and not _leapt_then_froze(train))


def _leapt_then_froze(train: LossCurve) -> bool:
    """The first value is far from the frozen tail the curve ends on (0.24, then 17.27 at every later step): the
    loss left its start in one leap, which a robust start level hides."""
    first, last = train.first_value, train.last_value
    if train.is_frozen_from_start or (train.frozen_tail_points or 0) < 2 or first is None or last is None:
        return False
    return abs(last - first) > LEAP_SHARE * max(abs(first), abs(last))


def at_chance(ev: RunEvidence) -> list[Symptom]:
    """A train loss at ln(C): levelled there (C known), frozen or never leaving its start there (C stated or read
    from the level and an accuracy of 1/C beside it), or a single logged value there beside an accuracy of 1/C; or,
    for two unequal classes, levelled at or above the entropy of the label shares (Gibbs: what ignoring the inputs
    costs)."""
    found = _at_ln_c(ev) or _at_label_entropy(ev)
    if found or _softmax_floor_reached(ev):
        return found
    train = ev.train(finite=True)
    acc = accuracy_beside(ev)
    if train is not None and not train.is_window and _unmoved(train):
        is_frozen = frozen(train)
        k = ev.n_classes or chance_of_level(train, acc[1] if acc else None)
        level = train.last_value if is_frozen else train.end_level
        if k and level is not None and abs(level / math.log(k) - 1) <= CHANCE_BAND:
            return [
                on_curve(
                    train,
                    name="loss_at_chance",
                    text=f"The train loss ({train.metric_name or 'loss'}) "
                    + ("stays at" if is_frozen else "never leaves its start level: it ends at")
                    + f" {num(level)}, ln({k}) = {num(math.log(k))}: the loss of a uniform guess over {k} classes.",
                    level=level,
                    reference=math.log(k),
                )
            ]
        return []
    if train is not None and train.points > 1:
        return []
    single = next((c for c in ev.curves if c.split == "train" and c.points == 1), None)
    if single is None or acc is None or single.last_value is None:
        return []
    k = ev.n_classes or chance_of_level(single, acc[1])
    if not k or abs(single.last_value / math.log(k) - 1) > CHANCE_BAND:
        return []
    return [
        on_curve(
            single,
            name="loss_at_chance",
            text=f"The train loss ({single.metric_name or 'loss'}) is {num(single.last_value)}, "
            f"ln({k}) = {num(math.log(k))}, and {acc[0]} is {num(acc[1])}, about 1/{k}: "
            f"the model guesses uniformly over {k} classes.",
            level=single.last_value,
            reference=math.log(k),
        )
    ]


def softmax_floor(ev: RunEvidence) -> list[Symptom]:
    """A train loss levelled just above ln(1 + (C - 1) / e): the least cross-entropy of a softmax applied to
    probabilities (a softmax before a loss that applies its own)."""
    train, chance = ev.train(finite=True), _chance_fact(ev)
    if train is None or chance is None or not _softmax_floor_reached(ev):
        return []
    floor = math.log1p((chance.n_classes - 1) / math.e)
    return [
        on_curve(
            train,
            name="loss_at_floor",
            text=f"The train loss ({train.metric_name or 'loss'}) levels off at {num(train.end_level or 0.0)}, "
            f"just above {num(floor)}: the least cross-entropy a softmax applied to probabilities allows "
            f"over {chance.n_classes} classes.",
            level=train.end_level,
            reference=floor,
        )
    ]


def stuck(ev: RunEvidence) -> list[Symptom]:
    """A train loss frozen at one value, or never leaving its start level (not an excerpt from mid-run)."""
    train = ev.train(finite=True)
    if train is None or train.is_window or not _unmoved(train):
        return []
    what = (
        f"stays at {num(train.last_value or 0.0)} at every one of its {train.points} logged values"
        if frozen(train)
        else f"never leaves its start level ({num(train.start_level or 0.0)} to "
        f"{num(train.end_level or 0.0)} over {train.points} values)"
    )
    return [
        on_curve(
            train,
            name="loss_stuck",
            text=f"The train loss ({train.metric_name or 'loss'}) {what}.",
            level=train.last_value,
        )
    ]


def slow(ev: RunEvidence) -> list[Symptom]:
    """A train loss that falls steadily but removes only a small share of its start level over the run."""
    train = next((c for c in ev.curves if c.split == "train" and c.is_slow and not c.is_window), None)
    if train is None:
        return []
    return [
        on_curve(
            train,
            name="slow_or_unfinished",
            text=f"The train loss ({train.metric_name or 'loss'}) falls steadily but removed only "
            f"{train.drop_ratio or 0:.0%} of its start level over {train.points} values.",
            level=train.drop_ratio,
        )
    ]


__all__ = ["accuracy_beside", "at_chance", "chance_of_level", "is_accuracy", "slow", "softmax_floor", "stuck"]
