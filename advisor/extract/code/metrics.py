"""Checks of how the script measures its training: accuracy with integer division, a loss averaged over the
wrong count, training batches in a fixed order."""

from __future__ import annotations

import ast

from advisor.extract.code.calls import method
from advisor.extract.code.hit import Hit
from advisor.extract.code.index import CodeIndex, constant, dotted, keyword, last_name, names_in

#: words in a name that say it holds a score
SCORE_WORDS = ("acc", "precision", "recall", "f1", "score", "iou", "dice", "metric")
#: words in a name that count correct predictions
CORRECT_WORDS = ("correct", "hits", "right", "match", "tp")
#: words that say a data set is not the training set
HELD_OUT_WORDS = ("val", "test", "eval", "dev", "holdout")


def _score_context(index: CodeIndex, node: ast.AST) -> bool:
    """Whether ``node`` computes a score: it is assigned to a score's name, or divides a count of correct ones."""
    parent = index.parent.get(id(node))
    while isinstance(parent, (ast.BinOp, ast.Call, ast.UnaryOp)):
        parent = index.parent.get(id(parent))
    targets: list[ast.AST] = []
    if isinstance(parent, ast.Assign):
        targets = list(parent.targets)
    elif isinstance(parent, (ast.AugAssign, ast.AnnAssign)):
        targets = [parent.target]
    named = {n for t in targets for n in names_in(t)}
    if any(w in n for n in named for w in SCORE_WORDS):
        return True
    left = node.left if isinstance(node, ast.BinOp) else node
    return any(w in n for n in names_in(left) for w in CORRECT_WORDS)


def integer_division(index: CodeIndex) -> list[Hit]:
    """``correct // total`` or ``int(correct / total)`` for a score: 0 unless every prediction is right."""
    hits = []
    for node in ast.walk(index.tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and _score_context(index, node):
            hits.append(
                Hit(
                    "integer_division_in_metric",
                    node.lineno,
                    "the score is computed with integer division (//): it is 0 until every prediction is right",
                )
            )
        elif (
            isinstance(node, ast.Call)
            and last_name(node.func) == "int"
            and node.args
            and isinstance(node.args[0], ast.BinOp)
            and isinstance(node.args[0].op, ast.Div)
            and _score_context(index, node.args[0])
        ):
            hits.append(
                Hit(
                    "integer_division_in_metric",
                    node.lineno,
                    "the score is truncated to an integer (int(a / b)): it is 0 until every prediction is right",
                )
            )
    return hits


def loss_average(index: CodeIndex) -> list[Hit]:
    """A running loss of per-batch means divided by the number of samples (too small by the batch size), or
    of per-sample sums divided by the number of batches (too large by it)."""
    hits = []
    for node in ast.walk(index.tree):
        if not (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and _holds_loss(node.value)):
            continue
        total = dotted(node.target)
        weighted = isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Mult)
        for div in ast.walk(index.tree):
            if not (isinstance(div, ast.BinOp) and isinstance(div.op, ast.Div) and dotted(div.left) == total):
                continue
            counts_samples = _counts_samples(div.right)
            if counts_samples is None or counts_samples == weighted:
                continue
            wrong = "too small" if counts_samples else "too large"
            hits.append(
                Hit(
                    "loss_average_over_wrong_count",
                    div.lineno,
                    f"the logged loss adds {'per-sample sums' if weighted else 'per-batch means'} and divides by the "
                    f"number of {'samples' if counts_samples else 'batches'}: it is {wrong} by the batch size",
                )
            )
            break
    return hits


def _holds_loss(expr: ast.expr) -> bool:
    return any("loss" in n for n in names_in(expr)) and any(
        isinstance(n, ast.Call) and method(n) == "item" for n in ast.walk(expr)
    )


def _counts_samples(expr: ast.expr) -> bool | None:
    """True for ``len(loader.dataset)``/``len(train_ds)``, False for ``len(loader)``; None when unclear."""
    if not (isinstance(expr, ast.Call) and last_name(expr.func) == "len" and expr.args):
        return None
    names = names_in(expr.args[0])
    if any("dataset" in n or n.endswith(("_ds", "_data", "_set")) for n in names):
        return True
    if any("loader" in n or "batches" in n for n in names):
        return False
    return None


def unshuffled_loader(index: CodeIndex) -> list[Hit]:
    """A DataLoader of the training set without ``shuffle=True`` (and no sampler): batches in the data's order."""
    hits = []
    for call in index.calls:
        if last_name(call.func) != "DataLoader":
            continue
        data = call.args[0] if call.args else keyword(call, "dataset")
        if data is None or keyword(call, "sampler") is not None or keyword(call, "batch_sampler") is not None:
            continue
        names = names_in(data)
        if not any("train" in n for n in names) or any(w in n for n in names for w in HELD_OUT_WORDS):
            continue
        shuffle = keyword(call, "shuffle")
        if shuffle is None and len(call.args) >= 3:
            shuffle = call.args[2]
        if shuffle is not None and constant(shuffle) is not False:
            continue
        how = "shuffle=False" if shuffle is not None else "no shuffle argument (its default is False)"
        hits.append(
            Hit(
                "training_data_not_shuffled",
                call.lineno,
                f"the training DataLoader has {how}: every epoch sees the batches in the data set's order, so a "
                "set stored by class trains on one class at a time",
            )
        )
    return hits
