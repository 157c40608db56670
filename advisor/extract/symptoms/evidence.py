"""What the symptom detectors read: the run side's curve, score, gradient, crash, benchmark and setting facts,
gathered once (``gather``), and the few helpers that word a symptom the same way in every detector."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from advisor.facts.base import Fact
from advisor.facts.benchmark import BenchmarkGap
from advisor.facts.evaluation import AccuracyLossBound, EvalScore, FinalEvaluation, TrainScore
from advisor.facts.hparams import Hyperparameter
from advisor.facts.loss_curve import ChanceLevel, GeneralizationGap, GradNormTrend, LossCurve
from advisor.facts.mixed_precision import LossScaleTrend, TrainingCrash
from advisor.facts.model import LossSetup, Task
from advisor.facts.symptom import Symptom
from advisor.knowledge.metrics import ACCURACY

from advisor.extract.symptoms.thresholds import EARLY_SHARE

F = TypeVar("F", bound=Fact)


def of_run(facts: Sequence[Fact], cls: type[F]) -> list[F]:
    """The run side's facts of one class, in order."""
    return [f for f in facts if isinstance(f, cls) and f.side == "run"]


@dataclass(frozen=True)
class RunEvidence:
    """The run side's facts that symptoms are read from, and what is worked out of them once."""

    curves: list[LossCurve]
    scores: list[EvalScore]
    train_scores: list[TrainScore]
    grads: list[GradNormTrend]
    crashes: list[TrainingCrash]
    chances: list[ChanceLevel]
    bounds: list[AccuracyLossBound]
    gaps: list[GeneralizationGap]
    hparams: list[Hyperparameter]
    loss_scales: list[LossScaleTrend]
    benchmark_gaps: list[BenchmarkGap]
    task: Task | None
    #: the final test evaluations against the last validation
    finals: list[FinalEvaluation]
    loss: LossSetup | None
    #: the class count: stated by the task, else the chance level's, else the label samples' (None: not a classifier
    #: or not known)
    n_classes: int | None
    #: the share of the most common class in the training labels (else the held-out ones)
    majority: float | None
    #: a dropout layer or a dropout rate above 0 is known (it raises the train loss above the eval loss)
    dropout: bool
    #: the epochs the run was set to train (an ``epochs`` setting), and the last epoch a curve logged
    epochs_planned: float | None
    epochs_seen: float | None

    @property
    def early(self) -> bool:
        """The run logged less than EARLY_SHARE of the epochs it planned."""
        planned, seen = self.epochs_planned, self.epochs_seen
        return bool(planned) and seen is not None and seen < EARLY_SHARE * planned  # type: ignore[operator]

    def train(self, finite: bool = False) -> LossCurve | None:
        """The first train-loss curve (with ``finite``, the first that never turned NaN/Inf)."""
        return next(
            (c for c in self.curves if c.split == "train" and (not finite or c.first_nonfinite_step is None)), None
        )

    def accuracy(self) -> EvalScore | None:
        """The first held-out accuracy in [0, 1]."""
        return next((s for s in self.scores if is_accuracy(s)), None)


def gather(facts: Sequence[Fact]) -> RunEvidence:
    """The run's evidence, read once for every detector."""
    curves = of_run(facts, LossCurve)
    hparams = of_run(facts, Hyperparameter)
    task = next(iter(of_run(facts, Task)), None)
    chances = of_run(facts, ChanceLevel)
    n_classes = task.n_classes if task is not None and task.task_type in ("binary", "multiclass") else None
    if n_classes is None:
        n_classes = next((c.n_classes for c in chances), None)
    labels = sorted(
        (f for f in facts if f.kind == "label_stats" and f.side == "run" and getattr(f, "majority_share", None)),
        key=lambda f: getattr(f, "split", "") != "train",  # the training labels first: what the model learnt
    )
    majority = getattr(labels[0], "majority_share", None) if labels else None
    if n_classes is None:  # the classes the label samples hold (the held-out sample first: it has them all)
        counts = [getattr(f, "n_classes", None) for f in reversed(labels) if getattr(f, "is_classification", False)]
        n_classes = next((int(c) for c in counts if c and c >= 2), None)
    return RunEvidence(
        curves=curves,
        scores=of_run(facts, EvalScore),
        train_scores=of_run(facts, TrainScore),
        grads=of_run(facts, GradNormTrend),
        crashes=of_run(facts, TrainingCrash),
        chances=chances,
        bounds=of_run(facts, AccuracyLossBound),
        gaps=of_run(facts, GeneralizationGap),
        hparams=hparams,
        loss_scales=of_run(facts, LossScaleTrend),
        benchmark_gaps=of_run(facts, BenchmarkGap),
        task=task,
        finals=of_run(facts, FinalEvaluation),
        loss=next(iter(of_run(facts, LossSetup)), None),
        n_classes=n_classes,
        majority=majority,
        dropout=_has_dropout(facts),
        epochs_planned=next(
            (float(h.value) for h in hparams if h.name == "epochs" and isinstance(h.value, (int, float))), None
        ),
        epochs_seen=max((c.last_step for c in curves if c.x_unit == "epoch" and c.last_step is not None), default=None),
    )


def _has_dropout(facts: Sequence[Fact]) -> bool:
    for f in facts:
        if f.side != "run":
            continue
        if f.kind == "model_layer" and "dropout" in str(getattr(f, "layer_type", "")).lower():
            return True
        if isinstance(f, Hyperparameter) and f.name == "dropout" and isinstance(f.value, (int, float)) and f.value:
            return True
    return False


def num(x: float) -> str:
    """A value as a report shows it: 4 significant digits."""
    return f"{x:.4g}"


def where(curve: LossCurve, step: float | None) -> str:
    """' at step 51', ' at epoch 3', or ' at its 6th logged value' (a log without steps counts from 0)."""
    if step is None:
        return ""
    if curve.x_unit == "index":
        n = int(step) + 1
        suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        return f" at its {n}{suffix} logged value"
    return f" at {curve.x_unit} {step:g}"


def on_curve(curve: LossCurve, name: str, text: str, **more: object) -> Symptom:
    """A symptom seen on a curve: its split, logged key and source are the curve's."""
    return Symptom(
        name=name,  # type: ignore[arg-type]
        text=text,
        split=curve.split,
        metric_name=curve.metric_name,
        source=curve.source,
        **more,  # type: ignore[arg-type]
    )


def updates_before(curve: LossCurve, step: int) -> int | None:
    """Optimizer updates made before the value logged at ``step`` was computed (None when the log cannot say).

    A loss logged at step s is the forward pass of the weights after the updates before it: s - 1 of them when
    the log counts steps from 1, s when it counts from 0 (detectron2's iter 19 is the 20th step).
    """
    if curve.x_unit != "step" or curve.first_step is None:
        return None
    base = 0 if curve.first_step == 0 else 1
    return max(step - base, 0)


def is_accuracy(score: EvalScore) -> bool:
    """An accuracy-like held-out score in [0, 1] (higher is better)."""
    return score.is_higher_better and score.metric.lower() in ACCURACY and 0.0 <= score.last_value <= 1.0


def frozen(curve: LossCurve) -> bool:
    """Every logged value is the same (at the logged precision), over at least three points."""
    if curve.is_frozen_from_start:
        return True
    return (
        curve.points >= 3
        and curve.first_value is not None
        and curve.first_value == curve.last_value == curve.min_value
        and curve.nonfinite_count == 0
    )
