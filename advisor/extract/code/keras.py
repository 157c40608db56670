"""Checks of a Keras model against its compiled loss: the last layer's activation and ``from_logits``, and the
validation split ``fit`` takes from data that were never shuffled."""

from __future__ import annotations

import ast

from advisor.extract.code.calls import method
from advisor.extract.code.hit import Hit
from advisor.extract.code.index import CodeIndex, constant, keyword, last_name

#: Keras losses that take probabilities unless ``from_logits=True``
CROSSENTROPIES = frozenset(
    {
        "sparse_categorical_crossentropy",
        "categorical_crossentropy",
        "binary_crossentropy",
        "SparseCategoricalCrossentropy",
        "CategoricalCrossentropy",
        "BinaryCrossentropy",
    }
)
PROBABILITY_ACTIVATIONS = frozenset({"softmax", "sigmoid"})
#: calls that shuffle arrays before ``fit`` (numpy, sklearn, random, pandas, tf.data)
SHUFFLES = frozenset({"shuffle", "permutation", "train_test_split", "sample", "permuted", "StratifiedShuffleSplit"})


def _output_layer(index: CodeIndex) -> ast.Call | None:
    """The last layer of the script's Keras model: the last item of ``Sequential([...])``, the last
    ``model.add(...)``, or the layer that makes a functional model's ``outputs``."""
    last: ast.Call | None = None
    for call in index.calls:
        name = last_name(call.func)
        if name == "Sequential" and call.args and isinstance(call.args[0], (ast.List, ast.Tuple)):
            items = call.args[0].elts
            if items and isinstance(items[-1], ast.Call):
                last = items[-1]
        elif method(call) == "add" and call.args and isinstance(call.args[0], ast.Call):
            if _is_layer(call.args[0]):
                last = call.args[0]
        elif name == "Model":
            out = keyword(call, "outputs") or (call.args[1] if len(call.args) > 1 else None)
            made = index.resolve(out) if out is not None else None
            if isinstance(made, ast.Call) and isinstance(made.func, ast.Call):  # Dense(10)(x)
                last = made.func
    return last


def _is_layer(call: ast.Call) -> bool:
    return last_name(call.func)[:1].isupper()


def _activation(layer: ast.Call) -> str:
    """'softmax', 'sigmoid', 'linear' (no activation) or '' (unknown) for a Keras output layer."""
    name = last_name(layer.func)
    if name in ("Softmax",):
        return "softmax"
    if name == "Activation" and layer.args:
        value = constant(layer.args[0])
        return value if isinstance(value, str) else ""
    if name != "Dense":
        return ""
    act = keyword(layer, "activation")
    if act is None and len(layer.args) >= 2:
        act = layer.args[1]
    if act is None:
        return "linear"
    value = constant(act)
    if value is None:
        return "linear"
    if isinstance(value, str):
        return value.lower()
    return last_name(act).lower()


def _compiled_loss(index: CodeIndex) -> tuple[ast.Call, str, bool] | None:
    """(the compile call, the loss's name, from_logits) of ``model.compile(loss=...)``."""
    for call in index.calls:
        if method(call) != "compile":
            continue
        loss = keyword(call, "loss")
        if loss is None:
            continue
        loss = index.resolve(loss)
        value = constant(loss)
        if isinstance(value, str):
            return call, value, False
        if isinstance(loss, ast.Call):
            logits = constant(keyword(loss, "from_logits"))
            return call, last_name(loss.func), logits is True
    return None


def logits_and_loss(index: CodeIndex) -> list[Hit]:
    """A softmax/sigmoid output with ``from_logits=True`` (applied twice), or a linear output with a crossentropy
    that expects probabilities (``from_logits`` left False)."""
    layer = _output_layer(index)
    compiled = _compiled_loss(index)
    if layer is None or compiled is None:
        return []
    call, loss, logits = compiled
    if loss not in CROSSENTROPIES:
        return []
    activation = _activation(layer)
    if logits and activation in PROBABILITY_ACTIVATIONS:
        return [
            Hit(
                "activation_before_logits_loss",
                call.lineno,
                f"the model's last layer applies {activation} and the loss {loss} is compiled with from_logits=True: "
                f"the loss applies {activation} again, so it cannot fall below a floor and the gradients shrink",
                "keras",
            )
        ]
    if not logits and activation == "linear":
        return [
            Hit(
                "logits_into_probability_loss",
                call.lineno,
                f"the model's last layer has no activation (it outputs logits) and {loss} is compiled without "
                "from_logits=True: Keras reads the logits as probabilities (clipped to [1e-7, 1]), so the loss "
                "is wrong and training stalls",
                "keras",
            )
        ]
    return []


def validation_split(index: CodeIndex) -> list[Hit]:
    """``fit(validation_split=...)`` on arrays the script never shuffles: Keras takes the last fraction as it is,
    before shuffling, so data sorted by class give a validation set of the last classes only."""
    if any(last_name(c.func) in SHUFFLES for c in index.calls):
        return []
    hits = []
    for call in index.calls:
        if method(call) != "fit" or keyword(call, "validation_split") is None:
            continue
        hits.append(
            Hit(
                "validation_split_of_unshuffled_data",
                call.lineno,
                "fit(validation_split=...) takes the last part of the arrays as they are (before any shuffling), "
                "and the script never shuffles them: data ordered by class or by source give a validation set "
                "unlike the training set",
                "keras",
            )
        )
    return hits
