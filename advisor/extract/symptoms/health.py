"""Whether a run that shows no symptom plainly trains well, in words (``SymptomSummary.health``)."""

from __future__ import annotations

from advisor.extract.symptoms.evidence import RunEvidence, is_accuracy, num
from advisor.extract.symptoms.thresholds import (
    CEILING_ACCURACY,
    HEALTHY_ACCURACY,
    HEALTHY_CHANCE_RATIO,
    HEALTHY_DROP,
)


def health(ev: RunEvidence) -> str:
    """What shows that the run reached a good model, in words ('' when nothing does).

    Strict on purpose: a setting that often causes trouble is reported as a warning instead of a cause only in
    a run that plainly works: a held-out accuracy of HEALTHY_ACCURACY or more that also removes half the error of
    always naming the majority class (with 90 % of one class, 0.95), a classifier's loss brought down to
    HEALTHY_CHANCE_RATIO x ln(C) or less, a loss that lost HEALTHY_DROP of its start, or, with nothing held-out
    logged, a training accuracy at its ceiling (CEILING_ACCURACY) beside a loss that fell.
    """
    acc = ev.accuracy()
    binary_loss = ev.loss is not None and ev.loss.family == "bce"
    if acc is not None and (ev.n_classes or 2) > 2 and (acc.metric.lower() == "binary_accuracy" or binary_loss):
        # binary accuracy over C one-hot columns (what Keras' 'accuracy' means beside binary cross-entropy) is
        # (C - 1) / C for a model that predicts nothing
        return ""
    if acc is not None:  # a logged accuracy decides: a loss can fall far on a model that classifies badly
        # with unequal classes accuracy flatters: it must also remove at least half the majority's error
        majority = ev.majority
        beats_majority = majority is None or acc.best_value >= majority + (1.0 - majority) / 2
        if acc.best_value >= HEALTHY_ACCURACY and beats_majority:
            return f"{acc.name} reaches {num(acc.best_value)}"
        return ""
    for ch in ev.chances:
        if ch.end_ratio is not None and 0 <= ch.end_ratio <= HEALTHY_CHANCE_RATIO:
            return f"the {ch.split} loss ends at {ch.end_ratio:.2f} x ln({ch.n_classes})"
    for c in ev.curves:
        if not c.is_window and c.points >= 3 and (c.drop_ratio or 0) >= HEALTHY_DROP and not c.diverged:
            return f"the {c.split} loss fell by {c.drop_ratio:.0%} over {c.points} values"
    train, fit = ev.train(finite=True), next((t for t in ev.train_scores if 0.0 <= t.best_value <= 1.0), None)
    fell = train is not None and not train.is_window and (train.drop_ratio or 0) > 0 and not train.diverged
    if fit is not None and fell and fit.best_value >= CEILING_ACCURACY and not fit.is_frozen:
        return f"{fit.name} reaches {num(fit.best_value)} on the training data as the loss falls"
    return ""


__all__ = ["health", "is_accuracy"]
