"""Loss levels against the chance level ln(C), from the facts of two extractors.

The loss-curve extractor knows the levels of a curve; the model extractor knows the task, its class count
(from a hyper-parameter, a data sample, the output layer or a logged accuracy) and the loss. Neither knows
both, so this step runs on their facts after every extractor has run and adds one ``chance_level`` fact
per train or eval loss curve of a classification run trained with a cross-entropy.

Why ln(C): a classifier whose outputs are near uniform, as a network at initialisation with inputs of unit
scale is, has a cross-entropy of ln(C) (binary: ln 2); the levels of a curve read as multiples of it tell a
loss that starts far above any guess (very large logits at the start) or a loss floor that a noisy label
set imposes, whatever the scale of C. The lowest value is also read against ln(1 + (C - 1) / e), the floor of a
cross-entropy that applies softmax to outputs that are already probabilities.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from advisor.facts.base import Fact
from advisor.facts.loss_curve import ChanceLevel, LossCurve
from advisor.facts.model import LossSetup, Task

#: loss families whose value for a uniform prediction over C classes is ln(C)
_CE_FAMILIES = ("cross_entropy", "nll")


def _chance_loss(task: Task, loss: LossSetup) -> float | None:
    """ln(C) when the loss is a cross-entropy over the task's classes, else None."""
    n = task.n_classes
    if n is None or n < 2 or task.task_type not in ("binary", "multiclass"):
        return None
    if loss.family in _CE_FAMILIES or (loss.family == "bce" and task.task_type == "binary"):
        return math.log(n)
    return None


def classes_at_level(level: float) -> int:
    """The class count C whose chance loss ln(C) a level that ignores the labels sits at or just above: predictions
    independent of balanced labels cost at least ln(C) (Gibbs' inequality), so a level between ln(C) and ln(C + 1)
    reads as C (rounding would read 2.38, 3 % above ln(10), as 11 classes: for C >= 10 the chance bands of
    neighbours overlap); 0.005 nats of slack for a level printed at two decimals (2.30 is ln(10) rounded)."""
    k = math.floor(math.exp(level))
    return k + 1 if math.log(k + 1) - level <= 0.005 else k


def softmax_floor(n_classes: int) -> float:
    """ln(1 + (C - 1) / e): softmax over values in [0, 1] gives the true class at most e / (e + C - 1) (its value 1,
    the others 0), so a cross-entropy that applies softmax to probabilities never goes below this."""
    return math.log1p((n_classes - 1) / math.e)


def _ratio(value: float | None, chance: float) -> float | None:
    return value / chance if value is not None and math.isfinite(value) else None


def chance_levels(facts: Sequence[Fact]) -> list[Fact]:
    """One ``chance_level`` per loss curve of a side whose task is classification with a cross-entropy loss."""
    out: list[Fact] = []
    for side in ("run", "baseline"):
        task = next((f for f in facts if isinstance(f, Task) and f.side == side), None)
        loss = next((f for f in facts if isinstance(f, LossSetup) and f.side == side), None)
        if task is None or loss is None:
            continue
        chance = _chance_loss(task, loss)
        if chance is None:
            continue
        for curve in facts:
            if not isinstance(curve, LossCurve) or curve.side != side:
                continue
            out.append(
                ChanceLevel(
                    split=curve.split,
                    n_classes=int(task.n_classes or 0),
                    task_source=task.decided_from,
                    loss_name=loss.name,
                    chance_loss=chance,
                    first_ratio=_ratio(curve.first_value, chance),
                    start_ratio=_ratio(curve.start_level, chance),
                    end_ratio=_ratio(curve.end_level, chance),
                    min_over_softmax_floor_ratio=_ratio(curve.min_value, softmax_floor(int(task.n_classes or 0))),
                    side=side,
                    source=curve.source,
                )
            )
    return out


__all__ = ["chance_levels"]
