"""The symptom table: one row per detector, in the order they are read, checked when it is imported.

A row says which symptom ids its detector reports (``emits``), the symptoms found before it that silence it
(``silenced_by``: a NaN loss says all there is to say about a plateau after it; ``ANY``: only when nothing else
was found), the mechanism in one sentence, its references, and the tests that fire it on output a real library
wrote and keep it quiet on a healthy twin. A detector is a plain function ``RunEvidence -> list[Symptom]``: it
reads what ``evidence.gather`` collected once and knows nothing of the other rows.

The rank a symptom gets in the report is its position in ``advisor/facts/symptom.py`` ``SYMPTOM_IDS`` (most
specific first), not its row's: several rows may report one id (a floor from a double softmax, or from labels the
model cannot fit), and the first row that reports an id wins.

Adding a symptom: one row here, one detector in the module of its family of shapes, its tests (CONTRIBUTING.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from advisor.facts.symptom import SYMPTOM_IDS, Symptom

from advisor.extract.symptoms import divergence, generalisation, nonfinite, outcome, plateau, scores
from advisor.extract.symptoms.evidence import RunEvidence

#: silenced by every symptom found before the row (the row speaks only when nothing else was found)
ANY = "*"

Detector = Callable[[RunEvidence], list[Symptom]]


class TableError(ValueError):
    """A symptom table that cannot be read in order: unknown ids, a silencer no earlier row reports, no tests."""


@dataclass(frozen=True)
class Row:
    """One detector of the symptom table."""

    key: str
    emits: tuple[str, ...]
    detect: Detector
    mechanism: str
    silenced_by: frozenset[str] = frozenset()
    references: tuple[str, ...] = ()
    #: pytest node ids ("tests/extract/test_symptoms.py::test_name") that fire it on real output and keep it quiet
    tests: tuple[str, ...] = ()


NONFINITE_TRAIN = frozenset({"nonfinite_loss_at_start", "nonfinite_loss"})
RUNAWAY = NONFINITE_TRAIN | {"loss_explodes"}
_T = "tests/extract/test_symptoms.py::"
_TT = "tests/extract/test_symptom_table.py::"
_KARPATHY = "Karpathy, A Recipe for Training Neural Networks (2019): verify the loss at init, overfit one batch"
_ROUTINE = "MindSpore, accuracy problem preliminary location (mindspore.cn/mindinsight/docs, accuracy_problem_preliminary_location)"
_HUMBATOVA = "Humbatova et al., Taxonomy of Real Faults in Deep Learning Systems, ICSE 2020"
_AUTOTRAINER = "Zhang et al., AUTOTRAINER: An Automatic DNN Training Problem Detection and Repair System, ICSE 2021"

TABLE: tuple[Row, ...] = (
    Row(
        "nonfinite-train-loss",
        ("nonfinite_loss_at_start", "nonfinite_loss"),
        nonfinite.train_loss,
        "Overflow or an undefined operation (log 0, 0/0, sqrt of a negative) makes the loss NaN/Inf; before any "
        "update it lies in the data, the initial weights or the loss, after N updates in what the updates did.",
        references=(_ROUTINE, _AUTOTRAINER),
        tests=(
            _T + "test_a_diverging_run_shows_its_nan_with_the_updates_before_it",
            _T + "test_nan_at_the_first_step_is_before_any_update",
        ),
    ),
    Row(
        "nan-logged-as-zero",
        ("nonfinite_loss",),
        nonfinite.hidden_as_zero,
        "The transformers Trainer (logging_nan_inf_filter=True by default) drops NaN/Inf step losses from the mean "
        "it logs; a logging window of only NaN steps logs 0.0, so a NaN run reads as a perfect loss beside a NaN "
        "gradient norm.",
        silenced_by=NONFINITE_TRAIN,
        references=(
            "https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments.logging_nan_inf_filter",
        ),
        tests=(_TT + "test_a_trainer_loss_of_zero_beside_a_nan_grad_norm_is_a_hidden_nan",),
    ),
    Row(
        "nonfinite-crash",
        ("nonfinite_loss",),
        nonfinite.crash,
        "A framework's NaN check (LossMonitor, detectron2's FloatingPointError) stops the run on the first "
        "non-finite loss, so the log holds the stop and no NaN value.",
        silenced_by=NONFINITE_TRAIN,
        references=(_ROUTINE,),
        tests=(_TT + "test_a_run_stopped_by_its_nan_check_shows_a_nonfinite_loss",),
    ),
    Row(
        "nonfinite-eval-loss",
        ("nonfinite_eval_loss",),
        nonfinite.eval_loss,
        "Inputs the training never held (another preprocessing, empty targets) overflow an unbounded output at "
        "evaluation while the train loss stays finite.",
        silenced_by=NONFINITE_TRAIN,
        references=("Redmon and Farhadi, YOLOv3 (2018): exp box decoding",),
        tests=(_T + "test_a_nan_in_the_eval_loss_alone_keeps_the_learning_rate_among_the_candidates",),
    ),
    Row(
        "saturated-outputs",
        ("predictions_saturated",),
        scores.saturated,
        "A loss equal to the error rate times -ln of the framework's probability clip: every prediction is a hard "
        "0 or 1, so each wrong one costs exactly the clip (dead or saturated output units).",
        silenced_by=NONFINITE_TRAIN,
        references=("Keras backend.epsilon() = 1e-7; PyTorch BCELoss clamps log at -100",),
        tests=(_T + "test_a_loss_that_leaps_to_the_clip_and_freezes_is_saturated_outputs",),
    ),
    Row(
        "zero-loss-beside-huge-losses",
        ("predictions_saturated",),
        scores.zero_beside_huge,
        "A cross-entropy is exactly 0.0 in floating point only when the true class's probability rounds to 1 (a "
        "logit margin past about 17 in float32); beside losses in the tens or hundreds the logits have blown up, "
        "and every prediction is a hard 0 or 1 with no clip to bound what a wrong one costs.",
        silenced_by=NONFINITE_TRAIN,  # zeros beside a NaN gradient norm are NaN losses the logger left out
        references=("IEEE 754 binary32: 1 - exp(-17) rounds to 1", _AUTOTRAINER),
        tests=(_TT + "test_a_loss_exactly_zero_between_losses_in_the_hundreds_is_saturated_outputs",),
    ),
    Row(
        "runaway-loss",
        ("loss_explodes",),
        divergence.runaway,
        "Steps too large for the curvature (a rate far above the recipe's, no warm-up, no clipping) throw the "
        "weights out of the basin: the loss climbs and stays up, or the gradient norm grows by orders.",
        silenced_by=frozenset({"predictions_saturated"}),
        references=("Goodfellow et al., Deep Learning (2016), 8.2.4 cliffs and exploding gradients", _AUTOTRAINER),
        tests=(_TT + "test_a_real_loss_that_climbs_and_stays_up_explodes",),
    ),
    Row(
        "loss-at-chance",
        ("loss_at_chance",),
        plateau.at_chance,
        "A model that ignores its inputs predicts the label marginal; over C balanced classes its cross-entropy is "
        "ln C (Gibbs), so a loss levelled there learnt nothing from the inputs.",
        silenced_by=RUNAWAY,
        references=(_KARPATHY, "Cover and Thomas, Elements of Information Theory, 2.6 (Gibbs' inequality)"),
        tests=(
            _T + "test_a_loss_that_never_left_ln_c_beside_an_accuracy_of_1_over_c_is_at_chance",
            "tests/capture/test_trial_lightning_hf.py::test_hf_rate_x100_comes_before_what_it_produces",
        ),
    ),
    Row(
        "double-softmax-floor",
        ("loss_at_floor",),
        plateau.softmax_floor,
        "A softmax applied to probabilities bounds every output within [1/(1+(C-1)/e), e/(e+C-1)], so the "
        "cross-entropy cannot fall below ln(1 + (C-1)/e).",
        silenced_by=RUNAWAY | {"loss_at_chance"},
        references=("PyTorch CrossEntropyLoss docs: the input is expected to contain unnormalized logits",),
        tests=(_TT + "test_a_softmax_before_cross_entropy_levels_off_at_its_floor",),
    ),
    Row(
        "loss-stuck",
        ("loss_stuck",),
        plateau.stuck,
        "Zero gradients (dead units, a detached graph, frozen weights) or steps far too small leave the loss where "
        "it started.",
        silenced_by=RUNAWAY | {"loss_at_chance", "loss_at_floor"},
        references=(_AUTOTRAINER, _HUMBATOVA),
        tests=(_T + "test_a_loss_frozen_under_adam_is_zero_gradients_not_a_small_rate",),
    ),
    Row(
        "label-floor",
        ("loss_at_floor",),
        generalisation.label_floor,
        "Training labels that the inputs do not determine (noise, a wrong mapping) keep the train loss above the "
        "uncertainty that the held-out accuracy allows (Fano's inequality).",
        silenced_by=RUNAWAY | {"loss_at_chance", "loss_stuck", "loss_at_floor"},
        references=("Cover and Thomas, Elements of Information Theory, 2.10 (Fano's inequality)",),
        tests=(_TT + "test_noisy_training_labels_hold_the_train_loss_above_the_eval_loss",),
    ),
    Row(
        "oscillation",
        ("loss_oscillates",),
        divergence.oscillation,
        "Steps that overshoot the minimum along a steep direction make the loss swing from one update to the next "
        "instead of settling.",
        silenced_by=RUNAWAY,
        references=("Goodfellow et al., Deep Learning (2016), 8.3 (learning rate)", _AUTOTRAINER),
        tests=(_TT + "test_a_loss_that_swings_between_updates_oscillates",),
    ),
    Row(
        "accuracy-below-chance",
        ("metric_inconsistent",),
        scores.below_chance,
        "No classifier scores below chance; an accuracy there beside a moving loss is computed on something else "
        "(integer division, argmax over the wrong axis, labels of another encoding).",
        references=(_HUMBATOVA,),
        tests=(_TT + "test_an_accuracy_of_zero_beside_a_falling_loss_contradicts_it",),
    ),
    Row(
        "score-at-chance",
        ("score_at_chance",),
        scores.at_chance,
        "A held-out accuracy of 1/C, or the majority class's share, is what predicting without the inputs scores.",
        silenced_by=frozenset({"loss_at_chance", "loss_stuck", "metric_inconsistent"}),
        references=(_KARPATHY,),
        tests=(_TT + "test_a_held_out_accuracy_at_one_over_c_is_at_chance",),
    ),
    Row(
        "overlap-near-zero",
        ("score_near_zero",),
        scores.near_zero,
        "A detector or segmenter scoring near 0 finds almost nothing; the weakest published COCO detectors score "
        "0.2 mAP and more.",
        silenced_by=frozenset({"loss_at_chance", "loss_stuck"}),
        references=("Ultralytics YOLOv5 README (YOLOv5n 0.28 mAP)", "Liu et al., SSD, ECCV 2016"),
        tests=(_T + "test_a_detector_that_finds_nothing_shows_a_score_near_zero",),
    ),
    Row(
        "loss-below-its-accuracy",
        ("metric_inconsistent",),
        scores.below_its_accuracy,
        "A misclassified sample gives its own class a probability below 1/2 and costs more than ln 2, so a mean "
        "cross-entropy below (1 - accuracy) ln 2 cannot be the loss of those predictions: a regression loss on "
        "class ids, or an accuracy computed on another output.",
        silenced_by=frozenset({"metric_inconsistent"}),
        references=(
            "Golik et al., Cross-entropy vs. squared error training, Interspeech 2013",
            "Goodfellow et al., Deep Learning (2016), 6.2.2",
        ),
        tests=(_TT + "test_an_eval_loss_below_what_its_accuracy_allows_contradicts_it",),
    ),
    Row(
        "impossible-loss",
        ("metric_inconsistent",),
        scores.impossible_loss,
        "An eval loss of exactly 0 beside a nonzero train loss evaluated nothing; a cross-entropy below 0 was fed "
        "targets or outputs that are not probabilities.",
        silenced_by=frozenset({"metric_inconsistent"}),
        references=("PyTorch CrossEntropyLoss / BCELoss docs: targets are class indices or probabilities",),
        tests=(_TT + "test_a_negative_cross_entropy_contradicts_its_loss",),
    ),
    Row(
        "eval-worse-than-train",
        ("eval_worse_than_train",),
        generalisation.eval_worse,
        "A model that fits its training set and not the held-out one (too little data, too many epochs, or a "
        "held-out set prepared differently) has an eval loss far above, or rising away from, the train loss.",
        silenced_by=RUNAWAY | {"loss_stuck", "loss_at_chance"},
        references=("Goodfellow et al., Deep Learning (2016), 5.2 (capacity, overfitting)",),
        tests=(
            "tests/extract/test_hparams_training_runs.py::"
            "test_thirty_training_samples_is_insufficient_samples_not_overfitting",
            _TT + "test_a_final_evaluation_far_from_the_last_validation",
        ),
    ),
    Row(
        "nonfinite-gradients",
        ("nonfinite_gradients",),
        nonfinite.gradients,
        "Gradients overflow (fp16 without enough loss-scale headroom, a 0/0 in the backward pass) while the "
        "forward loss stays finite.",
        silenced_by=NONFINITE_TRAIN,
        references=("Micikevicius et al., Mixed Precision Training, ICLR 2018",),
        tests=(_TT + "test_gradients_that_overflow_at_every_loss_scale",),
    ),
    Row(
        "loss-scale-collapse",
        ("loss_scale_collapses",),
        nonfinite.loss_scale,
        "A dynamic loss scaler halves its scale on each overflow; reaching 1 means the gradients overflow "
        "whatever the scale.",
        references=("Micikevicius et al., Mixed Precision Training, ICLR 2018",),
        tests=(_TT + "test_gradients_that_overflow_at_every_loss_scale",),
    ),
    Row(
        "crash",
        ("crash",),
        outcome.crash,
        "The run stopped with an exception other than a non-finite loss: what it learnt until then is all there is.",
        silenced_by=NONFINITE_TRAIN,
        tests=(_TT + "test_a_run_that_stops_on_an_exception_shows_the_crash",),
    ),
    Row(
        "baseline-gap",
        ("baseline_gap",),
        outcome.baseline,
        "The port or the change ends worse than its benchmark beyond the benchmark's own noise band.",
        references=(_ROUTINE,),
        tests=(_TT + "test_a_run_behind_its_baseline_shows_the_gap",),
    ),
    Row(
        "target-gap",
        ("target_gap",),
        outcome.target,
        "The run falls short of the accuracy or loss its settings state as the target.",
        references=(_ROUTINE,),
        tests=(_TT + "test_a_stated_target_missed_is_a_gap",),
    ),
    Row(
        "stopped-short",
        ("slow_or_unfinished",),
        outcome.stopped_short,
        "A run stopped within the first tenth of the epochs it was set to train (interrupted, killed, a time limit, "
        "or a log cut short) has had too few updates to reach what it would: its scores describe the start.",
        silenced_by=frozenset({ANY}),
        references=(_KARPATHY,),
        tests=(_TT + "test_a_keras_run_stopped_after_its_first_epoch_is_unfinished",),
    ),
    Row(
        "slow-fall",
        ("slow_or_unfinished",),
        plateau.slow,
        "Steps too small, or too few of them, leave a loss that falls steadily but removes little of its start.",
        silenced_by=frozenset({ANY}),
        references=(_AUTOTRAINER,),
        tests=(_TT + "test_a_one_epoch_mindspore_run_falls_slowly",),
    ),
)


def validate(table: Sequence[Row]) -> None:
    """Raise TableError unless every row reports known ids, every silencer is reported by an earlier row (so the
    order is the reading order and no silencing can be circular), keys are unique, and every row names tests."""
    seen: set[str] = set()
    keys: set[str] = set()
    for row in table:
        if row.key in keys:
            raise TableError(f"symptom table: two rows are called {row.key!r}")
        keys.add(row.key)
        unknown = [s for s in row.emits if s not in SYMPTOM_IDS]
        if not row.emits or unknown:
            raise TableError(f"symptom table row {row.key!r}: unknown symptom id(s) {unknown or '(none given)'}")
        for s in sorted(row.silenced_by - {ANY}):
            if s not in SYMPTOM_IDS:
                raise TableError(f"symptom table row {row.key!r}: silenced by unknown symptom {s!r}")
            if s not in seen:
                raise TableError(
                    f"symptom table row {row.key!r}: silenced by {s!r}, which no earlier row reports (a silencer "
                    "must be read first, so the order cannot be circular)"
                )
        if not row.mechanism.strip():
            raise TableError(f"symptom table row {row.key!r}: no mechanism")
        if not row.tests:
            raise TableError(f"symptom table row {row.key!r}: no tests that fire it and keep it quiet")
        seen.update(row.emits)
    missing = [s for s in SYMPTOM_IDS if s not in seen]
    if missing and table is TABLE:
        raise TableError(f"symptom table: no row reports {', '.join(missing)}")


def silences(key: str, table: Sequence[Row] = TABLE) -> list[str]:
    """The rows that a row's symptoms silence (for the docs and the table's own tests)."""
    row = next(r for r in table if r.key == key)
    return [r.key for r in table if set(row.emits) & r.silenced_by]


validate(TABLE)
