"""Facts about logged curves (stage: loss curve): shape of the train/eval loss,
train-vs-eval generalisation, logged gradient norms and learning rate, and the
deviation from a baseline run's curve.

Thresholds behind the booleans are relative and noise-aware; they are documented
in ``advisor/extract/curves.py`` (``CurveThresholds``) and can be overridden with
extractor options ``loss_curve.<name>``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact

XUnit = Literal["step", "epoch", "index"]


class LossCurve(Fact):
    """Summary of one loss series (train or eval) of a run."""

    kind: Literal["loss_curve"] = "loss_curve"
    split: Literal["train", "eval"] = Field(description="train or eval loss")
    metric_name: str | None = Field(default=None, description="the key as logged, e.g. total_loss, val_loss")
    x_unit: XUnit = Field(default="step", description="what first_step/last_step count: step, epoch, or index")
    points: int = Field(default=0, description="number of logged values (all runs of the file)")
    first_step: int | None = Field(default=None, description="step of the first value")
    last_step: int | None = Field(default=None, description="step of the last value")
    updates: int | None = Field(
        default=None,
        description="optimizer updates up to the last point: the step of a curve counted in steps, or epochs x the "
        "steps per epoch the log states (a Keras progress bar's n/N); None when neither is known",
    )
    first_value: float | None = Field(default=None, description="first finite loss value")
    last_value: float | None = Field(default=None, description="last finite loss value")
    min_value: float | None = Field(default=None, description="smallest finite loss value")
    min_step: int | None = Field(default=None, description="step of the smallest (smoothed) value")
    max_value: float | None = Field(default=None, description="the largest finite value")
    zero_count: int = Field(
        default=0,
        description="finite values exactly 0.0 as logged (a cross-entropy reaches 0.0 only when every "
        "true-class probability rounds to 1)",
    )
    first_nonfinite_step: int | None = Field(default=None, description="step of the first NaN/Inf loss, if any")
    nonfinite_count: int = Field(default=0, description="number of NaN/Inf values logged")
    diverged: bool = Field(
        default=False,
        description="loss became non-finite, or rose to >= rise_ratio_diverged x its "
        "smoothed minimum and ended above its start",
    )
    divergence_step: int | None = Field(
        default=None,
        description="step where the divergence started (first NaN/Inf, else the smoothed minimum before the rise)",
    )
    start_level: float | None = Field(default=None, description="median of the first 10% of values (the start level)")
    end_level: float | None = Field(default=None, description="median of the last 10% of values (the end level)")
    drop_ratio: float | None = Field(
        default=None,
        description="(start_level - end_level) / start_level: share of the "
        "loss removed by training; negative when it rose",
    )
    rise_from_min_ratio: float | None = Field(
        default=None, description="end_level / smoothed minimum - 1: how far the curve climbed back from its best"
    )
    noise_ratio: float | None = Field(
        default=None, description="robust std of the values around their running median, relative to end_level"
    )
    spike_count: int = Field(
        default=0, description="values far above the running median (> spike_z robust sigmas and > 25% of the level)"
    )
    spike_max_ratio: float | None = Field(default=None, description="largest value / running median at that point")
    peak_over_start_ratio: float | None = Field(
        default=None,
        description="highest value after the start window (the first 10% of values) / start_level: above 1, the "
        "loss climbed above where training started",
    )
    frozen_tail_points: int | None = Field(
        default=None,
        description="last values exactly equal to the last one, as logged (the curve stopped moving at the "
        "logged precision)",
    )
    is_frozen_from_start: bool | None = Field(
        default=None, description="every logged value is the same: the curve never moved at the logged precision"
    )
    end_change_ratio: float | None = Field(
        default=None,
        description="change of the fitted trend over the end "
        "window (the last 20% of the run's steps, at "
        "least 5 points), relative to the fitted level "
        "at the window's start, never below -1; "
        "negative: falling",
    )
    end_trend_t: float | None = Field(default=None, description="t statistic of that trend (|t| > 3: beyond noise)")
    fall_share: float | None = Field(
        default=None,
        description="share of the curve's moves (consecutive values that differ, at the printed precision) that go "
        "down; None with fewer than MIN_MOVES (7) moves",
    )
    is_still_falling: bool = Field(
        default=False, description="the end window still falls by >= fall_ratio beyond noise"
    )
    is_plateau: bool = Field(default=False, description="flat (within plateau_band) for at least the last half")
    plateau_start_step: int | None = Field(default=None, description="step from which the curve stays flat")
    is_stagnant: bool = Field(default=False, description="plateau with drop_ratio below stagnant_drop: never learned")
    is_oscillating: bool = Field(
        default=False,
        description="noise_ratio >= oscillation_noise while drop_ratio is "
        "below oscillation_drop: oscillates without progress",
    )
    is_slow: bool = Field(default=False, description="falls steadily but has removed less than slow_drop of the loss")
    class_count: int | None = Field(default=None, description="number of classes C, when known (chance loss ln C)")
    class_count_source: str | None = Field(
        default=None,
        description="where C came from: 'FILE: key' of a "
        "hyper-parameter file, the labels of a data "
        "sample, or 'level' (loss at ln k)",
    )
    chance_ratio: float | None = Field(default=None, description="end_level / ln(C) (1.0: stuck at chance level)")
    is_at_chance: bool = Field(default=False, description="plateau within chance_band of ln(C)")
    restarts: int = Field(
        default=0,
        description="times the log restarted from the beginning (several runs in one "
        "file; the analysis uses the last one)",
    )
    resumes: int = Field(default=0, description="times a run resumed from an earlier step (overwritten points dropped)")
    is_window: bool = Field(
        default=False,
        description="the log starts mid-run (an excerpt, a resumed run's own log): "
        "its first point is not the start of training, so the drop "
        "since the start (drop_ratio, is_stagnant, is_slow) is not "
        "measured",
    )
    doc = (
        "shape of a train or eval loss series: divergence, spikes, plateau, oscillation, trend at the end, chance level"
    )


class GeneralizationGap(Fact):
    """Train loss against eval loss of the same run."""

    kind: Literal["generalization_gap"] = "generalization_gap"
    eval_points: int = Field(description="number of eval loss values")
    train_last: float | None = Field(default=None, description="train loss end level")
    eval_last: float | None = Field(default=None, description="last eval loss")
    eval_min: float | None = Field(default=None, description="best (lowest) eval loss")
    eval_min_step: int | None = Field(
        default=None, description="step (or epoch) of the best eval loss: the turning step"
    )
    eval_rise_ratio: float | None = Field(
        default=None, description="eval_last / eval_min - 1: rise since the best eval"
    )
    evals_after_min: int = Field(default=0, description="eval values logged after the best one")
    train_drop_after_turn_ratio: float | None = Field(
        default=None, description="share of the train loss removed after the turning step (train keeps improving)"
    )
    train_drop_ratio: float | None = Field(default=None, description="share of the train loss removed in the whole run")
    gap_ratio: float | None = Field(default=None, description="(eval_last - train_last) / eval_last")
    is_eval_rising: bool = Field(
        default=False,
        description="eval loss rose >= eval_rise of its best for the last evaluations while train loss kept falling",
    )
    is_train_near_zero: bool = Field(default=False, description="train loss fell by >= 95% of its start")
    score_name: str | None = Field(default=None, description="an eval score logged beside (accuracy, wer, ...)")
    score_best: float | None = Field(default=None, description="its best value")
    score_last: float | None = Field(default=None, description="its last value")
    is_score_at_best: bool = Field(
        default=False,
        description="the eval score's last value is within 1% of its best (the task metric did not get worse)",
    )
    eval_rise_of_range_ratio: float | None = Field(
        default=None,
        description="rise of the smoothed eval loss since its best, as a share of what it had removed "
        "before it (a rise within the noise of a low loss is small here)",
    )
    eval_end_drop_share: float | None = Field(
        default=None,
        description="share of the eval loss's whole fall (first value to its best) made in the last 20% "
        "of the run's steps (smoothed; None when it never fell)",
    )
    score_end_gain_share: float | None = Field(
        default=None,
        description="the same for the eval score: share of its whole gain made in the last 20% of the "
        "steps (negative: it got worse there)",
    )
    is_score_stalled: bool = Field(
        default=False,
        description="at least 3 evaluations and the eval score gained less "
        "than stalled_share (2%) of its whole gain at the end",
    )
    is_eval_still_improving: bool = Field(
        default=False,
        description="the eval loss is at its best at the end and made at least improving_share (10%) "
        "of its whole fall in the last 20% of the steps, beyond the noise of its "
        "evaluations, and so did the eval score if one is logged",
    )
    doc = "train vs eval loss: turning step, eval rise since its best, generalisation gap, still improving at the end"


class ChanceLevel(Fact):
    """A classification loss curve's levels against ln(C), the loss of a uniform guess over the C classes.

    Built from the curve (``loss_curve``) and the task and loss (``task``, ``loss_setup``) once every
    extractor has run, so the class count may come from the model's output layer or a logged accuracy
    as well as from a hyper-parameter or a data sample.
    """

    kind: Literal["chance_level"] = "chance_level"
    split: Literal["train", "eval"] = Field(description="train or eval loss")
    n_classes: int = Field(description="C, the class count of the task")
    task_source: str = Field(description="where the task and its class count were decided (the task fact's source)")
    loss_name: str = Field(description="the loss as configured (a cross-entropy: categorical, sparse, binary, NLL)")
    chance_loss: float = Field(description="ln(C): the cross-entropy of predicting every class with probability 1/C")
    first_ratio: float | None = Field(default=None, description="first logged value / ln(C)")
    start_ratio: float | None = Field(default=None, description="start level (median of the first 10%) / ln(C)")
    end_ratio: float | None = Field(default=None, description="end level (median of the last 10%) / ln(C)")
    min_over_softmax_floor_ratio: float | None = Field(
        default=None,
        description="lowest logged value / ln(1 + (C - 1) / e), the least cross-entropy left when the model's outputs "
        "are already probabilities and the loss applies softmax (or sigmoid, C = 2) to them again",
    )
    doc = "a cross-entropy curve's first, start and end level as multiples of ln(C), the level of a uniform guess"


class GradNormTrend(Fact):
    """Logged gradient norm over training (e.g. Trainer's grad_norm, Megatron's grad norm)."""

    kind: Literal["grad_norm_trend"] = "grad_norm_trend"
    points: int = Field(description="number of logged values")
    start_level: float | None = Field(default=None, description="median of the first 10% of values")
    max_value: float | None = Field(default=None, description="largest finite value")
    max_step: int | None = Field(default=None, description="step of the largest value")
    end_level: float | None = Field(default=None, description="median of the last 10%")
    growth_ratio: float | None = Field(default=None, description="max of the running median / start_level")
    first_nonfinite_step: int | None = Field(default=None, description="first NaN/Inf gradient norm")
    nonfinite_count: int = Field(default=0, description="NaN/Inf values logged (a skipped fp16 step logs one)")
    is_nonfinite_at_end: bool = Field(
        default=False, description="the last logged value is NaN/Inf (it never recovered)"
    )
    spike_count: int = Field(default=0, description="values above 10x the running median")
    doc = "logged gradient norm: growth over the run, spikes, first non-finite value"


class LrSchedule(Fact):
    """The learning rate as logged step by step (the configured value is a ``hyperparameter`` fact)."""

    kind: Literal["lr_schedule"] = "lr_schedule"
    points: int = Field(description="number of logged values")
    first_value: float | None = Field(default=None, description="first logged lr")
    max_value: float | None = Field(default=None, description="peak logged lr")
    last_value: float | None = Field(default=None, description="last logged lr")
    last_to_max_ratio: float | None = Field(default=None, description="last / peak (small: decayed to near zero)")
    peak_over_first_ratio: float | None = Field(
        default=None, description="peak / first (above 1: the rate rose while logged, a warm-up still going)"
    )
    is_rising_at_end: bool = Field(
        default=False,
        description="the rate rises over the last quarter of its values and ends at its peak: a warm-up that had "
        "not ended when the run did",
    )
    doc = "the logged learning-rate schedule: first, peak and last value"


class BaselineDeviation(Fact):
    """The run's loss curve against the baseline's, aligned by step."""

    kind: Literal["baseline_deviation"] = "baseline_deviation"
    split: Literal["train", "eval"] = Field(description="which loss")
    aligned_points: int = Field(description="run points inside the baseline's step range")
    noise_band_ratio: float | None = Field(
        default=None, description="relative band counted as noise: max(3 x the baseline's noise_ratio, min_band)"
    )
    rel_deviation_last: float | None = Field(
        default=None, description="(run - baseline) / baseline at the last aligned step (positive: run worse)"
    )
    rel_deviation_max: float | None = Field(default=None, description="largest |relative deviation| seen")
    first_departure_step: int | None = Field(
        default=None, description="first step from which the run stays outside the band for 3 aligned points"
    )
    is_above_baseline: bool = Field(
        default=False, description="run loss ends above the baseline's by more than the band"
    )
    is_below_baseline: bool = Field(
        default=False, description="run loss ends below the baseline's by more than the band"
    )
    run_diverged_alone: bool = Field(
        default=False, description="the run's loss became non-finite and the baseline's not"
    )
    doc = "run loss vs baseline loss aligned by step: relative deviation and the step it leaves the noise band"
