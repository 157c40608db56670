"""Detectors that set the train curve against the held-out one: a train loss levelled off above what the held-out
labels allow (the training labels hold something the model cannot fit), and an eval side much worse than train
(the eval loss rising while the train loss falls, ending far above it, or a held-out accuracy far below the
training one)."""

from __future__ import annotations

import math

from advisor.facts.symptom import Symptom

from advisor.extract.symptoms.evidence import RunEvidence, is_accuracy, num, on_curve
from advisor.extract.symptoms.thresholds import (
    EVAL_GAP_OF_CHANCE,
    EVAL_OVER_TRAIN,
    EVAL_RISE,
    EVALS_AFTER,
    FANO_RATIO,
    SCORE_GAP,
    TEST_OVER_VALIDATION,
    TRAIN_FLOOR_CHANCE_RATIO,
    TRAIN_OVER_EVAL,
    TRAIN_OVER_EVAL_WITH_DROPOUT,
)


def label_floor(ev: RunEvidence) -> list[Symptom]:
    """A train loss levelled off far above the label entropy the eval accuracy allows (Fano's bound), or well above
    the eval loss of the same model while far from zero in units of ln(C)."""
    return _above_label_entropy(ev) or _train_above_eval(ev)


def _above_label_entropy(ev: RunEvidence) -> list[Symptom]:
    train = next((c for c in ev.curves if c.split == "train" and not c.is_still_falling and not c.diverged), None)
    b = next((b for b in ev.bounds if b.train_to_bound_ratio >= FANO_RATIO), None)
    if train is None or b is None:
        return []
    return [
        on_curve(
            train,
            name="loss_at_floor",
            text=f"The train loss levels off at {num(b.train_end_level)} while the eval accuracy is "
            f"{num(b.eval_accuracy)}: {num(b.train_to_bound_ratio)}x the most uncertainty ({num(b.bound_loss)} "
            f"nats) that labels predicted that well can hold.",
            level=b.train_end_level,
            reference=b.bound_loss,
        )
    ]


def _train_above_eval(ev: RunEvidence) -> list[Symptom]:
    n_classes = ev.n_classes
    g = next((g for g in ev.gaps if g.train_last is not None and g.eval_last and g.eval_points >= EVALS_AFTER), None)
    if g is None or g.train_last is None or not g.eval_last or g.eval_last <= 0 or not n_classes or n_classes < 2:
        return []
    ratio = g.train_last / g.eval_last
    of_chance = g.train_last / math.log(n_classes)
    needed = TRAIN_OVER_EVAL_WITH_DROPOUT if ev.dropout else TRAIN_OVER_EVAL
    if ratio < needed or of_chance < TRAIN_FLOOR_CHANCE_RATIO:
        return []
    return [
        Symptom(
            name="loss_at_floor",
            text=f"The train loss levels off at {num(g.train_last)}, {num(ratio)}x the eval loss of the same model "
            f"({num(g.eval_last)}) and {of_chance:.2f} x ln({n_classes}): the training labels hold something the "
            "model cannot fit and the held-out labels do not.",
            split="train",
            level=g.train_last,
            reference=g.eval_last,
            source=g.source,
        )
    ]


def eval_worse(ev: RunEvidence) -> list[Symptom]:
    """The first of: an eval loss that rose half above its best over 3+ evaluations while the train loss fell; an
    eval loss that ends 5x the train loss and 0.3 ln(C) above it; a final test evaluation 3x the last validation
    loss or 15 points below its score; a held-out accuracy 15 points below training."""
    for g in ev.gaps:
        rising = g.is_eval_rising or (
            (g.eval_rise_ratio or 0) >= EVAL_RISE
            and g.evals_after_min >= EVALS_AFTER
            and (g.train_drop_after_turn_ratio or 0) > 0
        )
        if rising and g.eval_last is not None and g.eval_min is not None:
            return [
                Symptom(
                    name="eval_worse_than_train",
                    text=f"The eval loss rose {g.eval_rise_ratio or 0:.0%} above its best ({num(g.eval_min)}"
                    + (f" at {g.eval_min_step}" if g.eval_min_step is not None else "")
                    + f") to {num(g.eval_last)} while the train loss kept falling.",
                    split="eval",
                    step=g.eval_min_step,
                    level=g.eval_last,
                    reference=g.eval_min,
                    source=g.source,
                )
            ]
    n_classes = ev.n_classes
    for g in ev.gaps:
        if not n_classes or n_classes < 2 or g.train_last is None or g.eval_last is None or g.eval_points < 2:
            continue
        spread = (g.eval_last - g.train_last) / math.log(n_classes)
        if g.eval_last >= EVAL_OVER_TRAIN * g.train_last and spread >= EVAL_GAP_OF_CHANCE:
            return [
                Symptom(
                    name="eval_worse_than_train",
                    text=f"The eval loss ends at {num(g.eval_last)}, {num(g.eval_last / max(g.train_last, 1e-12))}x "
                    f"the train loss ({num(g.train_last)}) and {spread:.2f} x ln({n_classes}) above it: the model "
                    "fits its training labels, not the held-out ones.",
                    split="eval",
                    level=g.eval_last,
                    reference=g.train_last,
                    source=g.source,
                )
            ]
    for f in ev.finals:
        far = f.loss_ratio is not None and f.loss_ratio >= TEST_OVER_VALIDATION
        lower = f.score_drop is not None and f.score_drop >= SCORE_GAP
        if not (far or lower):
            continue
        said = []
        if f.test_loss is not None and f.validation_loss is not None:
            said.append(f"a loss of {num(f.test_loss)} against the last validation loss {num(f.validation_loss)}")
        if f.test_score is not None and f.validation_score is not None:
            said.append(f"{f.score_name} {num(f.test_score)} against {num(f.validation_score)}")
        return [
            Symptom(
                name="eval_worse_than_train",
                text=f"The final evaluation gives {' and '.join(said)}: the test data is not prepared or distributed "
                "like the data the model was trained and validated on.",
                split="eval",
                metric_name=f.score_name,
                level=f.test_loss if far else f.test_score,
                reference=f.validation_loss if far else f.validation_score,
                source=f.source,
            )
        ]
    for s in ev.scores:
        if is_accuracy(s) and s.eval_minus_train is not None and s.eval_minus_train <= -SCORE_GAP:
            return [
                Symptom(
                    name="eval_worse_than_train",
                    text=f"{s.name} ends at {num(s.last_value)}, {-s.eval_minus_train:.0%} below the training "
                    f"accuracy ({num(s.train_last_value or 0.0)}).",
                    split="eval",
                    metric_name=s.name,
                    level=s.last_value,
                    reference=s.train_last_value,
                    source=s.source,
                )
            ]
    return []
