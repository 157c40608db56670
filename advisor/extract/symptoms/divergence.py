"""Detectors of a loss that runs away without turning NaN: it climbs and does not come back, reaches a level no
working training has, starts far above the untrained model's, its gradients explode, or it swings from one value
to the next."""

from __future__ import annotations

from advisor.facts.symptom import Symptom

from advisor.extract.symptoms.evidence import RunEvidence, num, on_curve, where
from advisor.extract.symptoms.thresholds import (
    GRAD_NORM_GROWTH,
    GRAD_NORM_HUGE,
    JUMP_OVER_FIRST,
    LOSS_HUGE,
    NOISE_OF_END,
    NOISE_OF_START,
    OSCILLATION_MIN_POINTS,
    PEAK_OVER_START,
    RISE_OVER_INITIAL_EVAL,
)


def runaway(ev: RunEvidence) -> list[Symptom]:
    """The first of: a climb that did not come back, a rise to 10x the first value, a loss of 1e6 on a task that
    is not a regression, a train loss far above the model's eval loss before training, exploding gradient norms."""
    train = ev.train()
    if train is not None and train.first_nonfinite_step is None:
        name = train.metric_name or "loss"
        if train.diverged or (train.peak_over_start_ratio or 0) >= PEAK_OVER_START:
            peak = train.peak_over_start_ratio
            size = f" to {num(peak)}x its start level" if peak is not None and peak > 1 else ""
            low = train.min_value
            if low is not None and train.first_value is not None and low < train.first_value / 2:
                size = f" from its lowest value, {num(low)},{size or ' back up'}"
            return [
                on_curve(
                    train,
                    name="loss_explodes",
                    text=f"The train loss ({name}) climbed{size}{where(train, train.divergence_step)} "
                    "and did not come back.",
                    step=train.divergence_step,
                    x_unit=train.x_unit,
                    level=peak,
                )
            ]
        first, last = train.first_value, train.last_value
        if first is not None and last is not None and first > 0 and last >= JUMP_OVER_FIRST * first:
            return [
                on_curve(
                    train,
                    name="loss_explodes",
                    text=f"The train loss ({name}) rose from {num(first)} (its first value) to {num(last)} "
                    f"({num(last / first)}x) and stayed there.",
                    level=last,
                    reference=first,
                )
            ]
        huge = max((v for v in (first, last) if v is not None), default=0.0)
        if huge >= LOSS_HUGE and (ev.task is None or ev.task.task_type != "regression"):
            return [
                on_curve(
                    train,
                    name="loss_explodes",
                    text=f"The train loss ({name}) reaches {num(huge)}, orders of magnitude beyond any "
                    "classification or detection loss of a training that works.",
                    level=huge,
                )
            ]
        initial = next(
            (
                c
                for c in ev.curves
                if c.split == "eval" and c.first_step is not None and c.first_step <= 1 and c.first_value
            ),
            None,
        )
        if initial is not None and initial.first_value and train.first_value is not None:
            ratio = train.first_value / initial.first_value
            if ratio >= RISE_OVER_INITIAL_EVAL and (train.first_step or 0) > (initial.first_step or 0):
                return [
                    on_curve(
                        train,
                        name="loss_explodes",
                        text=f"The train loss ({name}) is {num(train.first_value)}{where(train, train.first_step)}, "
                        f"{num(ratio)}x the eval loss of the model before training ({num(initial.first_value)}): "
                        "the first updates made the model worse.",
                        step=train.first_step,
                        x_unit=train.x_unit,
                        level=train.first_value,
                        reference=initial.first_value,
                    )
                ]
    return _gradients_explode(ev)


def _gradients_explode(ev: RunEvidence) -> list[Symptom]:
    for g in ev.grads:
        if g.first_nonfinite_step is not None:
            continue
        big = g.max_value is not None and g.max_value >= GRAD_NORM_HUGE
        grown = g.growth_ratio is not None and g.growth_ratio >= GRAD_NORM_GROWTH
        if big or grown:
            how = f"grew {num(g.growth_ratio)}x" if grown and g.growth_ratio is not None else "reached"
            return [
                Symptom(
                    name="loss_explodes",
                    text=f"The gradient norm {how} to {num(g.max_value or 0.0)}"
                    + (f" at step {g.max_step}" if g.max_step is not None else "")
                    + ": the gradients explode.",
                    step=g.max_step,
                    x_unit="step" if g.max_step is not None else None,
                    level=g.max_value,
                    source=g.source,
                )
            ]
    return []


def oscillation(ev: RunEvidence) -> list[Symptom]:
    """A train loss that swings by half its level or more from one logged value to the next."""
    train = ev.train(finite=True)
    if train is None or train.points < OSCILLATION_MIN_POINTS or train.noise_ratio is None:
        return []
    share_of_start = train.noise_ratio * (1.0 - (train.drop_ratio or 0.0))
    if not (train.is_oscillating or (train.noise_ratio >= NOISE_OF_END and share_of_start >= NOISE_OF_START)):
        return []
    return [
        on_curve(
            train,
            name="loss_oscillates",
            text=f"The train loss ({train.metric_name or 'loss'}) swings by about {train.noise_ratio:.0%} of its "
            f"level from one logged value to the next"
            + (" and never settles." if train.is_oscillating else f", from {num(train.min_value or 0.0)} upward."),
            level=train.noise_ratio,
        )
    ]
