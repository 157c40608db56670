"""Checks of a hand-written training loop (PyTorch, Lightning's manual optimisation): the order of backward,
step and zero_grad, train/eval mode, gradient accumulation, a GradScaler, ``no_grad`` around the update."""

from __future__ import annotations

import ast

from advisor.extract.code.calls import (
    is_backward,
    is_direct_optimizer_step,
    is_grad_scaler,
    is_optimizer_step,
    is_reset,
    method,
    receiver,
)
from advisor.extract.code.hit import Hit
from advisor.extract.code.index import CodeIndex, dotted, last_name

#: functions a framework calls once per batch: their body is a loop body
PER_BATCH_FUNCTIONS = ("training_step",)


def _bodies(index: CodeIndex) -> list[ast.AST]:
    """The loops of the script and Lightning's per-batch ``training_step``: what runs once per batch."""
    out: list[ast.AST] = list(index.loops)
    for name in PER_BATCH_FUNCTIONS:
        out += index.functions.get(name, [])
    return out


def _training_bodies(index: CodeIndex) -> list[tuple[ast.AST, list[ast.AST]]]:
    """(loop, the nodes it runs) for each loop whose body runs a backward pass and an optimizer step."""
    out = []
    for loop in _bodies(index):
        nodes = list(index.loop_nodes(loop))
        calls = [n for n in nodes if isinstance(n, ast.Call)]
        if any(is_backward(c) for c in calls) and any(is_optimizer_step(index, c) for c in calls):
            out.append((loop, nodes))
    return out


def zero_grad(index: CodeIndex) -> list[Hit]:
    """A loop that steps the optimizer and never resets the gradients, or resets them between backward and step."""
    hits: dict[int, Hit] = {}
    for _, nodes in _training_bodies(index):
        steps = [n for n in nodes if isinstance(n, ast.Call) and is_optimizer_step(index, n)]
        resets = [n for n in nodes if is_reset(index, n)]
        if not resets:
            step = min(steps, key=lambda c: c.lineno)
            hits.setdefault(
                step.lineno,
                Hit(
                    "zero_grad_missing",
                    step.lineno,
                    f"{dotted(step.func)}() runs in a loop that never calls zero_grad(): each step adds this batch's "
                    "gradients to every earlier batch's",
                ),
            )
    for hit in _reset_before_step(index):
        hits.setdefault(hit.line, hit)
    return list(hits.values())


def _reset_before_step(index: CodeIndex) -> list[Hit]:
    """backward(), then zero_grad(), then step() in one block: the step applies gradients of zero."""
    hits = []
    for node in ast.walk(index.tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        kinds = [_statement_kind(index, s) for s in body]
        for i, kind in enumerate(kinds):
            if kind != "backward":
                continue
            rest = [k for k in kinds[i + 1 :] if k]
            if len(rest) >= 2 and rest[0] == "reset" and rest[1] == "step":
                reset = body[i + 1 + [j for j, k in enumerate(kinds[i + 1 :]) if k][0]]
                hits.append(
                    Hit(
                        "zero_grad_between_backward_and_step",
                        reset.lineno,
                        "the gradients are reset after backward() and before the optimizer's step(): every step "
                        "applies gradients of zero",
                    )
                )
    return hits


def _statement_kind(index: CodeIndex, stmt: ast.stmt) -> str:
    """'backward', 'reset' or 'step' for a statement that is one of them (an expression statement), else ''."""
    if isinstance(stmt, ast.Assign) and is_reset(index, stmt):
        return "reset"
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return ""
    call = stmt.value
    if is_backward(call):
        return "backward"
    if is_reset(index, call):
        return "reset"
    return "step" if is_optimizer_step(index, call) else ""


def eval_mode(index: CodeIndex) -> list[Hit]:
    """A training loop that switches the model to eval mode (for validation) and never back to train mode."""
    hits = []
    for loop in index.loops:
        nodes = list(index.loop_nodes(loop))
        calls = [n for n in nodes if isinstance(n, ast.Call)]
        if not any(is_backward(c) for c in calls):
            continue
        evals = [c for c in calls if _sets_mode(c) is False]
        if evals and not any(_sets_mode(c) is True for c in calls):
            first = min(evals, key=lambda c: c.lineno)
            hits.append(
                Hit(
                    "eval_mode_never_undone",
                    first.lineno,
                    f"{dotted(first.func)}() switches the model to eval mode inside the training loop and nothing "
                    "in the loop calls .train() again: after the first evaluation it trains with dropout off and "
                    "BatchNorm on its running statistics",
                )
            )
    return hits


def _sets_mode(call: ast.Call) -> bool | None:
    """True for ``model.train()``/``train(True)``, False for ``model.eval()``/``train(False)``, else None."""
    name = method(call)
    if name == "eval" and not call.args and not call.keywords and receiver(call) not in ("", "torch"):
        return False
    if name != "train" or not receiver(call):
        return None
    args = list(call.args) + [k.value for k in call.keywords if k.arg == "mode"]
    if not args:
        return True
    value = args[0].value if isinstance(args[0], ast.Constant) else None
    return None if value is None else bool(value)


def accumulation(index: CodeIndex) -> list[Hit]:
    """Gradient accumulation (a step only every k-th batch) with the loss never divided by k."""
    hits = []
    for loop, nodes in _training_bodies(index):
        gated = [
            n
            for n in nodes
            if isinstance(n, ast.If)
            and any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod) for b in ast.walk(n.test))
            and any(isinstance(c, ast.Call) and is_optimizer_step(index, c) for c in ast.walk(n))
        ]
        if not gated or _library_accumulates(nodes):
            continue
        for call in (n for n in nodes if isinstance(n, ast.Call) and is_backward(n)):
            if not _divided(index, loop, nodes, call):
                hits.append(
                    Hit(
                        "grad_accumulation_loss_not_divided",
                        call.lineno,
                        "the optimizer steps only every k-th batch (accumulation), and the loss passed to "
                        "backward() is not divided by k: each step is k times larger than the rate says",
                    )
                )
                break
    return hits


