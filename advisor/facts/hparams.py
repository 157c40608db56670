"""Facts about hyper-parameters (stage: code and hyper-parameters).

Canonical vocabulary of ``hyperparameter.name`` (what rules match on). The
reader maps the spellings users write onto these names (``lr``, ``base_lr``,
``optimizer.lr`` -> ``learning_rate``; ``bs``, ``per_device_train_batch_size``
-> ``batch_size``; ...); see ``advisor.knowledge.settings.SPELLINGS``.

======================  =====  ====================================================
name                    type   meaning (unit / convention)
======================  =====  ====================================================
framework               str    pytorch | tensorflow | mindspore | jax
optimizer               str    sgd | adam | adamw | rmsprop | adagrad | adadelta |
                               adafactor | lamb | lars | lion | nadam | radam | ...
learning_rate           float  base (peak) learning rate
batch_size              float  samples per step per device
gradient_accumulation_steps float  micro-batches per optimizer step
world_size              float  data-parallel devices
global_batch_size       float  batch_size x gradient_accumulation_steps x world_size
epochs                  float  passes over the training set
max_steps               float  optimizer steps (when given instead of epochs)
warmup_steps            float  steps of learning-rate warm-up
warmup_ratio            float  warm-up as a share of all steps
lr_scheduler            str    cosine | linear | step | constant | ... (as written, lower-case)
weight_decay            float  decay coefficient
weight_decay_mode       str    l2 (added to the gradient) | decoupled (AdamW-style)
momentum                float  SGD momentum
nesterov                bool   Nesterov momentum
adam_beta1, adam_beta2  float  Adam-family moment decay rates
adam_epsilon            float  Adam-family epsilon
grad_clip_norm          float  gradient clipping max norm
precision               str    fp32 | fp16 | bf16
loss_scale              float  static loss scale, or the initial scale of a dynamic one
loss_scale_mode         str    static | dynamic
loss                    str    cross_entropy | nll | bce | mse | l1 | smooth_l1 | huber | focal | ctc | ...
label_smoothing         float  label-smoothing factor
dropout                 float  drop probability (a keep_prob k is stored as 1-k)
batchnorm_decay         float  keep weight of BatchNorm running statistics
                               (PyTorch momentum m is stored as 1-m)
batchnorm_epsilon       float  BatchNorm epsilon
layernorm_epsilon       float  LayerNorm epsilon
gelu_approximate        bool   true: tanh approximation, false: exact erf
weight_init             str    zeros | ones | constant | normal | uniform | xavier_uniform |
                               xavier_normal | kaiming_uniform | kaiming_normal | orthogonal |
                               truncated_normal | lecun_normal | ... (as configured)
linear_init, conv_init  str    default initialiser of Linear/Dense and Conv layers
init_std                float  std of a normal initialiser (HF initializer_range)
seed                    float  random seed
num_parameters          float  trainable parameters of the model
num_train_samples       float  size of the training set
num_classes             float  number of classes
======================  =====  ====================================================

Numbers are plain floats; ``is_default`` marks values filled in from the
framework's documented default (``advisor.knowledge.framework_defaults``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact

Scalar = float | bool | str


class Hyperparameter(Fact):
    """One effective hyper-parameter of a run, under its canonical name."""

    kind: Literal["hyperparameter"] = "hyperparameter"
    name: str = Field(description="canonical name: learning_rate, batch_size, epochs, optimizer, loss_scale, ...")
    value: Scalar | None = Field(description="effective value (number, flag or name)")
    raw_key: str | None = Field(default=None, description="the key as written in the file, e.g. optimizer.lr")
    is_default: bool = Field(default=False, description="true when filled in from the framework's default")
    default_source: str | None = Field(default=None, description="documentation the default value was taken from")
    doc = "an effective hyper-parameter under its canonical name (learning_rate, batch_size, ...)"


class HparamDiff(Fact):
    """One effective hyper-parameter that differs between the run and the baseline."""

    kind: Literal["hparam_diff"] = "hparam_diff"
    name: str = Field(description="canonical hyper-parameter name")
    run_value: Scalar | None = Field(default=None, description="effective value in the run (None: not set, no default)")
    baseline_value: Scalar | None = Field(default=None, description="effective value in the baseline")
    run_is_default: bool = Field(default=False, description="the run's value is its framework's default")
    baseline_is_default: bool = Field(default=False, description="the baseline's value is its framework's default")
    involves_default: bool = Field(default=False, description="at least one side's value is a framework default")
    default_scope: Literal["optimizer", "layer"] | None = Field(
        default=None,
        description="for a default: an optimizer default (applies whenever that optimizer runs) "
        "or a layer default (applies only if the model has such layers)",
    )
    run_raw_key: str | None = Field(default=None, description="the run's key as written (or 'default of <framework>')")
    baseline_raw_key: str | None = Field(default=None, description="the baseline's key as written")
    run_framework: str | None = Field(default=None, description="framework of the run")
    baseline_framework: str | None = Field(default=None, description="framework of the baseline")
    ratio: float | None = Field(default=None, description="run_value / baseline_value, for numbers")
    relative_difference: float | None = Field(
        default=None, description="|run - baseline| / max(|run|, |baseline|), 0..1, for numbers"
    )
    unusual_side: Literal["run", "baseline", "both", "neither"] = Field(
        default="neither", description="which side's value is outside the usual range for the key"
    )
    effect: str | None = Field(default=None, description="what such a difference typically does")
    doc = "a hyper-parameter whose effective value differs between run and baseline"


class LearningRateCheck(Fact):
    """The learning rate against the usual band for its optimizer and batch size."""

    kind: Literal["learning_rate_check"] = "learning_rate_check"
    learning_rate: float = Field(description="the run's learning rate")
    optimizer: str = Field(description="canonical optimizer name")
    optimizer_family: Literal["sgd", "adaptive"] = Field(description="sgd (momentum SGD) or adaptive (Adam-like)")
    global_batch_size: float | None = Field(default=None, description="samples per optimizer step, when known")
    usual_low: float = Field(description="lower edge of the usual learning-rate band for this optimizer/batch size")
    usual_high: float = Field(description="upper edge of the usual learning-rate band")
    times_above_usual: float = Field(description="learning_rate / usual_high (> 1: above the band)")
    times_below_usual: float = Field(description="usual_low / learning_rate (> 1: below the band)")
    has_warmup: bool | None = Field(default=None, description="warm-up configured (None: not stated)")
    is_large_batch: bool = Field(default=False, description="global batch size >= 1024")
    learning_rate_origin: str | None = Field(
        default=None,
        description="where the rate comes from when the run does not state it (a framework default, the highest "
        "rate a Trainer log shows); None: stated",
    )
    optimizer_origin: str | None = Field(
        default=None,
        description="where the optimizer comes from when the run does not state it (a default); None: stated",
    )
    doc = "learning rate compared with the usual band for its optimizer and batch size"


class LossScaleCheck(Fact):
    """The configured mixed-precision loss scaling."""

    kind: Literal["loss_scale_check"] = "loss_scale_check"
    precision: str | None = Field(default=None, description="fp32 | fp16 | bf16 (None: not stated)")
    loss_scale: float | None = Field(default=None, description="static scale, or the initial dynamic scale")
    is_dynamic: bool | None = Field(default=None, description="dynamic loss scaling (None: not stated)")
    log2_loss_scale: float | None = Field(default=None, description="log2 of loss_scale")
    doc = "configured mixed-precision loss scaling (precision, scale, static or dynamic)"


class Setting(Fact):
    """A setting outside the hyper-parameter vocabulary, kept under its name as written."""

    kind: Literal["setting"] = "setting"
    name: str = Field(
        description="the key as written, with its sections joined by dots (augment, "
        "data.crop_size, SOLVER.WARMUP_FACTOR, fp16.loss_scale_window)"
    )
    value: Scalar = Field(
        description="the value: number, flag or text; a list or a numbered mapping "
        "(id2label) as compact JSON text, cut at 300 characters (null settings are "
        "not kept)"
    )
    doc = "a setting outside the hyper-parameter vocabulary (name as written, value, file:line)"


class SettingDiff(Fact):
    """A setting outside the vocabulary whose value differs between the run and the baseline."""

    kind: Literal["setting_diff"] = "setting_diff"
    name: str = Field(description="the key as written (the same on both sides)")
    run_value: Scalar | None = Field(default=None, description="the run's value (None: not set in the run)")
    baseline_value: Scalar | None = Field(default=None, description="the baseline's value (None: not set there)")
    run_source: str | None = Field(default=None, description="file:line of the run's value")
    baseline_source: str | None = Field(default=None, description="file:line of the baseline's value")
    is_data_pipeline: bool = Field(
        default=False,
        description="a setting of the input pipeline: crop, resize, flip/rotation, colour jitter, the "
        "normalisation mean/std, a mixing augmentation (advisor.knowledge.settings.is_data_pipeline_setting)",
    )
    doc = (
        "a setting outside the vocabulary whose value differs between run and baseline "
        "(paths, names, logging and seeds are not compared)"
    )
