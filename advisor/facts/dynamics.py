"""Facts about training dynamics: weights, gradients, updates and activations over training.

Read from ``tensors.jsonl`` (stages: training dynamics, model structure).
"Matrix" parameters are those with two or more dimensions (or, when the
writer gave no shape, names ending in ``weight``); the per-layer comparisons
use them, since biases and norm scales start at constants.
A gradient's *rms* is its norm / sqrt(numel), comparable across layer sizes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class TensorDynamics(Fact):
    """Run-wide summary of the recorded tensor statistics."""

    kind: Literal["tensor_dynamics"] = "tensor_dynamics"
    records: int = Field(description="tensor records read")
    steps_recorded: int = Field(description="distinct steps with records (counted up to 1,000,000)")
    first_step: int | None = Field(default=None, description="first recorded step")
    last_step: int | None = Field(default=None, description="last recorded step")
    param_count: int = Field(default=0, description="parameters with weight records")
    trained_param_count: int = Field(default=0, description="parameters whose weights changed during the run")
    unchanged_param_count: int = Field(
        default=0,
        description="parameters whose weights never changed (of those recorded at two steps or with an update norm)",
    )
    grad_param_count: int = Field(
        default=0,
        description="parameters with gradient records (0: the recorder wrote "
        "no gradients, so a missing one says nothing)",
    )
    grad_norm_first: float | None = Field(
        default=None, description="global gradient norm (all parameters) at the first recorded step"
    )
    grad_norm_max: float | None = Field(default=None, description="largest finite global gradient norm")
    grad_norm_max_step: int | None = Field(default=None, description="step of grad_norm_max")
    grad_norm_last: float | None = Field(default=None, description="global gradient norm at the last recorded step")
    grad_norm_growth_ratio: float | None = Field(
        default=None, description="grad_norm_max / median global gradient norm of the first three recorded steps"
    )
    early_layer: str | None = Field(default=None, description="first matrix parameter (in model order) with gradients")
    late_layer: str | None = Field(default=None, description="last matrix parameter (in model order) with gradients")
    early_to_late_grad_ratio: float | None = Field(
        default=None, description="median over steps of grad rms of early_layer / grad rms of late_layer"
    )
    update_ratio_median: float | None = Field(
        default=None,
        description="median over the matrix parameters that changed of their median ||update|| / ||weight|| per step",
    )
    update_ratio_max: float | None = Field(default=None, description="largest per-parameter median update ratio")
    params_with_update_cos: int = Field(default=0, description="parameters with a recorded update/gradient cosine")
    ascent_param_count: int = Field(
        default=0,
        description="parameters whose median cos(update, gradient) is above +0.5: they move WITH the "
        "gradient (uphill) instead of against it",
    )
    ascent_param_share: float | None = Field(default=None, description="ascent_param_count / params_with_update_cos")
    params_with_resid_cos: int = Field(
        default=0, description="matrix parameters with a recorded update_resid_weight_cos"
    )
    away_from_zero_param_count: int = Field(
        default=0,
        description="matrix parameters whose median cos(update part not along the gradient, weights) is "
        "above +0.9: each step adds a multiple of the weights (weight decay with the wrong sign)",
    )
    away_from_zero_param_share: float | None = Field(
        default=None, description="away_from_zero_param_count / params_with_resid_cos"
    )
    weight_norm_growth_ratio_max: float | None = Field(
        default=None, description="largest last/first weight-norm ratio over matrix parameters"
    )
    weight_norm_growth_param: str | None = Field(default=None, description="parameter of weight_norm_growth_ratio_max")
    late_growth_param_count: int = Field(
        default=0, description="trained parameters (matrices and vectors) with a weight_norm_late_growth_per_step"
    )
    late_growth_per_step_median: float | None = Field(
        default=None, description="median over those parameters of weight_norm_late_growth_per_step"
    )
    late_growth_per_step_min: float | None = Field(
        default=None, description="smallest weight_norm_late_growth_per_step over those parameters"
    )
    late_growth_uniformity: float | None = Field(
        default=None,
        description="late_growth_per_step_min / late_growth_per_step_median when the median is > 0: "
        "near 1 when every parameter grows at one geometric rate (a term proportional to "
        "the weights added at each step, e.g. weight decay with the wrong sign)",
    )
    late_growth_ratio_median: float | None = Field(
        default=None, description="median over those parameters of weight norm at the last / middle record"
    )
    first_nonfinite_step: int | None = Field(default=None, description="first step where a tensor has NaN/Inf")
    first_nonfinite_name: str | None = Field(
        default=None, description="first tensor (in file order) with NaN/Inf at that step"
    )
    first_nonfinite_kind: str | None = Field(default=None, description="weight, grad or activation")
    first_nonfinite_weight_step: int | None = Field(default=None, description="first step where a weight has NaN/Inf")
    first_nonfinite_weight: str | None = Field(default=None, description="the first weight with NaN/Inf at that step")
    weight_nonfinite_at_first_record: bool = Field(
        default=False,
        description="a weight is NaN/Inf at the first recorded step (the capture hook records weights before "
        "optimizer.step(): a weight non-finite there was initialised or loaded so)",
    )
    doc = "run-wide summary of recorded weight/gradient/activation statistics: gradient trend, update size, NaN/Inf"


class ParamDynamics(Fact):
    """One parameter's weights and gradients over the recorded steps."""

    kind: Literal["param_dynamics"] = "param_dynamics"
    name: str = Field(description="parameter name, e.g. encoder.0.weight")
    layer_index: int = Field(description="0-based position of the parameter in model order (order of first record)")
    is_matrix: bool = Field(description="two or more dimensions (weights of Linear/Conv/Embedding)")
    is_output_layer: bool = Field(default=False, description="the last matrix parameter in model order")
    module_type: str | None = Field(
        default=None, description="class of the owning module (Linear, Embedding, ...); None if not written"
    )
    is_embedding: bool = Field(
        default=False,
        description="an embedding table (module Embedding, or a name with emb/wte/wpe when no module type was written)",
    )
    numel: int | None = Field(default=None, description="number of elements")
    fan_in: int | None = Field(
        default=None,
        description="inputs per output unit: product of shape[1:]; None for embedding tables (a lookup has no fan-in)",
    )
    steps_recorded: int = Field(description="recorded steps of this parameter's weights")
    first_record_step: int | None = Field(default=None, description="step of its first weight record")
    requires_grad: bool | None = Field(default=None, description="trainable flag as recorded; None if not written")
    in_optimizer: bool | None = Field(
        default=None, description="the parameter is in one of the optimizer's parameter groups; None if not written"
    )
    is_between_trained: bool = Field(
        default=False, description="parameters before AND after it in model order changed during training"
    )
    is_before_trained: bool = Field(
        default=False,
        description="no parameter before it in model order changed "
        "during training and one after it did (a frozen "
        "backbone's place)",
    )
    has_grad: bool = Field(default=False, description="at least one gradient record")
    is_grad_always_zero: bool | None = Field(
        default=None, description="every gradient record has norm 0; None without gradient records"
    )
    grad_rms_median: float | None = Field(default=None, description="median gradient rms over steps")
    is_unchanged: bool | None = Field(
        default=None,
        description="weights identical at every recorded step (and "
        "zero update norm); None if recorded once without update",
    )
    update_ratio_median: float | None = Field(default=None, description="median ||update|| / ||weight|| over steps")
    update_grad_cos_median: float | None = Field(
        default=None, description="median cos(update, gradient): near -1 for SGD, negative for descent"
    )
    update_resid_weight_cos_median: float | None = Field(
        default=None,
        description="median cos(part of the update not along the gradient, weights before it): "
        "0.2-0.5 for momentum/Adam, below 0 with weight decay, near +1 when the update "
        "grows the weights along themselves",
    )
    weight_norm_first: float | None = Field(default=None, description="weight norm at the first record")
    weight_norm_last: float | None = Field(default=None, description="weight norm at the last record")
    weight_norm_growth_ratio: float | None = Field(default=None, description="weight_norm_last / weight_norm_first")
    weight_norm_late_growth_per_step: float | None = Field(
        default=None,
        description="ln(weight norm at the last record / at the middle record) per step: the "
        "geometric growth rate over the second half (at least 6 records)",
    )
    first_std: float | None = Field(default=None, description="weight std at the first record")
    first_is_all_zero: bool | None = Field(default=None, description="every weight exactly 0 at the first record")
    first_std_fan_in_ratio: float | None = Field(
        default=None,
        description="first_std * sqrt(fan_in): about 0.6 for PyTorch's default init, 1 for "
        "Xavier/LeCun, 1.4 for Kaiming; orders away means a scale the layer does not need",
    )
    first_row_spread_ratio: float | None = Field(
        default=None,
        description="at the first record, mean over inputs of the std across output rows / first_std: "
        "0 when every row is the same (symmetric init), about 1 for random init",
    )
    doc = "one parameter's weights, gradients and updates over training, and its statistics at the first step"


