"""Checks of what a loss receives: an activation the loss applies again, probabilities where it wants logits or
log-probabilities, class ids it cannot differentiate, labels of the wrong kind (PyTorch and Keras)."""

from __future__ import annotations

import ast

from advisor.extract.code.calls import (
    CLASS_LOSSES,
    FLOAT_CASTS,
    LOSSES,
    NLL_LOSSES,
    NOT_DIFFERENTIABLE,
    REGRESSION_LOSSES,
    SIGMOID,
    SIGMOID_LOSSES,
    SOFTMAX,
    SOFTMAX_LOSSES,
    input_arg,
    is_activation,
    method,
    target_arg,
)
from advisor.extract.code.hit import Hit
from advisor.extract.code.index import CodeIndex, dotted, last_name


def _loss_calls(index: CodeIndex, kinds: frozenset[str] | set[str]) -> list[tuple[ast.Call, str, ast.expr]]:
    """(call, loss kind, what its prediction holds) for every call of a loss of ``kinds`` given a prediction."""
    out = []
    for call in index.calls:
        kind = index.callee(call)
        pred = input_arg(call) if kind in kinds else None
        if pred is not None:
            out.append((call, kind, index.resolve(pred)))
    return out


def activation_into_loss(index: CodeIndex) -> list[Hit]:
    """A softmax fed to a loss that applies softmax itself (CrossEntropyLoss) or to one that wants log-probabilities
    (NLLLoss); a sigmoid fed to BCEWithLogitsLoss. Seen at the call, or in what the model's forward returns."""
    hits = []
    for call, kind, pred in _loss_calls(index, SOFTMAX_LOSSES | NLL_LOSSES | SIGMOID_LOSSES):
        wanted = SIGMOID if kind in SIGMOID_LOSSES else SOFTMAX
        if isinstance(pred, ast.Call) and is_activation(index, pred, wanted):
            hits.append(_activation_hit(kind, call.lineno, dotted(pred.func)))
    if hits:
        return hits
    return _model_returns_activation(index)


def _activation_hit(loss: str, line: int, activation: str, where: str = "") -> Hit:
    if loss in NLL_LOSSES:
        return Hit(
            "probabilities_into_nll_loss",
            line,
            f"{loss} is given the output of {activation}{where} (probabilities): it expects log-probabilities "
            "(log_softmax), so the loss it reports is minus a probability, negative and unable to train the model",
        )
    return Hit(
        "activation_before_logits_loss",
        line,
        f"{loss} applies its own {'sigmoid' if loss in SIGMOID_LOSSES else 'softmax'} and is given the output of "
        f"{activation}{where}: the activation is applied twice, the loss cannot fall below a floor and the "
        "gradients shrink",
    )


def _model_returns_activation(index: CodeIndex) -> list[Hit]:
    """A model class whose forward returns a softmax (or an ``nn.Sequential`` ending in ``nn.Softmax``), in a
    script that trains it with a loss applying softmax again."""
    losses = {k for _, k, _ in _loss_calls(index, SOFTMAX_LOSSES | NLL_LOSSES)}
    losses |= {index.constructor(n) for n in index.bindings} & (SOFTMAX_LOSSES | NLL_LOSSES)
    if not losses:
        return []
    loss = sorted(losses)[0]
    for cls in index.classes.values():
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "forward":
                ret = _returned(fn)
                if ret is not None and is_activation(index, index.resolve(ret), SOFTMAX):
                    return [_activation_hit(loss, ret.lineno, "softmax", f" (the return of {cls.name}.forward)")]
    for call in index.calls:
        if last_name(call.func) == "Sequential" and call.args:
            tail = call.args[-1]
            if isinstance(tail, ast.Call) and last_name(tail.func) == "Softmax":
                return [_activation_hit(loss, tail.lineno, "nn.Softmax", " (the last layer of the nn.Sequential)")]
    return []


def _returned(fn: ast.FunctionDef) -> ast.expr | None:
    for stmt in reversed(fn.body):
        if isinstance(stmt, ast.Return):
            return stmt.value
    return None


def not_differentiable(index: CodeIndex) -> list[Hit]:
    """A loss given class ids (``argmax``) or a detached tensor: no gradient reaches the model."""
    hits = []
    for call, kind, pred in _loss_calls(index, LOSSES):
        name = _blocking_call(pred)
        if name:
            hits.append(
                Hit(
                    "loss_input_not_differentiable",
                    call.lineno,
                    f"{kind} is given the result of .{name}() as its prediction: no gradient flows through it, so "
                    "backward() fails or leaves the model's weights where they are",
                )
            )
    return hits


def _blocking_call(expr: ast.expr) -> str:
    """The call that cuts the gradient in a chain like ``out.argmax(1).float()``; '' when none."""
    node: ast.AST = expr
    while isinstance(node, ast.Call):
        name = last_name(node.func)
        if name in NOT_DIFFERENTIABLE:
            return name
        if isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif node.args:
            node = node.args[0]
        else:
            break
    return ""


def float_class_labels(index: CodeIndex) -> list[Hit]:
    """A loss of class ids (CrossEntropyLoss, NLLLoss) given labels cast to float."""
    hits = []
    for call, kind, _ in _loss_calls(index, CLASS_LOSSES):
        target = target_arg(call)
        if isinstance(target, ast.Call) and method(target) in FLOAT_CASTS:
            hits.append(
                Hit(
                    "class_loss_with_float_labels",
                    call.lineno,
                    f"{kind} is given labels cast with .{method(target)}(): it reads float targets as class "
                    "probabilities, not class ids (a shape error, or a loss of the wrong problem)",
                )
            )
    return hits


def regression_for_classes(index: CodeIndex) -> list[Hit]:
    """A regression loss (MSE, L1) in a script that scores the model by argmax accuracy: class ids as numbers."""
    regression = [(call, kind) for call, kind, _ in _loss_calls(index, REGRESSION_LOSSES)]
    if not regression:
        made = [v for n in index.bindings for v in index.bindings[n] if isinstance(v, ast.Call)]
        regression = [(v, last_name(v.func)) for v in made if last_name(v.func) in REGRESSION_LOSSES]
    if not regression or not _argmax_accuracy(index):
        return []
    call, kind = regression[0]
    return [
        Hit(
            "regression_loss_for_classes",
            call.lineno,
            f"{kind} trains a model that the script scores by argmax accuracy: class ids are fitted as numbers, "
            "so class 9 is 'far' from class 1 and the loss can fall while the accuracy does not rise",
        )
    ]


def _argmax_accuracy(index: CodeIndex) -> bool:
    """``(out.argmax(1) == y)``, ``out.round() == y`` or ``torch.max(out, 1)[1] == y``: class predictions compared
    with labels."""
    for node in ast.walk(index.tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq) for op in node.ops):
            for side in [node.left, *node.comparators]:
                side = index.resolve(side)
                if isinstance(side, ast.Call) and last_name(side.func) in ("argmax", "round"):
                    return True
                if isinstance(side, ast.Subscript) and isinstance(side.value, ast.Call):
                    if last_name(side.value.func) == "max":
                        return True
    return False
