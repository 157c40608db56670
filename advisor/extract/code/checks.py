"""The code checks: one row per check, with its detector, the mechanism in one sentence and its references.

A detector is a function ``CodeIndex -> list[Hit]`` over one script's tree. The rules that turn a finding into a
cause live in ``rules/`` (each check has a warning rule that fires on the finding alone and rules that make it a
cause beside the symptom it explains). Adding a check: a row here, its id in ``facts/code.py`` ``CodeCheckId``, a
detector, a real script that trips it and a twin that trains well (tests/extract/test_code_checks.py), its rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import get_args

from advisor.extract.code import keras, loop, loss, metrics
from advisor.extract.code.hit import Hit
from advisor.extract.code.index import CodeIndex
from advisor.facts.code import CodeCheckId

_TORCH_OPTIM = "https://pytorch.org/docs/stable/optim.html#taking-an-optimization-step"
_TORCH_ZERO = "https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html"
_CE = "https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html"
_NLL = "https://pytorch.org/docs/stable/generated/torch.nn.NLLLoss.html"
_AMP = "https://pytorch.org/docs/stable/notes/amp_examples.html"
_MODES = "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval"
_LOADER = "https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader"
_KERAS_LOSSES = "https://keras.io/api/losses/probabilistic_losses/"
_KERAS_FIT = "https://keras.io/api/models/model_training_apis/#fit-method"
_HUMBATOVA = "Humbatova et al., Taxonomy of Real Faults in Deep Learning Systems, ICSE 2020"
_NEURALINT = "Nikanjam et al., Automatic Fault Detection for Deep Learning Programs Using Graph Transformations (NeuraLint), TOSEM 2021"
_ISLAM = "Islam et al., A Comprehensive Study on Deep Learning Bug Characteristics, FSE 2019"


@dataclass(frozen=True)
class Check:
    id: str
    detect: Callable[[CodeIndex], list[Hit]]
    mechanism: str
    references: tuple[str, ...]


CHECKS: tuple[Check, ...] = (
    Check(
        "zero_grad_missing",
        loop.zero_grad,
        "PyTorch adds each backward pass's gradients to .grad; without zero_grad() every step applies the sum of "
        "all earlier batches' gradients, a step that keeps growing",
        (_TORCH_ZERO, _TORCH_OPTIM, _HUMBATOVA),
    ),
    Check(
        "zero_grad_between_backward_and_step",
        loop.zero_grad,
        "zero_grad() between backward() and step() erases the gradients the step was to apply: the weights never move",
        (_TORCH_OPTIM, _HUMBATOVA),
    ),
    Check(
        "eval_mode_never_undone",
        loop.eval_mode,
        "model.eval() switches dropout off and BatchNorm to its running statistics until model.train() is called",
        (_MODES, _HUMBATOVA),
    ),
    Check(
        "activation_before_logits_loss",
        loss.activation_into_loss,
        "CrossEntropyLoss (and Keras' from_logits=True) applies softmax itself; a softmax before it squeezes the "
        "logits into [0, 1], so the loss has a floor far above zero and small gradients",
        (_CE, _KERAS_LOSSES, _NEURALINT),
    ),
    Check(
        "probabilities_into_nll_loss",
        loss.activation_into_loss,
        "NLLLoss takes log-probabilities; given probabilities it returns minus a probability, a negative loss",
        (_NLL, _NEURALINT),
    ),
    Check(
        "logits_into_probability_loss",
        keras.logits_and_loss,
        "Keras' crossentropies take probabilities unless from_logits=True; logits are clipped and normalised as if "
        "they were probabilities",
        (_KERAS_LOSSES,),
    ),
    Check(
        "loss_input_not_differentiable",
        loss.not_differentiable,
        "argmax, round and detach cut the graph: no gradient flows back to the weights",
        (_ISLAM, _HUMBATOVA),
    ),
    Check(
        "integer_division_in_metric",
        metrics.integer_division,
        "integer division truncates a fraction below 1 to 0: an accuracy computed with it is 0 until it is 1",
        (_HUMBATOVA,),
    ),
    Check(
        "training_data_not_shuffled",
        metrics.unshuffled_loader,
        "a DataLoader does not shuffle unless told to; data stored by class then give batches of one class",
        (_LOADER, _HUMBATOVA),
    ),
    Check(
        "validation_split_of_unshuffled_data",
        keras.validation_split,
        "Keras takes validation_split from the end of the arrays before shuffling",
        (_KERAS_FIT,),
    ),
    Check(
        "loss_average_over_wrong_count",
        metrics.loss_average,
        "a sum of per-batch means divided by the sample count (or the reverse) logs a loss off by the batch size",
        (_HUMBATOVA,),
    ),
    Check(
        "class_loss_with_float_labels",
        loss.float_class_labels,
        "CrossEntropyLoss reads float targets as class probabilities, not class ids",
        (_CE,),
    ),
    Check(
        "regression_loss_for_classes",
        loss.regression_for_classes,
        "a regression loss on class ids fits their numeric values, not the classes",
        (_HUMBATOVA, _ISLAM),
    ),
    Check(
        "grad_accumulation_loss_not_divided",
        loop.accumulation,
        "accumulating k backward passes sums k gradients; without dividing the loss by k each step is k times larger",
        ("https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation", _TORCH_ZERO),
    ),
    Check(
        "grad_scaler_step_bypassed",
        loop.grad_scaler,
        "GradScaler multiplies the loss by its scale; only scaler.step() (or unscale_) divides the gradients back",
        (_AMP,),
    ),
    Check(
        "no_grad_around_training",
        loop.no_grad,
        "torch.no_grad() records no graph: backward() has nothing to differentiate",
        ("https://pytorch.org/docs/stable/generated/torch.no_grad.html",),
    ),
)

CHECK_BY_ID = {c.id: c for c in CHECKS}
#: detectors, each run once (one detector may report several checks)
DETECTORS: tuple[Callable[[CodeIndex], list[Hit]], ...] = tuple(dict.fromkeys(c.detect for c in CHECKS))

if set(CHECK_BY_ID) != set(get_args(CodeCheckId)):
    raise RuntimeError("advisor/extract/code/checks.py and facts/code.py CodeCheckId list different checks")