class ActivationStats(Fact):
    """One module's output over the recorded steps."""

    kind: Literal["activation_stats"] = "activation_stats"
    name: str = Field(description="module name, e.g. features.3")
    module_type: str | None = Field(default=None, description="module class, e.g. ReLU, Sigmoid; None if not written")
    is_saturating_type: bool = Field(default=False, description="sigmoid/tanh-like output (sat_frac recorded)")
    is_relu_type: bool = Field(
        default=False,
        description="ReLU-like output (ReLU, ReLU6, LeakyReLU excluded); with "
        "no module type, a name with relu or outputs >= 90% "
        "exact zeros (median over steps)",
    )
    is_last_module: bool = Field(
        default=False,
        description="the last module recorded in the forward pass: the "
        "model's output (a final Sigmoid is a probability)",
    )
    steps_recorded: int = Field(description="recorded steps")
    zero_frac_median: float | None = Field(default=None, description="median share of exact zeros in the output")
    zero_frac_last: float | None = Field(default=None, description="share of exact zeros at the last record")
    sat_frac_median: float | None = Field(
        default=None, description="median share of outputs within 1 % of the output range from a limit"
    )
    sat_frac_last: float | None = Field(default=None, description="saturated share at the last record")
    nonfinite_steps: int = Field(default=0, description="recorded steps with NaN/Inf in the output")
    doc = "one module's output statistics over training: share of zeros (dead ReLU), share saturated"


