"""Which symptoms each cause can produce: the mechanisms, as data (docs/causes.md, "what points at it").

A setting or structure that often causes trouble (a smell) is a cause of *this* run's problem only if the run
shows a symptom the cause can produce: a learning rate far above its band explains a NaN loss or an oscillating
one, not a held-out accuracy at the majority share; softmax before a loss that takes logits explains a loss
that levels off at a floor, not a NaN after 5,000 steps. ``EXPLAINS`` lists, for every cause, the symptoms its
documented mechanism produces. Every cause can leave a run short of its baseline or of a stated target
(``ANY_CAUSE``), so those two symptoms are explained by all.

The lists follow the mechanisms of docs/causes.md and of the rules that conclude each cause (their doc.why);
where the field's studies name a symptom for a cause (advisor/knowledge/symptom_priors.py), it is listed here too.
"""

from __future__ import annotations

#: symptoms any cause can explain: a shortfall against a reference says nothing about the mechanism
ANY_CAUSE = frozenset({"baseline_gap", "target_gap"})

_NONFINITE = (
    "nonfinite_loss_at_start",
    "nonfinite_loss",
    "nonfinite_eval_loss",
    "nonfinite_gradients",
    "loss_scale_collapses",
)
_NO_LEARNING = ("loss_stuck", "loss_at_chance", "score_at_chance", "score_near_zero", "slow_or_unfinished")

EXPLAINS: dict[str, frozenset[str]] = {
    cause: frozenset(symptoms) | ANY_CAUSE
    for cause, symptoms in {
        "lr_too_high": (
            "predictions_saturated",
            *_NONFINITE,
            "loss_explodes",
            "loss_oscillates",
            "loss_stuck",
            "loss_at_chance",
            "score_at_chance",
            "score_near_zero",
            "eval_worse_than_train",
            "crash",
        ),
        "lr_too_low": _NO_LEARNING,
        "loss_scale_bad": (*_NONFINITE, "loss_explodes", "loss_stuck", "loss_at_chance", "score_at_chance"),
        "weight_init_bad": ("predictions_saturated", *_NONFINITE, "loss_explodes", *_NO_LEARNING, "loss_at_floor"),
        "hparam_mismatch": (
            "predictions_saturated",
            *_NONFINITE,
            "loss_explodes",
            *_NO_LEARNING,
            "loss_at_floor",
            "loss_oscillates",
            "eval_worse_than_train",
            "metric_inconsistent",
        ),
        "insufficient_epochs": _NO_LEARNING,
        "wrong_operator": (
            "predictions_saturated",
            *_NONFINITE,
            "loss_explodes",
            *_NO_LEARNING,
            "loss_at_floor",
            "loss_oscillates",
            "metric_inconsistent",
            "eval_worse_than_train",
            "crash",
        ),
        "weight_sharing_error": (*_NO_LEARNING, "loss_at_floor", "eval_worse_than_train"),
        "weight_freezing_error": (*_NO_LEARNING, "loss_at_floor"),
        "disconnected_node": (*_NO_LEARNING, "loss_at_floor"),
        "loss_function_error": (
            "predictions_saturated",
            "nonfinite_loss_at_start",
            "nonfinite_loss",
            "loss_explodes",
            *_NO_LEARNING,
            "loss_at_floor",
            "metric_inconsistent",
            "loss_oscillates",
        ),
        "optimizer_error": (*_NONFINITE, "loss_explodes", "loss_oscillates", *_NO_LEARNING),
        "missing_values": (
            "nonfinite_loss_at_start",
            "nonfinite_loss",
            "nonfinite_eval_loss",
            "score_at_chance",
            "crash",
        ),
        "class_imbalance": ("score_at_chance", "loss_at_floor", "eval_worse_than_train", "loss_stuck"),
        "outliers": (
            "loss_at_floor",
            "nonfinite_loss_at_start",
            "nonfinite_loss",
            "loss_explodes",
            "loss_oscillates",
            "eval_worse_than_train",
            "nonfinite_gradients",
        ),
        "label_errors": (
            "predictions_saturated",
            "loss_at_floor",
            "loss_at_chance",
            "loss_stuck",
            "score_at_chance",
            "score_near_zero",
            "eval_worse_than_train",
            "loss_oscillates",
        ),
        "insufficient_samples": ("eval_worse_than_train", "score_at_chance"),
        "not_normalized": (
            "predictions_saturated",
            *_NONFINITE,
            "loss_explodes",
            *_NO_LEARNING,
            "loss_oscillates",
            "eval_worse_than_train",
        ),
        "preprocessing_mismatch": (
            "eval_worse_than_train",
            "score_at_chance",
            "score_near_zero",
            "nonfinite_eval_loss",
            "metric_inconsistent",
        ),
        "gradient_explosion": (*_NONFINITE, "loss_explodes", "loss_oscillates"),
        "gradient_vanishing": (*_NO_LEARNING, "loss_at_floor"),
        "activation_saturation": ("predictions_saturated", *_NO_LEARNING, "loss_at_floor"),
        "overfitting": ("eval_worse_than_train",),
        "fp_overflow": (*_NONFINITE, "loss_explodes", "loss_stuck", "loss_at_chance", "score_at_chance"),
        "nan_inf_source": _NONFINITE,
        # an operator or a fused kernel that deviates only in inference, or dropout left on at evaluation, makes
        # the held-out figures worse than the training ones
        "operator_accuracy": (
            "nonfinite_loss",
            "nonfinite_eval_loss",
            "loss_explodes",
            "score_at_chance",
            "eval_worse_than_train",
        ),
        "fusion_error": ("nonfinite_loss", "nonfinite_eval_loss", "score_at_chance", "eval_worse_than_train"),
        "nondeterminism": ("loss_oscillates", "eval_worse_than_train"),
        "data_not_shuffled": (
            "loss_oscillates",
            "eval_worse_than_train",
            "score_at_chance",
            "loss_stuck",
            "loss_at_floor",
        ),
        "metric_misuse": ("metric_inconsistent", "score_at_chance", "score_near_zero"),
        "baseline_unqualified": (),
        "environment_mismatch": (
            "predictions_saturated",
            *_NONFINITE,
            "loss_explodes",
            *_NO_LEARNING,
            "loss_at_floor",
            "loss_oscillates",
            "metric_inconsistent",
            "eval_worse_than_train",
            "crash",
        ),
    }.items()
}


def explains(cause: str, symptoms: set[str] | frozenset[str]) -> bool:
    """Whether ``cause`` can produce one of ``symptoms`` (a custom cause id explains whatever the run shows)."""
    known = EXPLAINS.get(cause)
    return known is None or bool(known & symptoms)
