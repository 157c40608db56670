"""The cause catalogue (docs/causes.md): stable ids, their stage and title.

Ids are public interface: add new ones freely, never rename or reuse one.
A rule may conclude a custom id; it is then shown with its rule's title.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    id: str
    stage: str
    title: str


CAUSES: tuple[Cause, ...] = (
    Cause("lr_too_high", "hyperparameters", "Learning rate too high"),
    Cause("lr_too_low", "hyperparameters", "Learning rate too low"),
    Cause("loss_scale_bad", "hyperparameters", "Loss-scale value unreasonable"),
    Cause("weight_init_bad", "hyperparameters", "Weight initialisation unreasonable"),
    Cause("hparam_mismatch", "hyperparameters", "A hyper-parameter differs from the benchmark"),
    Cause("insufficient_epochs", "hyperparameters", "Training stopped before convergence"),
    Cause("wrong_operator", "model_structure", "An operator is misused"),
    Cause("weight_sharing_error", "model_structure", "Weights shared that should not be (or the reverse)"),
    Cause("weight_freezing_error", "model_structure", "Weights frozen that should train"),
    Cause("disconnected_node", "model_structure", "A block is not connected to the loss"),
    Cause("loss_function_error", "model_structure", "Loss function wrong for the task"),
    Cause("optimizer_error", "model_structure", "Optimizer implemented or configured wrongly"),
    Cause("missing_values", "input_data", "Too many missing values in the inputs"),
    Cause("class_imbalance", "input_data", "Class counts very unequal"),
    Cause("outliers", "input_data", "Abnormal values in the data"),
    Cause("label_errors", "input_data", "Labels wrong"),
    Cause("insufficient_samples", "input_data", "Too few training samples"),
    Cause("not_normalized", "input_data", "Inputs not normalised"),
    Cause("preprocessing_mismatch", "input_data", "Data pipeline differs (train/eval or run/benchmark)"),
    Cause("gradient_explosion", "loss_curve", "Gradients explode"),
    Cause("gradient_vanishing", "loss_curve", "Gradients vanish"),
    Cause("activation_saturation", "loss_curve", "Activations saturated or dead"),
    Cause("overfitting", "loss_curve", "Model overfits the training set"),
    Cause("fp_overflow", "floating_point_exceptions", "Floating-point overflow / underflow in mixed precision"),
    Cause("nan_inf_source", "floating_point_exceptions", "An operator produces NaN/Inf from finite inputs"),
    Cause("operator_accuracy", "network_wide_comparison", "An operator deviates from the benchmark"),
    Cause("fusion_error", "fusion", "Accuracy problem only with operator fusion"),
    Cause("communication_error", "network_wide_comparison", "A collective communication is wrong on some ranks"),
    Cause("hardware_fault", "network_wide_comparison", "One device computes wrongly (a faulty card)"),
    Cause("data_sharding_error", "input_data", "Ranks read the wrong data shards"),
    Cause("nondeterminism", "random_errors", "Same inputs give different outputs from run to run"),
    Cause("data_not_shuffled", "input_data", "Training samples come in a fixed order"),
    Cause("metric_misuse", "input_data", "The evaluation metric does not fit the task"),
    Cause("baseline_unqualified", "pre_check", "The benchmark run is not a valid reference"),
    Cause(
        "environment_mismatch",
        "pre_check",
        "Code written for another framework/library version, or a library bug fixed upstream",
    ),
)

CAUSE_BY_ID = {c.id: c for c in CAUSES}
