"""What a call in a training script does, by the names the libraries give it (PyTorch, Keras, Lightning,
transformers): a backward pass, an optimizer step, a gradient reset, a loss, an activation. No judgement."""

from __future__ import annotations

import ast

from advisor.extract.code.index import CodeIndex, dotted, keyword, last_name

#: optimizer classes and factories (torch.optim, Keras, transformers, apex, bitsandbytes, timm)
OPTIMIZERS = frozenset(
    "SGD Adam AdamW RMSprop Adagrad Adadelta Adamax NAdam Nadam RAdam LBFGS SparseAdam ASGD Rprop Lion Adafactor "
    "LAMB Lamb FusedAdam FusedLAMB AdamW8bit Adam8bit PagedAdamW PagedAdamW8bit create_optimizer "
    "configure_optimizers get_optimizer build_optimizer optimizers".split()
)
#: losses that apply a softmax themselves (they take logits)
SOFTMAX_LOSSES = frozenset({"CrossEntropyLoss", "cross_entropy"})
#: losses that apply a sigmoid themselves
SIGMOID_LOSSES = frozenset({"BCEWithLogitsLoss", "binary_cross_entropy_with_logits"})
#: losses that take log-probabilities
NLL_LOSSES = frozenset({"NLLLoss", "nll_loss"})
#: losses for real-valued targets
REGRESSION_LOSSES = frozenset(
    {"MSELoss", "mse_loss", "L1Loss", "l1_loss", "SmoothL1Loss", "smooth_l1_loss", "HuberLoss", "huber_loss"}
)
#: losses of class targets (class ids)
CLASS_LOSSES = SOFTMAX_LOSSES | NLL_LOSSES
LOSSES = (
    SOFTMAX_LOSSES
    | SIGMOID_LOSSES
    | NLL_LOSSES
    | REGRESSION_LOSSES
    | {"BCELoss", "binary_cross_entropy", "KLDivLoss", "kl_div"}
)
SOFTMAX = frozenset({"softmax", "Softmax"})
SIGMOID = frozenset({"sigmoid", "Sigmoid"})
#: calls that give class ids, not something a gradient flows through
NOT_DIFFERENTIABLE = frozenset({"argmax", "argmin", "round", "detach", "numpy", "item", "long", "int"})
#: calls that turn a tensor into floats
FLOAT_CASTS = frozenset({"float", "double", "half", "bfloat16"})


def receiver(call: ast.Call) -> str:
    """``optimizer`` for ``optimizer.step()``; '' for a plain function call."""
    return dotted(call.func.value) if isinstance(call.func, ast.Attribute) else ""


def method(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def is_backward(call: ast.Call) -> bool:
    """``loss.backward()``, ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``,
    ``self.manual_backward(loss)``."""
    return method(call) in ("backward", "manual_backward")


def is_scheduler(index: CodeIndex, name: str) -> bool:
    made = index.constructor(name)
    lowered = name.lower()
    return "sched" in lowered or made.endswith(("LR", "Scheduler", "Warmup")) or "schedule" in made.lower()


def is_grad_scaler(index: CodeIndex, name: str) -> bool:
    return index.constructor(name) == "GradScaler" or name.rsplit(".", 1)[-1].lower() in ("scaler", "grad_scaler")


def is_optimizer(index: CodeIndex, name: str) -> bool:
    if not name or is_scheduler(index, name) or is_grad_scaler(index, name):
        return False
    made = index.constructor(name)
    tail = name.rsplit(".", 1)[-1].lower()
    return made in OPTIMIZERS or "optim" in tail or tail in ("opt", "opt_g", "opt_d") or tail.startswith("opt_")


def is_engine(index: CodeIndex, name: str) -> bool:
    """A DeepSpeed engine (``model_engine, ... = deepspeed.initialize(...)``): its step() resets the gradients."""
    return "engine" in name.lower() or index.constructor(name) == "initialize"


def is_optimizer_step(index: CodeIndex, call: ast.Call) -> bool:
    """``optimizer.step()`` or ``scaler.step(optimizer)``; a scheduler's step is not one."""
    if method(call) != "step":
        return False
    recv = receiver(call)
    return is_optimizer(index, recv) or is_grad_scaler(index, recv) or is_engine(index, recv)


def is_direct_optimizer_step(index: CodeIndex, call: ast.Call) -> bool:
    """``optimizer.step()`` called on the optimizer itself (not through a GradScaler)."""
    return method(call) == "step" and is_optimizer(index, receiver(call))


def is_reset(index: CodeIndex, node: ast.AST) -> bool:
    """A gradient reset: ``optimizer.zero_grad()``, ``model.zero_grad()``, ``p.grad = None``, ``p.grad.zero_()``;
    a DeepSpeed engine's step (it resets them itself)."""
    if isinstance(node, ast.Call):
        name = method(node)
        if name == "zero_grad":
            return True
        if name in ("zero_", "detach_", "fill_") and ".grad" in "." + receiver(node):
            return True
        return name == "step" and is_engine(index, receiver(node))
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets)
    return False


def is_activation(index: CodeIndex, expr: ast.expr, kinds: frozenset[str]) -> bool:
    """Whether ``expr`` is a call of a softmax (``kinds`` = SOFTMAX) or sigmoid: ``F.softmax(x)``,
    ``x.softmax(-1)``, ``torch.sigmoid(x)``, or an instance of ``nn.Softmax`` (``self.softmax(x)``)."""
    if not isinstance(expr, ast.Call):
        return False
    return last_name(expr.func) in kinds or index.constructor(dotted(expr.func)) in kinds


def target_arg(call: ast.Call) -> ast.expr | None:
    """The target of a loss call: its second argument, or ``target=``."""
    if len(call.args) >= 2:
        return call.args[1]
    return keyword(call, "target")


def input_arg(call: ast.Call) -> ast.expr | None:
    """The prediction a loss call takes: its first argument, or ``input=``."""
    if call.args:
        return call.args[0]
    return keyword(call, "input")
