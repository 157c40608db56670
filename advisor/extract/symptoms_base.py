"""The thresholds and helpers the symptom steps share (``symptoms.py``: the loss; ``symptoms_eval.py``: scores,
gaps and targets). Each threshold is loose enough that the healthy runs of the development sets show no
symptom (tests/extract/test_symptoms.py holds them to that)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from advisor.facts.base import Fact
from advisor.knowledge.metrics import ACCURACY
from advisor.facts.evaluation import EvalScore
from advisor.facts.loss_curve import LossCurve
from advisor.facts.symptom import Symptom

#: a loss level within this share of ln(C) is "at chance"
CHANCE_BAND = 0.05
#: a curve that removed less than this share of its start level has levelled off where it started
FLAT_DROP = 0.1
#: a levelled loss above ln(C), up to this many times it, is stuck at or worse than chance (further up, the loss
#: blew up: loss_explodes and the rules that read the ratio)
ABOVE_CHANCE_MAX = 3.0
#: the lowest value within [1, this] x the double-softmax floor, never below it, is "at that floor"
FLOOR_BAND = 1.2
#: an accuracy at most this many times 1/C (or within this absolute distance of the majority share) is at chance
SCORE_CHANCE_FACTOR = 1.25
MAJORITY_BAND = 0.02
#: a train loss this many times Fano's bound on the label entropy that the eval accuracy allows is at a floor
FANO_RATIO = 2.0
#: a train loss this many times the eval loss (or with dropout, which raises the train loss, this many), while
#: still this share of ln(C) or more, levels off above what the held-out labels allow
TRAIN_OVER_EVAL = 1.5
TRAIN_OVER_EVAL_WITH_DROPOUT = 2.5
TRAIN_FLOOR_CHANCE_RATIO = 0.3
#: the probability clips of the cross-entropies users train with, and -ln of each: Keras 2+/tf.keras
#: (backend.epsilon() = 1e-7; 1 - (1 - 1e-7) is 1.19e-7 in float32), Keras 0.x (1e-15 in objectives.py),
#: PyTorch BCELoss (log clamped at -100)
PROBABILITY_CLIPS = (
    ("1e-7", -math.log(1e-7), "Keras"),
    ("1e-7, in float32", -math.log(1.1920929e-07), "Keras"),
    ("1e-15", -math.log(1e-15), "early Keras"),
    ("log >= -100", 100.0, "PyTorch BCELoss"),
)
#: a loss within this share of error x -ln(clip)
CLIP_BAND = 0.015
#: oscillation: noise at least this share of the end level, and at least NOISE_OF_START of the start level
NOISE_OF_END = 0.5
NOISE_OF_START = 0.1
OSCILLATION_MIN_POINTS = 8
#: explosion: a peak this many times the start, a gradient norm this large or grown this much, a loss this large
PEAK_OVER_START = 100.0
GRAD_NORM_HUGE = 1e6
GRAD_NORM_GROWTH = 1e3
LOSS_HUGE = 1e6
#: a train loss that ends this many times its first value rose and did not come back
JUMP_OVER_FIRST = 10.0
#: a train loss this many times the initial eval loss (evaluated before training) rose far above its start
RISE_OVER_INITIAL_EVAL = 2.0
#: eval worse than train: the eval loss rose this share above its best over at least EVALS_AFTER evaluations
EVAL_RISE = 0.5
EVALS_AFTER = 3
#: or the held-out accuracy ends this far below the training accuracy
SCORE_GAP = 0.15
#: or the last eval loss is this many times the train loss's end level and above it by this share of ln(C): the
#: model fits its training labels and not the held-out ones (a healthy classifier's train and eval losses sit within
#: a few hundredths of ln(C) of each other, however large their ratio near zero)
EVAL_OVER_TRAIN = 5.0
EVAL_GAP_OF_CHANCE = 0.3
#: a training that plainly works: a held-out accuracy this high, a classifier's loss this low in units of ln(C),
#: or a loss that lost this share of its start level
HEALTHY_ACCURACY = 0.9
HEALTHY_CHANCE_RATIO = 0.2
HEALTHY_DROP = 0.9
#: a held-out accuracy this high has nothing left to gain: training longer or faster cannot raise it
CEILING_ACCURACY = 0.99
#: an accuracy below this share of chance (1/C), or below NEAR_ZERO_SCORE when C is unknown, contradicts a loss
BELOW_CHANCE_SHARE = 0.5
NEAR_ZERO_SCORE = 0.02
#: a stated target missed by more than this relative share
TARGET_BAND = 0.01

#: an overlap score whose best stays below this finds almost nothing: the weakest detectors published on COCO
#: score 0.2 mAP@.5:.95 and more (YOLOv5n 0.28, SSD300 0.23: the YOLOv5 README, Liu et al. 2016), and a
#: segmentation model that predicts one class everywhere scores a mean IoU of 1/C of the classes' share
NEAR_ZERO_OVERLAP = 0.05
#: a run that logged less than this share of its planned epochs is too early to judge by its score (a detector
#: from scratch scores 0 for its first epochs)
EARLY_SHARE = 0.1


def _num(x: float) -> str:
    """A value as a report shows it: 4 significant digits."""
    return f"{x:.4g}"


def _where(curve: LossCurve, step: float | None) -> str:
    """' at step 51', ' at epoch 3', or ' at its 6th logged value' (a log without steps counts from 0)."""
    if step is None:
        return ""
    if curve.x_unit == "index":
        n = int(step) + 1
        suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        return f" at its {n}{suffix} logged value"
    return f" at {curve.x_unit} {step:g}"


def _on(curve: LossCurve, name: str, text: str, **more: object) -> Symptom:
    """A symptom seen on a curve: its split, logged key and source are the curve's."""
    return Symptom(
        name=name,  # type: ignore[arg-type]
        text=text,
        split=curve.split,
        metric_name=curve.metric_name,
        source=curve.source,
        **more,  # type: ignore[arg-type]
    )


def _updates_before(curve: LossCurve, step: int) -> int | None:
    """Optimizer updates made before the value logged at ``step`` was computed (None when the log cannot say).

    A loss logged at step s is the forward pass of the weights after the updates before it: s - 1 of them when
    the log counts steps from 1, s when it counts from 0 (detectron2's iter 19 is the 20th step).
    """
    if curve.x_unit != "step" or curve.first_step is None:
        return None
    base = 0 if curve.first_step == 0 else 1
    return max(step - base, 0)


def _is_accuracy(score: EvalScore) -> bool:
    return score.is_higher_better and score.metric.lower() in ACCURACY and 0.0 <= score.last_value <= 1.0


def _run(facts: Sequence[Fact], cls):
    return [f for f in facts if isinstance(f, cls) and f.side == "run"]


def _frozen(curve: LossCurve) -> bool:
    """Every logged value is the same (at the logged precision), over at least three points."""
    if curve.is_frozen_from_start:
        return True
    return (
        curve.points >= 3
        and curve.first_value is not None
        and curve.first_value == curve.last_value == curve.min_value
        and curve.nonfinite_count == 0
    )
