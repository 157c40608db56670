"""Facts about a run's evaluation scores on their own (``eval_score``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class EvalScore(Fact):
    """The last evaluation score a run logged (accuracy, f1, ...), whether or not an eval loss is logged beside it.

    Many scripts print only a final score: MindSpore ``Model.eval`` returns ``{'Accuracy': 0.94}``, Keras
    ``evaluate`` a loss and metrics, a hand-written loop ``test accuracy 0.94``. Rules that compare the train
    loss with held-out performance read it where no eval loss curve exists (``generalization_gap``).
    """

    kind: Literal["eval_score"] = "eval_score"
    name: str = Field(description="the score's key as logged (Accuracy, val_acc, eval_f1)")
    metric: str = Field(description="its base name (accuracy, f1, wer, ...)")
    points: int = Field(description="number of evaluations logged")
    last_value: float = Field(description="the last logged value")
    best_value: float = Field(description="the best logged value (lowest for error rates such as wer, cer)")
    best_minus_last: float = Field(
        default=0.0, description="how far the last value ends behind the best one, toward worse (0 at the best)"
    )
    is_higher_better: bool = Field(description="a higher value is better (accuracy, f1; not wer, cer, perplexity)")
    last_step: float | None = Field(default=None, description="step of the last evaluation, when logged with one")
    is_at_end: bool = Field(
        default=False,
        description="the last evaluation comes at or after the last logged train loss: the run's final evaluation, "
        "so the log is not an excerpt of the start of a run",
    )
    has_eval_loss: bool = Field(default=False, description="an eval loss is logged as well")
    train_last_value: float | None = Field(
        default=None,
        description="the last logged value of the same score on the training data (Keras' accuracy beside "
        "val_accuracy), when logged",
    )
    eval_minus_train: float | None = Field(
        default=None,
        description="last_value - train_last_value (for a higher-is-better score: how far the held-out score ends "
        "above the training score)",
    )
    train_end_gain_per_point: float | None = Field(
        default=None,
        description="the training score's mean change per logged point over its last three intervals (toward better; "
        "Keras logs one point an epoch, the average over that epoch)",
    )
    eval_lead_in_train_gains: float | None = Field(
        default=None,
        description="eval_minus_train / max(train_end_gain_per_point, 0.005): how many points of the training score's "
        "current progress the held-out score is ahead by; an epoch average trails the epoch's end by at most one",
    )
    eval_loss_to_ce_floor_ratio: float | None = Field(
        default=None,
        description="for an accuracy: the eval loss of the same evaluation / ((1 - accuracy) ln 2), the least mean "
        "cross-entropy that accuracy allows (a misclassified sample gives its class a probability below 1/2); below "
        "1, the loss cannot be a cross-entropy of these predictions. None without an eval loss logged with each "
        "accuracy, or at 100 % accuracy",
    )
    doc = "the last evaluation score of a run, when it was evaluated at the end, and whether an eval loss exists"


class TrainScore(Fact):
    """The training accuracy a run logged when it logged no held-out score (Keras' ``acc`` without ``val_acc``)."""

    kind: Literal["train_score"] = "train_score"
    name: str = Field(description="the score's key as logged (acc, accuracy, train_acc)")
    points: int = Field(description="number of logged values")
    last_value: float = Field(description="the last logged value")
    best_value: float = Field(description="the highest logged value")
    is_frozen: bool = Field(description="every logged value is the same (at the logged precision)")
    doc = "a training accuracy logged without any held-out score: its last and best value, frozen or not"


class AccuracyLossBound(Fact):
    """The train cross-entropy against the label entropy that the eval accuracy allows (Fano's inequality).

    A classifier that errs on a share e of held-out samples shows that the labels given the inputs hold at most
    h(e) + e ln(C - 1) nats (Fano), so a network that fits clean training labels can bring its train
    cross-entropy down to about that bound; a train loss levelled off far above it is more uncertainty than the
    clean labels have.
    """

    kind: Literal["accuracy_loss_bound"] = "accuracy_loss_bound"
    n_classes: int = Field(description="C, the class count of the task")
    eval_accuracy: float = Field(description="the last eval accuracy (eval_score)")
    bound_loss: float = Field(
        description="h(e) + e ln(C - 1) with e = 1 - eval_accuracy, at least 0.005 (a perfect score bounds the "
        "error only to its resolution): Fano's upper bound on the label entropy, nats"
    )
    train_end_level: float = Field(description="the train loss's end level (loss_curve end_level)")
    train_to_bound_ratio: float = Field(description="train_end_level / bound_loss")
    train_chance_ratio: float | None = Field(
        default=None, description="train_end_level / ln(n_classes): the train loss level in units of a uniform guess"
    )
    has_eval_loss: bool = Field(default=False, description="an eval loss is logged as well (eval_score)")
    doc = "train loss end level against Fano's bound on the label entropy implied by the eval accuracy"


class FinalEvaluation(Fact):
    """The final evaluation on a test split (Keras ``evaluate``, a ``Test loss:`` print) against the last
    validation of the same run."""

    kind: Literal["final_evaluation"] = "final_evaluation"
    test_loss: float | None = Field(default=None, description="the last test loss logged")
    validation_loss: float | None = Field(default=None, description="the last validation loss logged before it")
    loss_ratio: float | None = Field(default=None, description="test_loss / validation_loss")
    score_name: str | None = Field(default=None, description="the test score compared (accuracy, ...), as logged")
    test_score: float | None = Field(default=None, description="the last test score")
    validation_score: float | None = Field(default=None, description="the last validation score of the same metric")
    score_drop: float | None = Field(
        default=None, description="validation_score - test_score, in the score's direction (positive: test worse)"
    )
    doc = "the final test evaluation against the last validation: a held-out set prepared like the validation one"
