"""Facts about the model as the run describes it (stage: model structure): its layers, its
output, the loss it is trained with, and the task it is trained for.

They come from the model descriptions a run already has (``advisor.read.model_desc``):
a Keras ``model.summary()`` or ``model.to_json()``, a ``.keras`` file's ``config.json``, a
PyTorch or MindSpore ``print(model)``, a Hugging Face ``config.json``, the ``layers`` /
``activations`` / ``output_activation`` / ``loss`` keys of a hyper-parameter file.

Activation names are canonical lower-case: relu, sigmoid, tanh, softmax, log_softmax,
gelu, elu, leaky_relu, selu, silu, softplus, linear (no activation).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact

LayerRole = Literal[
    "dense", "conv", "recurrent", "embedding", "activation", "dropout", "norm", "pool", "reshape", "input", "other"
]
DescriptionFormat = Literal[
    "keras_summary",
    "keras_config",
    "torch_repr",
    "mindspore_repr",
    "hf_config",
    "hparams",
    "onnx_graph",
    "mindspore_ir",
]


class ModelLayer(Fact):
    """One layer of the model, in execution (printing) order."""

    kind: Literal["model_layer"] = "model_layer"
    index: int = Field(description="0-based position among the layers read")
    name: str = Field(description="the layer's name as printed (fc1, dense_1, 3)")
    layer_type: str = Field(description="its class as printed: Linear, Dense, Conv2d, ReLU, Dropout, ...")
    role: LayerRole = Field(description="what the layer does: dense, conv, activation, dropout, norm, ...")
    units: int | None = Field(
        default=None, description="outputs of a dense/conv layer (units, out_features, output_channels, filters)"
    )
    activation: str | None = Field(
        default=None,
        description="activation the layer applies (its own activation= "
        "argument, or what an activation layer is); None: not "
        "stated",
    )
    dropout_rate: float | None = Field(default=None, description="drop probability of a dropout layer")
    is_output_layer: bool = Field(default=False, description="the last dense/conv layer (the model's output layer)")
    doc = "one layer of the model as the run describes it: type, units, activation, dropout rate"


class StructureDiff(Fact):
    """The run's layers against the baseline's (advisor/extract/structure_compare.py)."""

    kind: Literal["structure_diff"] = "structure_diff"
    run_layers: int = Field(description="compared layers of the run (an inline activation counts as one)")
    baseline_layers: int = Field(description="compared layers of the baseline")
    differences: int = Field(description="all differences found")
    missing_count: int = Field(default=0, description="baseline layers with no counterpart in the run")
    extra_count: int = Field(default=0, description="run layers with no counterpart in the baseline")
    width_changes: int = Field(default=0, description="aligned dense/conv/recurrent layers of another width")
    activation_changes: int = Field(default=0, description="aligned activations of another kind (gelu vs relu)")
    dropout_changes: int = Field(default=0, description="aligned dropout layers with another rate")
    first_difference: str | None = Field(default=None, description="the first difference, in layer order")
    text: str = Field(description="the differences in words, layers named")
    doc = "the run's model structure against the baseline's: missing or extra layers, widths, activations, dropout"


class ModelSummary(Fact):
    """The model's shape as a whole, and above all its output end."""

    kind: Literal["model_summary"] = "model_summary"
    framework: Literal["keras", "pytorch", "mindspore", "transformers", "onnx", "unknown"] = Field(
        default="unknown", description="framework whose model description was read"
    )
    description_format: DescriptionFormat = Field(description="where the layers were read from")
    n_layers: int = Field(default=0, description="layers read")
    n_weighted_layers: int = Field(default=0, description="dense, conv, recurrent and embedding layers")
    total_params: int | None = Field(default=None, description="parameter count, when printed")
    activations_known: bool = Field(
        description="the description states every layer's activation (a Keras summary or a bare list of units does not)"
    )
    output_units: int | None = Field(default=None, description="units of the output layer")
    output_layer_type: str | None = Field(default=None, description="class of the output layer")
    output_activation: str | None = Field(
        default=None, description="activation applied after the output layer (linear: none); None when not known"
    )
    hidden_activation: str | None = Field(
        default=None, description="the activation most hidden layers use (linear: none)"
    )
    hidden_saturating_layers: int = Field(default=0, description="hidden dense/conv layers followed by sigmoid or tanh")
    stacked_without_activation: int = Field(
        default=0,
        description="dense/conv layers followed directly by another dense/conv layer with no activation "
        "between (only counted when activations are known)",
    )
    first_stacked_layer: str | None = Field(default=None, description="the first such layer")
    has_dropout_after_output: bool = Field(default=False, description="a dropout layer comes after the output layer")
    output_dropout_rate: float | None = Field(default=None, description="its rate")
    architecture: str | None = Field(
        default=None, description="model class (Hugging Face architectures[0], the printed top-level class)"
    )
    trainable_params: int | None = Field(
        default=None, description="trainable parameters as the training log states them (Trainer's INFO block)"
    )
    config_min_params: int | None = Field(
        default=None,
        description="parameters a Hugging Face config's embedding, attention and feed-forward matrices hold at least",
    )
    trainable_share: float | None = Field(
        default=None, description="trainable_params / config_min_params (None when either is unknown)"
    )
    doc = "the model as a whole: output units and activation, activations between layers, dropout after the output"