class TiedParams(Fact):
    """Two parameters whose recorded statistics are identical at every recorded step."""

    kind: Literal["tied_params"] = "tied_params"
    name_a: str = Field(description="first parameter (model order)")
    name_b: str = Field(description="second parameter")
    numel: int | None = Field(default=None, description="elements of each")
    steps_compared: int = Field(description="recorded steps at which both were identical (all of them)")
    is_changing: bool = Field(description="their weights changed during training (not two frozen constants)")
    involves_embedding: bool = Field(
        default=False,
        description="one of them is an embedding table (tying the input embedding and the output projection is common)",
    )
    doc = "two parameters identical (mean, std, min, max, norm) at every recorded step: one shared tensor"


class FrozenWeights(Fact):
    """How much of the model was frozen (``requires_grad=False``) in what the capture recorded."""

    kind: Literal["frozen_weights"] = "frozen_weights"
    frozen_params: int = Field(description="weight elements with requires_grad=False")
    total_params: int = Field(description="weight elements recorded")
    frozen_share: float = Field(description="frozen_params / total_params")
    frozen_tensors: int = Field(description="recorded weight tensors with requires_grad=False")
    frozen_names: str = Field(description="the first frozen tensors, in model order (at most five, comma-separated)")
    includes_output_layer: bool = Field(description="the last matrix in model order (the head) is frozen too")
    doc = "the share of the recorded weights that were frozen: structure, a setting to check against what was meant"
