"""Framework defaults that differ between frameworks and hurt ports.

A run ported from one framework to another often keeps every value that was
*written down* and silently changes every value that was not: the new
framework's defaults apply. This table lets the hyper-parameter extractor
fill in, for a run whose ``framework`` is known, the effective value of each
key the run did not set, so that a run and a baseline from two frameworks
are compared on what they actually used.

Every value is stored in the advisor's *canonical* convention (see
``advisor.facts.hparams``), converted where a framework uses another one:

- ``batchnorm_decay``: the share of the old running statistic kept at each
  step. PyTorch's ``momentum=0.1`` is the weight of the *new* batch, so its
  keep weight is 0.9; TensorFlow/Keras (0.99), MindSpore (0.9) and Flax (0.99)
  state the keep weight directly.
- ``dropout``: the probability of dropping a unit (not the keep probability
  that MindSpore 1.x's ``keep_prob`` gives).
- ``gelu_approximate``: true for the tanh approximation, false for the exact
  erf form.
- ``weight_decay_mode``: ``l2`` when the decay is added to the gradient (and so
  rescaled by Adam's second moment), ``decoupled`` when the weights are shrunk
  directly (AdamW, Loshchilov & Hutter, https://arxiv.org/abs/1711.05101).

Each entry cites the framework documentation it was taken from (PyTorch 2.x,
Keras 3 / TensorFlow 2.16, MindSpore 2.3, Optax 0.2 / Flax linen 0.8).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

Value = Union[float, bool, str]

FRAMEWORKS = ("pytorch", "tensorflow", "mindspore", "jax")

#: spellings users write for ``framework:`` -> canonical framework
FRAMEWORK_ALIASES = {
    "pytorch": "pytorch",
    "torch": "pytorch",
    "pt": "pytorch",
    "lightning": "pytorch",
    "pytorch_lightning": "pytorch",
    "huggingface": "pytorch",
    "transformers": "pytorch",
    "tensorflow": "tensorflow",
    "tf": "tensorflow",
    "keras": "tensorflow",
    "tf.keras": "tensorflow",
    "tf_keras": "tensorflow",
    "tensorflow2": "tensorflow",
    "tf2": "tensorflow",
    "mindspore": "mindspore",
    "ms": "mindspore",
    "jax": "jax",
    "flax": "jax",
    "optax": "jax",
    "haiku": "jax",
}


@dataclass(frozen=True)
class Default:
    """One framework default, in the canonical convention, with where it comes from."""

    value: Value
    source: str
    note: str = ""


# -- documentation pages -----------------------------------------------------
_PT = "https://pytorch.org/docs/stable/generated/"
_KERAS = "https://keras.io/api/"
_MS = "https://www.mindspore.cn/docs/en/r2.3.0/api_python/nn/"
_OPTAX = "https://optax.readthedocs.io/en/latest/api/optimizers.html"
_FLAX = "https://flax.readthedocs.io/en/latest/api_reference/flax.linen/layers.html"
_KERAS_WD = (
    "https://github.com/keras-team/keras/blob/master/keras/src/optimizers/base_optimizer.py"
    " (_apply_weight_decay: variable -= variable * weight_decay * lr)"
)

#: layer-level defaults: canonical key -> framework -> Default
LAYER_DEFAULTS: dict[str, dict[str, Default]] = {
    "batchnorm_decay": {
        "pytorch": Default(
            0.9,
            _PT + "torch.nn.BatchNorm2d.html",
            "momentum=0.1 is the weight of the new batch: running = 0.9*running + 0.1*batch",
        ),
        "tensorflow": Default(
            0.99,
            _KERAS + "layers/normalization_layers/batch_normalization/",
            "momentum=0.99 is the keep weight of the moving average",
        ),
        "mindspore": Default(
            0.9,
            _MS + "mindspore.nn.BatchNorm2d.html",
            "momentum=0.9 is the keep weight: moving = moving*0.9 + batch*0.1",
        ),
        "jax": Default(0.99, _FLAX + "#flax.linen.BatchNorm", "flax BatchNorm momentum=0.99 (keep weight)"),
    },
    "batchnorm_epsilon": {
        "pytorch": Default(1e-5, _PT + "torch.nn.BatchNorm2d.html"),
        "tensorflow": Default(1e-3, _KERAS + "layers/normalization_layers/batch_normalization/"),
        "mindspore": Default(1e-5, _MS + "mindspore.nn.BatchNorm2d.html"),
        "jax": Default(1e-5, _FLAX + "#flax.linen.BatchNorm"),
    },
    "layernorm_epsilon": {
        "pytorch": Default(1e-5, _PT + "torch.nn.LayerNorm.html"),
        "tensorflow": Default(1e-3, _KERAS + "layers/normalization_layers/layer_normalization/"),
        "mindspore": Default(1e-7, _MS + "mindspore.nn.LayerNorm.html"),
        "jax": Default(1e-6, _FLAX + "#flax.linen.LayerNorm"),
    },
    "gelu_approximate": {
        "pytorch": Default(False, _PT + "torch.nn.GELU.html", "approximate='none' (exact erf)"),
        "tensorflow": Default(False, _KERAS + "layers/activations/", "keras.activations.gelu(approximate=False)"),
        "mindspore": Default(True, _MS + "mindspore.nn.GELU.html", "nn.GELU(approximate=True): tanh form"),
        "jax": Default(
            True, "https://jax.readthedocs.io/en/latest/_autosummary/jax.nn.gelu.html", "jax.nn.gelu(approximate=True)"
        ),
    },
    "linear_init": {
        "pytorch": Default(
            "kaiming_uniform_a_sqrt5",
            _PT + "torch.nn.Linear.html",
            "U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias",
        ),
        "tensorflow": Default("glorot_uniform", _KERAS + "layers/core_layers/dense/", "bias zeros"),
        "mindspore": Default(
            "kaiming_uniform_a_sqrt5",
            _MS + "mindspore.nn.Dense.html",
            "weight_init=None -> HeUniform(sqrt(5)) since 2.x; 1.x used 'normal' (sigma 0.01)",
        ),
        "jax": Default("lecun_normal", _FLAX + "#flax.linen.Dense", "bias zeros"),
    },
    "conv_init": {
        "pytorch": Default("kaiming_uniform_a_sqrt5", _PT + "torch.nn.Conv2d.html"),
        "tensorflow": Default("glorot_uniform", _KERAS + "layers/convolution_layers/convolution2d/"),
        "mindspore": Default(
            "kaiming_uniform_a_sqrt5",
            _MS + "mindspore.nn.Conv2d.html",
            "weight_init=None -> HeUniform(sqrt(5)) since 2.x; 1.x used 'normal'",
        ),
        "jax": Default("lecun_normal", _FLAX + "#flax.linen.Conv"),
    },
}

#: optimizer-level defaults: canonical optimizer -> framework -> canonical key -> Default
OPTIMIZER_DEFAULTS: dict[str, dict[str, dict[str, Default]]] = {
    "adam": {
        "pytorch": {
            "adam_epsilon": Default(1e-8, _PT + "torch.optim.Adam.html"),
            "adam_beta1": Default(0.9, _PT + "torch.optim.Adam.html"),
            "adam_beta2": Default(0.999, _PT + "torch.optim.Adam.html"),
            "weight_decay": Default(0.0, _PT + "torch.optim.Adam.html"),
            "weight_decay_mode": Default("l2", _PT + "torch.optim.Adam.html", "weight_decay is added to the gradient"),
        },
        "tensorflow": {
            "adam_epsilon": Default(1e-7, _KERAS + "optimizers/adam/"),
            "adam_beta1": Default(0.9, _KERAS + "optimizers/adam/"),
            "adam_beta2": Default(0.999, _KERAS + "optimizers/adam/"),
            "weight_decay": Default(0.0, _KERAS + "optimizers/adam/", "weight_decay=None"),
            "weight_decay_mode": Default("decoupled", _KERAS_WD),
        },
        "mindspore": {
            "adam_epsilon": Default(1e-8, _MS + "mindspore.nn.Adam.html"),
            "adam_beta1": Default(0.9, _MS + "mindspore.nn.Adam.html"),
            "adam_beta2": Default(0.999, _MS + "mindspore.nn.Adam.html"),
            "weight_decay": Default(0.0, _MS + "mindspore.nn.Adam.html"),
            "weight_decay_mode": Default("l2", _MS + "mindspore.nn.Adam.html", "decay added to the gradient"),
        },
        "jax": {
            "adam_epsilon": Default(1e-8, _OPTAX + "#optax.adam"),
            "adam_beta1": Default(0.9, _OPTAX + "#optax.adam"),
            "adam_beta2": Default(0.999, _OPTAX + "#optax.adam"),
            "weight_decay": Default(0.0, _OPTAX + "#optax.adam", "optax.adam has no weight decay"),
        },
    },
    "adamw": {
        "pytorch": {
            "adam_epsilon": Default(1e-8, _PT + "torch.optim.AdamW.html"),
            "adam_beta1": Default(0.9, _PT + "torch.optim.AdamW.html"),
            "adam_beta2": Default(0.999, _PT + "torch.optim.AdamW.html"),
            "weight_decay": Default(0.01, _PT + "torch.optim.AdamW.html"),
            "weight_decay_mode": Default("decoupled", _PT + "torch.optim.AdamW.html"),
        },
        "tensorflow": {
            "adam_epsilon": Default(1e-7, _KERAS + "optimizers/adamw/"),
            "adam_beta1": Default(0.9, _KERAS + "optimizers/adamw/"),
            "adam_beta2": Default(0.999, _KERAS + "optimizers/adamw/"),
            "weight_decay": Default(0.004, _KERAS + "optimizers/adamw/"),
            "weight_decay_mode": Default("decoupled", _KERAS + "optimizers/adamw/"),
        },
        "mindspore": {
            "adam_epsilon": Default(1e-6, _MS + "mindspore.nn.AdamWeightDecay.html", "nn.AdamWeightDecay eps=1e-6"),
            "adam_beta1": Default(0.9, _MS + "mindspore.nn.AdamWeightDecay.html"),
            "adam_beta2": Default(0.999, _MS + "mindspore.nn.AdamWeightDecay.html"),
            "weight_decay": Default(0.0, _MS + "mindspore.nn.AdamWeightDecay.html"),
            "weight_decay_mode": Default("decoupled", _MS + "mindspore.nn.AdamWeightDecay.html"),
        },
        "jax": {
            "adam_epsilon": Default(1e-8, _OPTAX + "#optax.adamw"),
            "adam_beta1": Default(0.9, _OPTAX + "#optax.adamw"),
            "adam_beta2": Default(0.999, _OPTAX + "#optax.adamw"),
            "weight_decay": Default(1e-4, _OPTAX + "#optax.adamw"),
            "weight_decay_mode": Default("decoupled", _OPTAX + "#optax.adamw"),
        },
    },
    "sgd": {
        "pytorch": {
            "momentum": Default(0.0, _PT + "torch.optim.SGD.html", "v = mu*v + g; p -= lr*v (lr outside the buffer)"),
            "nesterov": Default(False, _PT + "torch.optim.SGD.html"),
            "weight_decay": Default(0.0, _PT + "torch.optim.SGD.html"),
            "weight_decay_mode": Default("l2", _PT + "torch.optim.SGD.html"),
        },
        "tensorflow": {
            "momentum": Default(0.0, _KERAS + "optimizers/sgd/", "v = mu*v - lr*g (lr inside the buffer)"),
            "nesterov": Default(False, _KERAS + "optimizers/sgd/"),
            "weight_decay": Default(0.0, _KERAS + "optimizers/sgd/"),
            "weight_decay_mode": Default("decoupled", _KERAS_WD),
        },
        "mindspore": {
            "momentum": Default(0.0, _MS + "mindspore.nn.SGD.html", "nn.SGD; nn.Momentum has no default momentum"),
            "nesterov": Default(False, _MS + "mindspore.nn.SGD.html"),
            "weight_decay": Default(0.0, _MS + "mindspore.nn.SGD.html"),
            "weight_decay_mode": Default("l2", _MS + "mindspore.nn.SGD.html"),
        },
        "jax": {
            "momentum": Default(0.0, _OPTAX + "#optax.sgd", "momentum=None"),
            "nesterov": Default(False, _OPTAX + "#optax.sgd"),
            "weight_decay": Default(0.0, _OPTAX + "#optax.sgd"),
        },
    },
}

#: optimizer settings and the optimizers whose update rule reads them (canonical names of
#: advisor.knowledge.setting_values.OPTIMIZERS); a setting the run's optimizer does not read (momentum given to Adam,
#: betas given to SGD) changes nothing, so a difference in it is no difference between the runs. From the update
#: rules as documented: torch.optim (SGD: momentum, dampening, nesterov; RMSprop: momentum; Adam/AdamW/NAdam/RAdam/
#: Adamax: betas, eps), keras.optimizers (SGD: momentum, nesterov; RMSprop: momentum; Adam family: beta_1, beta_2,
#: epsilon), MindSpore nn.Momentum / nn.SGD / nn.Adam / nn.AdamWeightDecay, LAMB (betas, eps), Lion (betas)
SETTING_READ_BY: dict[str, frozenset[str]] = {
    "momentum": frozenset({"sgd", "rmsprop", "lars"}),
    "nesterov": frozenset({"sgd", "lars"}),
    "dampening": frozenset({"sgd"}),
    "adam_beta1": frozenset({"adam", "adamw", "nadam", "radam", "adamax", "lamb", "lion"}),
    "adam_beta2": frozenset({"adam", "adamw", "nadam", "radam", "adamax", "lamb", "lion"}),
    "adam_epsilon": frozenset({"adam", "adamw", "nadam", "radam", "adamax", "lamb"}),
}


def read_by(setting: str, optimizer: object) -> bool:
    """Whether an optimizer (canonical name; unknown or None: assumed to read everything) reads ``setting``."""
    users = SETTING_READ_BY.get(setting)
    return users is None or not isinstance(optimizer, str) or optimizer not in _KNOWN_OPTIMIZERS or optimizer in users


_KNOWN_OPTIMIZERS = frozenset().union(*SETTING_READ_BY.values()) | {"adagrad", "adadelta", "adafactor", "ftrl"}

#: what a difference in each key typically does (quoted in hparam_diff facts)
EFFECTS: dict[str, str] = {
    "learning_rate": "sets the step size: too large diverges or oscillates, too small converges slowly",
    "batch_size": "changes gradient noise and the effective learning rate per sample",
    "global_batch_size": "changes gradient noise and the effective learning rate per sample",
    "epochs": "changes how long the model trains: too few stop before convergence",
    "max_steps": "changes how long the model trains",
    "optimizer": "a different update rule: tuned learning rates and decay do not transfer",
    "weight_decay": "changes regularisation strength: too much underfits, too little overfits",
    "weight_decay_mode": "L2 inside Adam is rescaled by the second moment, decoupled decay is not: same number, different regularisation",
    "momentum": "changes the effective step (lr/(1-momentum)) and smoothing of updates",
    "nesterov": "changes the momentum look-ahead",
    "adam_epsilon": "a larger epsilon damps the update of parameters with small gradient variance (acts like a smaller lr for them)",
    "adam_beta1": "changes the smoothing of the first moment",
    "adam_beta2": "changes the smoothing of the second moment; small values make Adam unstable",
    "batchnorm_decay": "changes how fast running statistics follow the batches: eval-mode outputs differ from train mode",
    "batchnorm_epsilon": "changes normalisation of low-variance channels",
    "layernorm_epsilon": "changes normalisation of low-variance features; a pretrained model expects its own value",
    "gelu_approximate": "tanh vs erf GELU: small per-layer differences that add up in deep networks",
    "linear_init": "a different initial weight scale changes early training and the reachable accuracy",
    "conv_init": "a different initial weight scale changes early training and the reachable accuracy",
    "weight_init": "a different initial weight distribution changes early training",
    "init_std": "a different initial weight scale changes activation magnitudes",
    "dropout": "changes regularisation strength",
    "label_smoothing": "changes the target distribution and the loss value",
    "loss": "a different loss function optimises a different objective",
    "loss_scale": "changes overflow/underflow behaviour of fp16 gradients",
    "loss_scale_mode": "static scales can overflow or underflow where dynamic ones adapt",
    "precision": "lower precision changes rounding and the range of representable gradients",
    "grad_clip_norm": "changes how large steps are clipped",
    "warmup_steps": "changes how large the first steps are",
    "warmup_ratio": "changes how large the first steps are",
    "lr_scheduler": "a different learning-rate schedule",
    "gradient_accumulation_steps": "changes the effective batch size",
    "world_size": "changes the effective batch size",
}

#: usual ranges of values; a value outside is "unusual" (used to say which side of a diff is odd)
TYPICAL_RANGES: dict[str, tuple[float, float]] = {
    "adam_epsilon": (1e-10, 1e-6),
    "adam_beta1": (0.8, 0.95),
    "adam_beta2": (0.95, 0.9999),
    "batchnorm_decay": (0.8, 0.999),
    "batchnorm_epsilon": (1e-6, 1e-2),
    "layernorm_epsilon": (1e-12, 1e-4),
    "momentum": (0.0, 0.99),
    "weight_decay": (0.0, 0.1),
    "dropout": (0.0, 0.6),
    "label_smoothing": (0.0, 0.2),
    "init_std": (1e-3, 0.2),
    "grad_clip_norm": (0.1, 100.0),
}


def canonical_framework(name: object) -> str | None:
    """'torch' -> 'pytorch', 'tf.keras' -> 'tensorflow', ...; None when unknown."""
    if not isinstance(name, str):
        return None
    return FRAMEWORK_ALIASES.get(name.strip().lower())


def defaults_for(framework: str, optimizer: str | None) -> dict[str, Default]:
    """Every default that applies to a run of ``framework`` using ``optimizer`` (if known)."""
    out = {key: table[framework] for key, table in LAYER_DEFAULTS.items() if framework in table}
    if optimizer is not None:
        out.update(OPTIMIZER_DEFAULTS.get(optimizer, {}).get(framework, {}))
    return out