def _library_accumulates(nodes: list[ast.AST]) -> bool:
    """accelerate's ``with accelerator.accumulate(model):`` divides the loss itself."""
    return any(isinstance(n, ast.Call) and method(n) == "accumulate" for n in nodes)


def _divided(index: CodeIndex, loop: ast.AST, nodes: list[ast.AST], backward: ast.Call) -> bool:
    """Whether the loss that reaches ``backward`` was divided (``loss / k``, ``loss /= k``, ``loss = loss / k``)."""
    loss = backward.args[0] if backward.args else getattr(backward.func, "value", None)
    if isinstance(loss, ast.Call) and method(loss) == "scale" and loss.args:  # scaler.scale(loss).backward()
        loss = loss.args[0]
    if isinstance(loss, ast.BinOp) and isinstance(loss.op, ast.Div):
        return True
    name = dotted(loss) if loss is not None else ""
    for n in nodes:
        if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Div) and dotted(n.target) == name:
            return True
        if isinstance(n, ast.Assign) and any(dotted(t) == name for t in n.targets):
            if any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Div) for b in ast.walk(n.value)):
                return True
    return False


def grad_scaler(index: CodeIndex) -> list[Hit]:
    """A GradScaler that scales the loss, with the optimizer stepped directly: the gradients stay scaled."""
    scaled = [c for c in index.calls if method(c) == "scale" and is_grad_scaler(index, receiver(c))]
    if not scaled:
        return []
    if any(method(c) in ("unscale_", "step") and is_grad_scaler(index, receiver(c)) for c in index.calls):
        return []
    direct = [c for c in index.calls if is_direct_optimizer_step(index, c)]
    if not direct:
        return []
    step = direct[0]
    return [
        Hit(
            "grad_scaler_step_bypassed",
            step.lineno,
            f"the loss is multiplied by a GradScaler ({dotted(scaled[0].func)}), and {dotted(step.func)}() applies the "
            "gradients without scaler.step() or scaler.unscale_(): every update is the loss scale (65536 at the "
            "start) times too large, and overflowing steps are not skipped",
        )
    ]


def no_grad(index: CodeIndex) -> list[Hit]:
    """backward() inside ``with torch.no_grad():`` (or ``inference_mode``): no graph was recorded for it."""
    hits = []
    for node in ast.walk(index.tree):
        if not isinstance(node, (ast.With, ast.AsyncWith)):
            continue
        if not any(_disables_grad(item.context_expr) for item in node.items):
            continue
        for inner in index.body_nodes(list(node.body)):
            if isinstance(inner, ast.Call) and is_backward(inner):
                hits.append(
                    Hit(
                        "no_grad_around_training",
                        inner.lineno,
                        "backward() runs inside a torch.no_grad() (or inference_mode) block: the forward pass "
                        "recorded no graph, so no parameter gets a gradient",
                    )
                )
                break
    return hits


def _disables_grad(expr: ast.expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    name = last_name(expr.func)
    if name in ("no_grad", "inference_mode"):
        return not (expr.args and isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False)
    if name == "set_grad_enabled" and expr.args:
        return isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False
    return False
