"""The thresholds of the symptom detectors, each loose enough that the healthy runs of the development sets show no
symptom (tests/extract/test_symptoms.py holds them to that)."""

from __future__ import annotations

import math

#: a loss level within this share of ln(C) is "at chance"
CHANCE_BAND = 0.05
#: a curve that removed less than this share of its start level has levelled off where it started
FLAT_DROP = 0.1
#: a first value this share of the larger of it and the frozen tail away from that tail is a leap, not a start level
LEAP_SHARE = 0.5
#: a levelled loss above ln(C), up to this many times it, is stuck at or worse than chance (further up, the loss
#: blew up: loss_explodes and the rules that read the ratio)
ABOVE_CHANCE_MAX = 3.0
#: ln of the most classes a chance level is read for (a loss of 1e4 is no ln(C), and exp of it overflows)
MAX_CHANCE_LEVEL = math.log(1_000_000)
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
#: a train loss exactly 0.0 at this many logged values, this share of them or more, beside a value this large:
#: logits so far apart that each prediction costs nothing or its whole margin (float32 rounds a softmax to exactly
#: 1 once the margin passes about 17)
ZERO_LOSS_MIN_POINTS = 3
ZERO_LOSS_MIN_SHARE = 0.3
ZERO_BESIDE_PEAK = 10.0
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
#: a final test evaluation whose loss is this many times the last validation loss (or whose score is SCORE_GAP
#: below it): the test data is not what the validation data was (its preprocessing, its distribution)
TEST_OVER_VALIDATION = 3.0
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
#: an eval loss at most this share of (1 - accuracy) ln 2, the least mean cross-entropy that accuracy allows, is no
#: cross-entropy of those predictions
CE_FLOOR_SHARE = 0.5
#: a stated target missed by more than this relative share
TARGET_BAND = 0.01

#: an overlap score whose best stays below this finds almost nothing: the weakest detectors published on COCO
#: score 0.2 mAP@.5:.95 and more (YOLOv5n 0.28, SSD300 0.23: the YOLOv5 README, Liu et al. 2016), and a
#: segmentation model that predicts one class everywhere scores a mean IoU of 1/C of the classes' share
NEAR_ZERO_OVERLAP = 0.05
#: a run that logged less than this share of its planned epochs is too early to judge by its score (a detector
#: from scratch scores 0 for its first epochs)
EARLY_SHARE = 0.1
