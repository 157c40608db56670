"""Detectors of how the run ended against what it should reach: an exception that stopped it, a gap to its
baseline beyond the noise band, a stated target missed."""

from __future__ import annotations

from advisor.facts.symptom import Symptom

from advisor.extract.symptoms.evidence import RunEvidence, num, on_curve
from advisor.extract.symptoms.thresholds import HEALTHY_ACCURACY, TARGET_BAND


def crash(ev: RunEvidence) -> list[Symptom]:
    """The run stopped with an exception that is not a non-finite loss."""
    c = next((c for c in ev.crashes if not c.is_nonfinite), None)
    if c is None:
        return []
    at = f" after step {c.step}" if c.step is not None else ""
    return [
        Symptom(
            name="crash",
            text=f"The run stopped{at} with {c.exception}.",
            step=c.step,
            x_unit="step" if c.step is not None else None,
            source=c.source,
        )
    ]


def baseline(ev: RunEvidence) -> list[Symptom]:
    """Some metric ends worse than the baseline's by more than its noise band."""
    g = next((g for g in ev.benchmark_gaps if g.is_worse), None)
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


def target(ev: RunEvidence) -> list[Symptom]:
    """The best accuracy below a stated target_accuracy, or the lowest train loss above a stated target_loss."""
    out: list[Symptom] = []
    by_name = {h.name: h for h in ev.hparams if isinstance(h.value, (int, float)) and not isinstance(h.value, bool)}
    goal_acc = by_name.get("target_accuracy")
    acc = ev.accuracy()
    if goal_acc is not None and acc is not None:
        goal = float(goal_acc.value)  # type: ignore[arg-type]
        if goal > 1.0 and acc.best_value <= 1.0:
            goal /= 100.0  # a target written in percent
        if acc.best_value < goal * (1 - TARGET_BAND):
            out.append(
                Symptom(
                    name="target_gap",
                    text=f"{acc.name} reaches {num(acc.best_value)} at best, below the stated target "
                    f"{num(goal)} ({goal_acc.raw_key}).",
                    metric_name=acc.name,
                    level=acc.best_value,
                    reference=goal,
                    source=acc.source,
                )
            )
    goal_loss = by_name.get("target_loss")
    train = next((c for c in ev.curves if c.split == "train" and c.min_value is not None), None)
    if goal_loss is not None and train is not None and train.min_value is not None:
        goal = float(goal_loss.value)  # type: ignore[arg-type]
        if train.min_value > goal * (1 + TARGET_BAND):
            out.append(
                on_curve(
                    train,
                    name="target_gap",
                    text=f"The train loss gets no lower than {num(train.min_value)}, above the stated target "
                    f"{num(goal)} ({goal_loss.raw_key}).",
                    level=train.min_value,
                    reference=goal,
                )
            )
    return out[:1]


def stopped_short(ev: RunEvidence) -> list[Symptom]:
    """The log ends within the first EARLY_SHARE of the epochs the run set (``epochs``, or a Keras ``Epoch 1/50``
    header), with no crash, no held-out accuracy that is already good, and a loss still falling if it logged
    three values or more (the held-out one if there is one: EarlyStopping ends a run whose eval loss stopped):
    what it shows is a training that has barely started."""
    train = ev.train()
    if not ev.early or train is None or train.is_window or ev.crashes:
        return []
    held = next((c for c in ev.curves if c.split == "eval" and c.points >= 3), None)
    judged = held or train
    if judged.points >= 3 and not judged.is_still_falling:
        return []  # a loss that stopped falling: an early stop on a plateau (EarlyStopping), not a cut-off start
    acc = ev.accuracy()
    if acc is not None and acc.best_value >= HEALTHY_ACCURACY:
        return []
    planned, seen = ev.epochs_planned or 0.0, ev.epochs_seen or 0.0
    score = f"; its {acc.name} {num(acc.last_value)} is that of a training that has barely started" if acc else ""
    return [
        on_curve(
            train,
            name="slow_or_unfinished",
            text=f"The log ends at epoch {seen:g} of the {planned:g} the run was set to train{score}.",
            step=seen,
            x_unit="epoch",
        )
    ]
