"""What the run shows: symptom facts from the facts of every other extractor (a combining step, run last).

The routine starts from the symptom (docs/routine.md): an expert first says what the run shows, then which
causes explain it. This step reads the curve, score, gradient, crash and benchmark facts of the run side and
says, in one sentence each, what a healthy training does not do: a NaN/Inf loss (before any update, or after
how many), a loss that explodes, never leaves its start, levels off at ln(C) or at a floor the task does not
impose, oscillates; a held-out score at chance or worse than the training one; a metric that contradicts the
loss; a gap to the baseline or to a stated target; an exception. A run that shows none of them and whose loss
fell (or whose score is well above chance) *trains well*: a setting that often causes trouble, found in such a
run, is a warning, not a cause (advisor/rank.py).

Thresholds are named constants below; each is loose enough that the healthy runs of the development sets
show no symptom (tests/extract/test_symptoms.py holds them to that).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from advisor.extract.chance import classes_at_level
from advisor.facts.base import Fact
from advisor.facts.benchmark import BenchmarkGap
from advisor.facts.evaluation import AccuracyLossBound, EvalScore, TrainScore
from advisor.facts.hparams import Hyperparameter
from advisor.facts.loss_curve import ChanceLevel, GeneralizationGap, GradNormTrend, LossCurve
from advisor.facts.mixed_precision import LossScaleTrend, TrainingCrash
from advisor.facts.model import LossSetup, Task
from advisor.facts.symptom import SYMPTOM_IDS, Symptom, SymptomSummary

from advisor.extract.symptoms_base import (
    ABOVE_CHANCE_MAX,
    CEILING_ACCURACY,
    CHANCE_BAND,
    FLAT_DROP,
    FLOOR_BAND,
    GRAD_NORM_GROWTH,
    GRAD_NORM_HUGE,
    HEALTHY_ACCURACY,
    HEALTHY_CHANCE_RATIO,
    HEALTHY_DROP,
    JUMP_OVER_FIRST,
    LOSS_HUGE,
    NOISE_OF_END,
    NOISE_OF_START,
    OSCILLATION_MIN_POINTS,
    PEAK_OVER_START,
    RISE_OVER_INITIAL_EVAL,
    _frozen,
    _is_accuracy,
    _num,
    _on,
    _run,
    _updates_before,
    _where,
)
from advisor.extract.symptoms_eval import (
    _above_label_entropy,
    _baseline,
    _early,
    _eval_worse,
    _saturated,
    _score,
    _target,
    _train_above_eval,
)


def _nonfinite(curves: list[LossCurve], crashes: list[TrainingCrash]) -> list[Symptom]:
    train = next((c for c in curves if c.split == "train" and c.first_nonfinite_step is not None), None)
    if train is not None:
        step = train.first_nonfinite_step
        assert step is not None
        updates = _updates_before(train, step)
        first_is_bad = train.first_value is None or train.first_step == step
        at_start = first_is_bad and (updates == 0 or (train.x_unit != "step" and train.first_step in (0, 1)))
        name = train.metric_name or "loss"
        if at_start:
            text = f"The train loss ({name}) is NaN or infinite from its first value{_where(train, step)}, before any update."
        else:
            after = f" (after {updates} update{'s' if updates != 1 else ''})" if updates is not None else ""
            verb = "is NaN or infinite from its first logged value," if first_is_bad else "became NaN or infinite"
            text = f"The train loss ({name}) {verb}{_where(train, step)}{after}."
        return [
            _on(
                train,
                name="nonfinite_loss_at_start" if at_start else "nonfinite_loss",
                text=text,
                step=step,
                x_unit=train.x_unit,
                updates_before=0 if at_start else updates,
            )
        ]
    crash = next((c for c in crashes if c.is_nonfinite), None)
    if crash is not None:
        where = f" after step {crash.step}" if crash.step is not None else ""
        return [
            Symptom(
                name="nonfinite_loss",
                text=f"The run stopped on a non-finite loss{where}.",
                step=crash.step,
                x_unit="step" if crash.step is not None else None,
                source=crash.source,
            )
        ]
    evals = next((c for c in curves if c.split == "eval" and c.first_nonfinite_step is not None), None)
    if evals is not None:
        name = evals.metric_name or "eval loss"
        train_ok = any(c.split == "train" and c.points for c in curves)
        return [
            _on(
                evals,
                name="nonfinite_eval_loss",
                text=f"The eval loss ({name}) is NaN or infinite{_where(evals, evals.first_nonfinite_step)}"
                + (" while the train loss stays finite." if train_ok else "."),
                step=evals.first_nonfinite_step,
                x_unit=evals.x_unit,
            )
        ]
    return []


def _explodes(curves: list[LossCurve], grads: list[GradNormTrend], task: Task | None) -> list[Symptom]:
    train = next((c for c in curves if c.split == "train"), None)
    if train is not None and train.first_nonfinite_step is None:
        name = train.metric_name or "loss"
        if train.diverged or (train.peak_over_start_ratio or 0) >= PEAK_OVER_START:
            peak = train.peak_over_start_ratio
            size = f" to {_num(peak)}x its start level" if peak is not None and peak > 1 else ""
            low = train.min_value
            if low is not None and train.first_value is not None and low < train.first_value / 2:
                size = f" from its lowest value, {_num(low)},{size or ' back up'}"
            return [
                _on(
                    train,
                    name="loss_explodes",
                    text=f"The train loss ({name}) climbed{size}{_where(train, train.divergence_step)} "
                    "and did not come back.",
                    step=train.divergence_step,
                    x_unit=train.x_unit,
                    level=peak,
                )
            ]
        first, last = train.first_value, train.last_value
        if first is not None and last is not None and first > 0 and last >= JUMP_OVER_FIRST * first:
            return [
                _on(
                    train,
                    name="loss_explodes",
                    text=f"The train loss ({name}) rose from {_num(first)} (its first value) to {_num(last)} "
                    f"({_num(last / first)}x) and stayed there.",
                    level=last,
                    reference=first,
                )
            ]
        values = [v for v in (first, last) if v is not None]
        huge = max(values, default=0.0)
        if huge >= LOSS_HUGE and (task is None or task.task_type != "regression"):
            return [
                _on(
                    train,
                    name="loss_explodes",
                    text=f"The train loss ({name}) reaches {_num(huge)}, orders of magnitude beyond any "
                    "classification or detection loss of a training that works.",
                    level=huge,
                )
            ]
        initial = next(
            (
                c
                for c in curves
                if c.split == "eval" and c.first_step is not None and c.first_step <= 1 and c.first_value
            ),
            None,
        )
        if initial is not None and initial.first_value and train.first_value is not None:
            ratio = train.first_value / initial.first_value
            if ratio >= RISE_OVER_INITIAL_EVAL and (train.first_step or 0) > (initial.first_step or 0):
                return [
                    _on(
                        train,
                        name="loss_explodes",
                        text=f"The train loss ({name}) is {_num(train.first_value)}{_where(train, train.first_step)}, "
                        f"{_num(ratio)}x the eval loss of the model before training ({_num(initial.first_value)}): "
                        "the first updates made the model worse.",
                        step=train.first_step,
                        x_unit=train.x_unit,
                        level=train.first_value,
                        reference=initial.first_value,
                    )
                ]
    for g in grads:
        if g.first_nonfinite_step is not None:
            continue
        big = g.max_value is not None and g.max_value >= GRAD_NORM_HUGE
        grown = g.growth_ratio is not None and g.growth_ratio >= GRAD_NORM_GROWTH
        if big or grown:
            how = f"grew {_num(g.growth_ratio)}x" if grown and g.growth_ratio is not None else "reached"
            return [
                Symptom(
                    name="loss_explodes",
                    text=f"The gradient norm {how} to {_num(g.max_value or 0.0)}"
                    + (f" at step {g.max_step}" if g.max_step is not None else "")
                    + ": the gradients explode.",
                    step=g.max_step,
                    x_unit="step" if g.max_step is not None else None,
                    level=g.max_value,
                    source=g.source,
                )
            ]
    return []


#: ln of the most classes a chance level is read for (a loss of 1e4 is no ln(C), and exp of it overflows)
MAX_CHANCE_LEVEL = math.log(1_000_000)


def _chance_of_level(curve: LossCurve, accuracy: float | None) -> int | None:
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


def _accuracy_beside(scores: list[EvalScore], train_scores: list[TrainScore]) -> tuple[str, float] | None:
    """(name, last value) of the accuracy logged beside the loss: the held-out one, else the training one (fastai's
    table and Keras without validation print an unprefixed ``accuracy``)."""
    acc = next((s for s in scores if _is_accuracy(s)), None)
    if acc is not None:
        return acc.name, acc.last_value
    train = next((t for t in train_scores if 0.0 <= t.last_value <= 1.0), None)
    return (train.name, train.last_value) if train is not None else None


def _stuck(
    curves: list[LossCurve],
    chances: list[ChanceLevel],
    scores: list[EvalScore],
    n_classes: int | None,
    train_scores: list[TrainScore],
) -> list[Symptom]:
    out: list[Symptom] = []
    acc = _accuracy_beside(scores, train_scores)
    train = next((c for c in curves if c.split == "train" and c.first_nonfinite_step is None), None)
    chance = next((c for c in chances if c.split == "train"), None)
    if train is not None and chance is not None and chance.end_ratio is not None:
        flat = train.points >= 5 and train.drop_ratio is not None and abs(train.drop_ratio) < FLAT_DROP
        levelled = train.is_plateau or train.is_stagnant or _frozen(train) or flat
        if 1.0 + CHANCE_BAND < chance.end_ratio <= ABOVE_CHANCE_MAX and levelled and not train.is_window:
            out.append(
                _on(
                    train,
                    name="loss_at_chance",
                    text=f"The train loss ({train.metric_name or 'loss'}) levels off at {_num(train.end_level or 0.0)}, "
                    f"{chance.end_ratio:.2f} x ln({chance.n_classes}): worse than a uniform guess over "
                    f"{chance.n_classes} classes ({_num(chance.chance_loss)}).",
                    level=train.end_level,
                    reference=chance.chance_loss,
                )
            )
        elif abs(chance.end_ratio - 1.0) <= CHANCE_BAND and levelled:
            out.append(
                _on(
                    train,
                    name="loss_at_chance",
                    text=f"The train loss ({train.metric_name or 'loss'}) levels off at {_num(train.end_level or 0.0)}, "
                    f"ln({chance.n_classes}) = {_num(chance.chance_loss)}: the loss of a uniform guess over "
                    f"{chance.n_classes} classes.",
                    step=train.plateau_start_step,
                    x_unit=train.x_unit,
                    level=train.end_level,
                    reference=chance.chance_loss,
                )
            )
        elif (
            chance.min_over_softmax_floor_ratio is not None
            and 1.0 <= chance.min_over_softmax_floor_ratio <= FLOOR_BAND
            and not train.is_still_falling
        ):
            floor = math.log1p((chance.n_classes - 1) / math.e)
            out.append(
                _on(
                    train,
                    name="loss_at_floor",
                    text=f"The train loss ({train.metric_name or 'loss'}) levels off at {_num(train.end_level or 0.0)}, "
                    f"just above {_num(floor)}: the least cross-entropy a softmax applied to probabilities allows "
                    f"over {chance.n_classes} classes.",
                    level=train.end_level,
                    reference=floor,
                )
            )
    if train is not None and not out and not train.is_window:
        frozen = _frozen(train)
        stagnant = train.is_stagnant and not train.is_oscillating
        k = n_classes or _chance_of_level(train, acc[1] if acc else None)
        level = train.last_value if frozen else train.end_level
        if (frozen or stagnant) and k and level is not None and abs(level / math.log(k) - 1) <= CHANCE_BAND:
            out.append(
                _on(
                    train,
                    name="loss_at_chance",
                    text=f"The train loss ({train.metric_name or 'loss'}) "
                    + ("stays at" if frozen else "never leaves its start level: it ends at")
                    + f" {_num(level)}, ln({k}) = {_num(math.log(k))}: the loss of a uniform guess over {k} classes.",
                    level=level,
                    reference=math.log(k),
                )
            )
        elif frozen or stagnant:
            what = (
                f"stays at {_num(train.last_value or 0.0)} at every one of its {train.points} logged values"
                if frozen
                else f"never leaves its start level ({_num(train.start_level or 0.0)} to "
                f"{_num(train.end_level or 0.0)} over {train.points} values)"
            )
            out.append(
                _on(
                    train,
                    name="loss_stuck",
                    text=f"The train loss ({train.metric_name or 'loss'}) {what}.",
                    level=train.last_value,
                )
            )
    if train is None or (train.points <= 1 and not out):
        k = n_classes
        single = next((c for c in curves if c.split == "train" and c.points == 1), None)
        if single is not None and acc is not None and single.last_value is not None:
            k = k or _chance_of_level(single, acc[1])
            if k and abs(single.last_value / math.log(k) - 1) <= CHANCE_BAND:
                out.append(
                    _on(
                        single,
                        name="loss_at_chance",
                        text=f"The train loss ({single.metric_name or 'loss'}) is {_num(single.last_value)}, "
                        f"ln({k}) = {_num(math.log(k))}, and {acc[0]} is {_num(acc[1])}, about 1/{k}: "
                        f"the model guesses uniformly over {k} classes.",
                        level=single.last_value,
                        reference=math.log(k),
                    )
                )
    return out


def _oscillates(curves: list[LossCurve]) -> list[Symptom]:
    train = next((c for c in curves if c.split == "train" and c.first_nonfinite_step is None), None)
    if train is None or train.points < OSCILLATION_MIN_POINTS or train.noise_ratio is None:
        return []
    share_of_start = train.noise_ratio * (1.0 - (train.drop_ratio or 0.0))
    if not (train.is_oscillating or (train.noise_ratio >= NOISE_OF_END and share_of_start >= NOISE_OF_START)):
        return []
    return [
        _on(
            train,
            name="loss_oscillates",
            text=f"The train loss ({train.metric_name or 'loss'}) swings by about {train.noise_ratio:.0%} of its "
            f"level from one logged value to the next"
            + (" and never settles." if train.is_oscillating else f", from {_num(train.min_value or 0.0)} upward."),
            level=train.noise_ratio,
        )
    ]


def _eval_loss_zero(curves: list[LossCurve]) -> list[Symptom]:
    """An eval loss logged as exactly 0 at every evaluation while the train loss is not: nothing was evaluated."""
    ev = next((c for c in curves if c.split == "eval"), None)
    train = next((c for c in curves if c.split == "train"), None)
    if ev is None or train is None or ev.first_value != 0.0 or ev.last_value != 0.0 or ev.min_value != 0.0:
        return []
    if not train.last_value:
        return []
    return [
        _on(
            ev,
            name="metric_inconsistent",
            text=f"The eval loss ({ev.metric_name or 'eval loss'}) is exactly 0 at every evaluation while the train "
            f"loss is {_num(train.last_value)}: the evaluation did not run on what the model predicts.",
            level=0.0,
        )
    ]


def _negative_loss(curves: list[LossCurve], loss: LossSetup | None) -> list[Symptom]:
    """A cross-entropy logged below zero: no cross-entropy of probabilities is negative."""
    train = next((c for c in curves if c.split == "train" and c.min_value is not None and c.min_value < 0), None)
    if train is None or loss is None or loss.family not in ("cross_entropy", "bce", "nll"):
        return []
    return [
        _on(
            train,
            name="metric_inconsistent",
            text=f"The train loss ({train.metric_name or 'loss'}) goes down to {_num(train.min_value or 0.0)}, "
            f"below 0, which no {loss.name} of probabilities can be: the targets or outputs are not what the loss "
            "expects.",
            level=train.min_value,
            reference=0.0,
        )
    ]


def _gradients(grads: list[GradNormTrend], already: set[str]) -> list[Symptom]:
    if already & {"nonfinite_loss", "nonfinite_loss_at_start"}:
        return []
    g = next((g for g in grads if g.first_nonfinite_step is not None), None)
    if g is None:
        return []
    tail = " and stays so" if g.is_nonfinite_at_end else ", then finite again"
    return [
        Symptom(
            name="nonfinite_gradients",
            text=f"The gradient norm is NaN or infinite at step {g.first_nonfinite_step} ({g.nonfinite_count} "
            f"time{'s' if g.nonfinite_count != 1 else ''}){tail}, while the loss stays finite.",
            step=g.first_nonfinite_step,
            x_unit="step",
            source=g.source,
        )
    ]


def _loss_scale(trends: list[LossScaleTrend]) -> list[Symptom]:
    """A dynamic loss scale that fell to 1: gradients overflow at every scale the scaler tried."""
    t = next((t for t in trends if t.reached_one and not t.is_constant), None)
    if t is None:
        return []
    start = f" from {_num(t.initial_value)}" if t.initial_value is not None else ""
    return [
        Symptom(
            name="loss_scale_collapses",
            text=f"The dynamic loss scale fell to {_num(t.final_value if t.final_value is not None else 1.0)}{start} "
            f"after {t.reductions} reductions: the gradients overflow at every scale.",
            level=t.final_value,
            reference=t.initial_value,
            source=t.source,
        )
    ]


def _crash(crashes: list[TrainingCrash], already: set[str]) -> list[Symptom]:
    if already & {"nonfinite_loss", "nonfinite_loss_at_start"}:
        return []
    c = next((c for c in crashes if not c.is_nonfinite), None)
    if c is None:
        return []
    where = f" after step {c.step}" if c.step is not None else ""
    return [
        Symptom(
            name="crash",
            text=f"The run stopped{where} with {c.exception}.",
            step=c.step,
            x_unit="step" if c.step is not None else None,
            source=c.source,
        )
    ]


def _slow(curves: list[LossCurve]) -> list[Symptom]:
    train = next((c for c in curves if c.split == "train" and c.is_slow and not c.is_window), None)
    if train is None:
        return []
    return [
        _on(
            train,
            name="slow_or_unfinished",
            text=f"The train loss ({train.metric_name or 'loss'}) falls steadily but removed only "
            f"{train.drop_ratio or 0:.0%} of its start level over {train.points} values.",
            level=train.drop_ratio,
        )
    ]


def _health(
    curves: list[LossCurve],
    scores: list[EvalScore],
    chances: list[ChanceLevel],
    majority: float | None,
    n_classes: int | None,
    binary_loss: bool = False,
) -> str:
    """What shows that the run reached a good model, in words ('' when nothing does).

    Strict on purpose: a setting that often causes trouble is reported as a warning instead of a cause only in
    a run that plainly works: a held-out accuracy of HEALTHY_ACCURACY or more that also removes half the error of
    always naming the majority class (with 90 % of one class, 0.95), a
    classifier's loss brought down to HEALTHY_CHANCE_RATIO x ln(C) or less, or a loss that lost HEALTHY_DROP
    of its start.
    """
    acc = next((s for s in scores if _is_accuracy(s)), None)
    if acc is not None and (n_classes or 2) > 2 and (acc.metric.lower() == "binary_accuracy" or binary_loss):
        # binary accuracy over C one-hot columns (what Keras' 'accuracy' means beside binary cross-entropy) is
        # (C - 1) / C for a model that predicts nothing
        return ""
    if acc is not None:  # a logged accuracy decides: a loss can fall far on a model that classifies badly
        # with unequal classes accuracy flatters: it must also remove at least half the majority's error
        beats_majority = majority is None or acc.best_value >= majority + (1.0 - majority) / 2
        if acc.best_value >= HEALTHY_ACCURACY and beats_majority:
            return f"{acc.name} reaches {_num(acc.best_value)}"
        return ""
    for ch in chances:
        if ch.end_ratio is not None and 0 <= ch.end_ratio <= HEALTHY_CHANCE_RATIO:
            return f"the {ch.split} loss ends at {ch.end_ratio:.2f} x ln({ch.n_classes})"
    for c in curves:
        if not c.is_window and c.points >= 3 and (c.drop_ratio or 0) >= HEALTHY_DROP and not c.diverged:
            return f"the {c.split} loss fell by {c.drop_ratio:.0%} over {c.points} values"
    return ""


def _has_dropout(facts: Sequence[Fact]) -> bool:
    """A dropout layer or a dropout rate above 0 is known (it raises the train loss above the eval loss)."""
    for f in facts:
        if f.side != "run":
            continue
        if f.kind == "model_layer" and "dropout" in str(getattr(f, "layer_type", "")).lower():
            return True
        if isinstance(f, Hyperparameter) and f.name == "dropout" and isinstance(f.value, (int, float)) and f.value:
            return True
    return False


def symptoms(facts: Sequence[Fact]) -> list[Fact]:
    """The run's ``symptom`` facts, most specific first, and one ``symptom_summary``."""
    curves = _run(facts, LossCurve)
    scores = _run(facts, EvalScore)
    grads = _run(facts, GradNormTrend)
    crashes = _run(facts, TrainingCrash)
    task = next(iter(_run(facts, Task)), None)
    n_classes = task.n_classes if task is not None and task.task_type in ("binary", "multiclass") else None
    if n_classes is None:
        n_classes = next((c.n_classes for c in _run(facts, ChanceLevel)), None)
    labels = sorted(
        (f for f in facts if f.kind == "label_stats" and f.side == "run" and getattr(f, "majority_share", None)),
        key=lambda f: getattr(f, "split", "") != "train",  # the training labels first: what the model learnt
    )
    majority = getattr(labels[0], "majority_share", None) if labels else None
    if n_classes is None:  # the classes the label samples hold (the held-out sample first: it has them all)
        counts = [getattr(f, "n_classes", None) for f in reversed(labels) if getattr(f, "is_classification", False)]
        n_classes = next((int(c) for c in counts if c and c >= 2), None)
    found: list[Symptom] = []
    found += _nonfinite(curves, crashes)
    found += _explodes(curves, grads, task)
    names: set[str] = {s.name for s in found}
    if "nonfinite_loss" not in names and "nonfinite_loss_at_start" not in names:
        # (also after a jump: a loss that leapt to the clip's cost and stays there is saturated outputs)
        found += _saturated(curves, scores, _run(facts, TrainScore))
    if not names & {"nonfinite_loss", "nonfinite_loss_at_start", "loss_explodes"}:
        found += _stuck(curves, _run(facts, ChanceLevel), scores, n_classes, _run(facts, TrainScore))
        if not {s.name for s in found} & {"loss_at_chance", "loss_stuck", "loss_at_floor"}:
            found += _above_label_entropy(_run(facts, AccuracyLossBound), curves) or _train_above_eval(
                _run(facts, GeneralizationGap), n_classes, _has_dropout(facts)
            )
        found += _oscillates(curves)
    names = set[str](s.name for s in found)
    early = _early(curves, _run(facts, Hyperparameter))
    found += _score(scores, curves, n_classes, majority, names, early)
    if "metric_inconsistent" not in {s.name for s in found}:
        found += _eval_loss_zero(curves) or _negative_loss(curves, next(iter(_run(facts, LossSetup)), None))
    if not names & {"nonfinite_loss", "nonfinite_loss_at_start", "loss_explodes", "loss_stuck", "loss_at_chance"}:
        found += _eval_worse(_run(facts, GeneralizationGap), scores, n_classes)
    names = set[str](s.name for s in found)
    found += _gradients(grads, names)
    found += _loss_scale(_run(facts, LossScaleTrend))
    found += _crash(crashes, names)
    found += _baseline(_run(facts, BenchmarkGap))
    found += _target(_run(facts, Hyperparameter), scores, curves)
    if not found:
        found += _slow(curves)
    order = {name: i for i, name in enumerate(SYMPTOM_IDS)}
    unique: dict[str, Symptom] = {}
    for s in found:
        unique.setdefault(s.name, s.model_copy(update={"rank": order[s.name]}))
    shown = sorted(unique.values(), key=lambda s: s.rank)
    if shown:
        status = "symptom"
        health = ""
    else:
        loss = next(iter(_run(facts, LossSetup)), None)
        binary = loss is not None and loss.family == "bce"
        health = _health(curves, scores, _run(facts, ChanceLevel), majority, n_classes, binary)
        evidence = any(c.points >= 2 for c in curves) or bool(scores)
        status = "trains_well" if health else "unclear" if evidence else "no_evidence"
    accuracy = next((s for s in scores if _is_accuracy(s)), None)
    summary = SymptomSummary(
        status=status,  # type: ignore[arg-type]
        primary=shown[0].name if shown else None,
        names=",".join(s.name for s in shown),
        count=len(shown),
        health=health,
        at_ceiling=bool(health) and accuracy is not None and accuracy.best_value >= CEILING_ACCURACY,
    )
    return [*shown, summary]
