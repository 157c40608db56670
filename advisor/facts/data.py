"""Facts about the data samples (stage: input data).

A "feature" is one input column: a column of a table, or a channel of an
image batch (N, C, H, W) / (N, H, W, C), or the last axis of a sequence batch
(N, T, F). Shares are 0..1. Robust z-scores are |x - median| / (IQR / 1.349),
with the median and IQR of each feature taken from a subsample of up to
4096 rows; features whose IQR is 0 use (max - min) / 6 of that subsample.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact

Split = Literal["train", "eval"]


class DataFeatures(Fact):
    """Statistics of one features array (one pass over the file)."""

    kind: Literal["data_features"] = "data_features"
    file: str = Field(description="sample file (relative path)")
    array: str = Field(description="array name in the file")
    split: Split = Field(description="train or eval sample")
    n_samples: int = Field(description="rows (samples) in the array")
    n_features: int = Field(description="features: columns, or channels of an image batch")
    dtype: str = Field(description="stored dtype")
    nan_share: float = Field(description="share of NaN values over all values")
    nan_count: int = Field(description="number of NaN values")
    inf_count: int = Field(description="number of +-Inf values")
    features_with_nan: int = Field(description="features holding at least one NaN")
    max_feature_nan_share: float = Field(description="largest share of NaN in a single feature")
    worst_nan_feature: int | None = Field(default=None, description="index of the feature with the most NaN")
    all_nan_features: int = Field(description="features that are NaN everywhere")
    constant_features: int = Field(description="features with a single finite value (min == max)")
    value_min: float | None = Field(default=None, description="smallest finite value")
    value_max: float | None = Field(default=None, description="largest finite value")
    max_abs_mean: float | None = Field(default=None, description="largest |mean| over features")
    max_std: float | None = Field(default=None, description="largest standard deviation over features")
    min_std: float | None = Field(default=None, description="smallest non-zero standard deviation over features")
    std_ratio: float | None = Field(default=None, description="max_std / min_std: spread of feature scales")
    min_robust_scale: float | None = Field(default=None, description="smallest IQR/1.349 over features with IQR > 0")
    max_robust_scale: float | None = Field(default=None, description="largest IQR/1.349 over features")
    robust_scale_ratio: float | None = Field(
        default=None,
        description="max_robust_scale / min_robust_scale: spread of feature scales, insensitive to outliers",
    )
    max_robust_level: float | None = Field(
        default=None,
        description="largest |median| or IQR/1.349 over features: distance from unit scale, insensitive to outliers",
    )
    is_integer_valued: bool = Field(description="every finite value is a whole number")
    looks_like_raw_pixels: bool = Field(
        description="values within 0..255 reaching above 16, whole numbers or reaching exactly 255: "
        "unscaled 8-bit images"
    )
    max_robust_z: float | None = Field(default=None, description="largest robust z-score of any value")
    outlier_sample_share: float | None = Field(
        default=None, description="share of samples with a value at robust z > 5"
    )
    extreme_sample_count: int | None = Field(default=None, description="samples with a value at robust z > 20")
    worst_samples: str | None = Field(default=None, description="indices of the samples with the largest robust z")
    worst_outlier_feature: int | None = Field(default=None, description="feature of the largest robust z")
    duplicate_share: float | None = Field(
        default=None, description="share of rows that repeat an earlier row (by 64-bit row hash, first 1,000,000 rows)"
    )
    doc = "statistics of one features array: missing values, ranges, scale, outliers, duplicates"


class LabelStats(Fact):
    """Label counts of one labels array."""

    kind: Literal["label_stats"] = "label_stats"
    file: str = Field(description="sample file (relative path)")
    array: str = Field(description="array name in the file")
    split: Split = Field(description="train or eval sample")
    n_samples: int = Field(description="labels in the array")
    is_classification: bool = Field(description="labels are class ids (or names), not continuous targets")
    nan_count: int = Field(description="NaN labels")
    n_classes: int | None = Field(default=None, description="distinct classes seen")
    min_class_count: int | None = Field(default=None, description="samples of the rarest class")
    max_class_count: int | None = Field(default=None, description="samples of the most common class")
    imbalance_ratio: float | None = Field(default=None, description="max_class_count / min_class_count")
    majority_share: float | None = Field(default=None, description="share of the most common class")
    minority_class: str | None = Field(default=None, description="the rarest class")
    majority_class: str | None = Field(default=None, description="the most common class")
    batches_recorded: int | None = Field(
        default=None,
        description="training batches the sample holds, in the order the model saw them (advisor's capture "
        "records them: its data/train.npz has batch_rows); None for a sample saved otherwise",
    )
    batch_majority_share: float | None = Field(
        default=None, description="mean over those batches of the share of the batch's most common class"
    )
    shuffled_batch_majority_share: float | None = Field(
        default=None,
        description="the same for these labels shuffled (mean of 20 fixed-seed permutations): what a loader "
        "that shuffles would give",
    )
    doc = "class counts of a labels array: number of classes, imbalance, NaN labels, class mix of the first batches"


class LabelNoise(Fact):
    """Likely label errors, estimated from k-nearest-neighbour votes (confident-learning style)."""

    kind: Literal["label_noise"] = "label_noise"
    file: str = Field(description="sample file (relative path)")
    split: Split = Field(description="train or eval sample")
    checked_samples: int = Field(description="samples used (a subsample of large files)")
    k: int = Field(description="neighbours per sample")
    knn_disagreement_share: float = Field(description="share of samples whose neighbours' majority label differs")
    estimated_error_share: float = Field(
        description="share of samples whose neighbours confidently vote for another class "
        "(vote >= that class's average self-confidence, own vote below its own): likely label errors"
    )
    suspect_samples: str | None = Field(default=None, description="indices of the most confidently mislabeled samples")
    doc = "likely label errors from k-nearest-neighbour disagreement (confident-learning estimate)"


class SampleSize(Fact):
    """Training samples against classes and model size."""

    kind: Literal["sample_size"] = "sample_size"
    n_train_samples: int = Field(description="training samples")
    samples_source: Literal["hparams", "sample_file"] = Field(
        description="hparams: the training-set size from the hyper-parameters; sample_file: rows of the sample file"
    )
    n_classes: int | None = Field(default=None, description="classes (None for regression)")
    min_samples_per_class: float | None = Field(default=None, description="estimated samples of the rarest class")
    mean_samples_per_class: float | None = Field(
        default=None,
        description="n_train_samples / n_classes: training samples per class on average (None for regression)",
    )
    num_parameters: float | None = Field(default=None, description="model parameters, where known")
    params_per_sample: float | None = Field(default=None, description="num_parameters / n_train_samples")
    doc = "training-set size against number of classes and parameter count"


class SplitShift(Fact):
    """Train against eval sample statistics."""

    kind: Literal["split_shift"] = "split_shift"
    train_file: str = Field(description="train sample file")
    eval_file: str = Field(description="eval sample file")
    n_features: int = Field(description="features compared")
    max_mean_shift_std: float = Field(
        description="largest |mean_train - mean_eval| / pooled std over features (standardised mean difference)"
    )
    worst_feature: int = Field(description="feature of the largest shift")
    shifted_feature_share: float = Field(description="share of features with a standardised shift > 0.5")
    max_std_ratio: float = Field(description="largest std ratio between splits (>= 1) over features")
    train_range: str = Field(description="train min..max")
    eval_range: str = Field(description="eval min..max")
    label_distribution_distance: float | None = Field(
        default=None, description="total variation distance of the class shares (0 same, 1 disjoint)"
    )
    shifted_position_share: float | None = Field(
        default=None,
        description="for image/sequence rows: share of value positions (pixel, time step) whose mean "
        "differs by more than 1 pooled std between the splits (layout: transposed, flipped, "
        "cropped differently)",
    )
    max_position_shift_std: float | None = Field(default=None, description="largest such per-position shift")
    doc = "train vs eval sample statistics: mean/std shift per feature, label distribution"


class PipelineCompare(Fact):
    """One array of the run's sample against the same array of the baseline's."""

    kind: Literal["pipeline_compare"] = "pipeline_compare"
    file: str = Field(description="sample file (relative path) in the run")
    array: str = Field(description="array name")
    same_shape: bool = Field(description="shapes are equal")
    run_shape: str = Field(description="shape in the run")
    baseline_shape: str = Field(description="shape in the baseline")
    is_allclose: bool = Field(description="np.allclose(run, baseline, rtol=1e-5, atol=1e-8), NaN equal to NaN")
    mismatch_share: float | None = Field(default=None, description="share of values outside the tolerance")
    max_abs_diff: float | None = Field(default=None, description="largest |run - baseline|")
    mean_abs_diff: float | None = Field(default=None, description="mean |run - baseline|")
    first_mismatch_row: int | None = Field(default=None, description="first sample (row) that differs")
    is_same_rows_reordered: bool | None = Field(
        default=None, description="the same rows in another order (a different shuffle), by row hashes"
    )
    same_labels: bool | None = Field(
        default=None,
        description="for a features array: the labels of the two samples are equal, so the rows "
        "are the same samples and a value difference comes from the processing",
    )
    max_mean_shift_std: float | None = Field(
        default=None,
        description="for a features array: largest |mean_run - mean_baseline| / pooled std over "
        "features (distribution shift, also when the rows are other samples)",
    )
    doc = "the run's data sample against the baseline's, array by array (np.allclose, where and how much)"