class LossSetup(Fact):
    """The loss function as configured, with what it expects of the model output and the targets."""

    kind: Literal["loss_setup"] = "loss_setup"
    name: str = Field(description="the loss as written (CrossEntropyLoss, sparse_categorical_crossentropy, mse)")
    family: Literal["cross_entropy", "bce", "nll", "mse", "l1", "huber", "kl", "hinge", "other"] = Field(
        description="the loss family"
    )
    variant: Literal[
        "categorical",
        "sparse_categorical",
        "binary",
        "torch_cross_entropy",
        "torch_bce",
        "torch_bce_with_logits",
        "torch_nll",
        "softmax_cross_entropy",
        "regression",
        "other",
    ] = Field(
        description="which implementation: Keras categorical/sparse/binary, torch CrossEntropyLoss, BCELoss, "
        "BCEWithLogitsLoss, NLLLoss, MindSpore/TF softmax cross-entropy with logits, a regression loss"
    )
    expects: Literal["logits", "probabilities", "log_probabilities", "values"] = Field(
        description="what the loss expects the model to output"
    )
    target_form: Literal["class_ids", "one_hot", "binary", "class_ids_or_one_hot", "values"] = Field(
        description="what the loss expects as targets"
    )
    from_logits: bool | None = Field(
        default=None, description="Keras from_logits / MindSpore sparse flag as configured (None: not stated)"
    )
    framework: str | None = Field(default=None, description="framework the loss name belongs to, when known")
    doc = "the configured loss: family, implementation, what it expects as model output and as targets"


class Task(Fact):
    """What the model is trained to do, decided from every source that says it."""

    kind: Literal["task"] = "task"
    task_type: Literal["binary", "multiclass", "multilabel", "regression"] = Field(description="the task")
    n_classes: int | None = Field(default=None, description="number of classes (classification)")
    decided_from: str = Field(description="the source that decided it, e.g. 'hparams.yaml: num_classes=10'")
    is_from_loss: bool = Field(
        default=False, description="decided only from the loss's name (a rule that judges the loss must not rely on it)"
    )
    is_from_metric: bool = Field(default=False, description="decided only from the names of logged metrics")
    is_n_from_output: bool = Field(
        default=False,
        description="n_classes was read off the model's output layer (a rule comparing the two must not rely on it)",
    )
    sources: str = Field(default="", description="every source that said something about the task, '; '-joined")
    has_conflict: bool = Field(default=False, description="two sources disagree (the first by priority wins)")
    label_columns: int | None = Field(
        default=None,
        description="columns of the training labels of a data sample: "
        "1 for class ids or values, k for one-hot/multi-hot",
    )
    labels_file: str | None = Field(default=None, description="the data sample the labels were read from")
    accuracy_metric: str | None = Field(default=None, description="an accuracy-type metric logged or configured")
    regression_metric: str | None = Field(
        default=None, description="a regression metric (mae, rmse, r2) logged or configured"
    )
    doc = "the task (binary / multi-class / multi-label classification, regression) and class count, with its source"
