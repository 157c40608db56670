"""The run's model description against the baseline's, layer by layer -> one ``structure_diff`` fact (issue 27).

Both sides' layers (``model_layer`` facts, from ``print(model)``, a Keras summary or config, a MindSpore
``print(net)``) are reduced to what the computation depends on: the layer's role (dense, conv, recurrent,
embedding, activation, dropout, norm, pool), the width of weighted layers, the activation, the dropout rate.
An activation a layer applies itself (Keras ``Dense(64, activation="relu")``, MindSpore ``Dense(...,
activation=...)``) counts as a separate activation layer, as PyTorch prints it, so that a Keras port of a
PyTorch model is not told it lost its activations. Layer names, input/reshape/other layers are not compared
(they differ between frameworks by design). The two role sequences are aligned (difflib, no junk heuristic)
and the differences named with the run's (or the baseline's) layer names.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from advisor.facts.base import Source
from advisor.facts.model import ModelLayer, StructureDiff

#: roles compared; the others (input, reshape, other) differ between frameworks without changing the model
COMPARED = ("dense", "conv", "recurrent", "embedding", "activation", "dropout", "norm", "pool")
#: differences named in the fact's text, at most
MAX_NAMED = 5


@dataclass(frozen=True)
class _Unit:
    role: str
    name: str
    units: int | None = None
    activation: str | None = None
    rate: float | None = None
    layer_type: str = ""


def _units(layers: list[ModelLayer], unseen: frozenset[str] = frozenset()) -> list[_Unit]:
    """The compared units of one side; ``unseen``: what the other side's description cannot show, as roles
    ("dropout": an inference graph has none; "norm", "pool", ...: a list of layer widths in a config names none)
    or "batchnorm" (an inference graph folds a BatchNorm into the conv before it)."""
    out: list[_Unit] = []
    for la in sorted(layers, key=lambda la: la.index):
        if la.role not in COMPARED or la.role in unseen:
            continue
        if (
            la.role == "norm"
            and "batchnorm" in unseen
            and "batch" in la.layer_type.lower()
            and out
            and out[-1].role in ("conv", "dense")
        ):
            continue
        if la.role == "activation":
            out.append(_Unit("activation", la.name, activation=la.activation))
            continue
        out.append(_Unit(la.role, la.name, units=la.units, rate=la.dropout_rate, layer_type=la.layer_type))
        if (
            la.role in ("dense", "conv", "recurrent")
            and la.activation not in (None, "linear")
            and "activation" not in unseen
        ):
            out.append(_Unit("activation", f"{la.name}.activation", activation=la.activation))
    return out


def _what(u: _Unit) -> str:
    if u.role == "activation":
        return f"'{u.name}' ({u.activation or 'activation'})"
    if u.role == "dropout":
        return f"'{u.name}' (dropout{f' {u.rate:g}' if u.rate is not None else ''})"
    return f"'{u.name}' ({u.role}{f', {u.units} units' if u.units is not None else ''})"


#: layers per side above which the alignment is difflib's (fast, greedy) instead of the exact one
MAX_EXACT = 600


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib-style opcodes of an alignment of ``a`` and ``b`` with the most matches (a longest common
    subsequence; difflib's longest-block-first heuristic misaligns sequences of a few repeated tokens, which
    is what a model's roles are: dense, activation, dense, activation ...)."""
    n, m = len(a), len(b)
    if n > MAX_EXACT or m > MAX_EXACT:
        return [
            (str(t), i1, i2, j1, j2)
            for t, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        ]
    best = [[0] * (m + 1) for _ in range(n + 1)]  # best[i][j]: matches of a[i:] and b[j:]
    for i in range(n - 1, -1, -1):
        row, nxt = best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = nxt[j + 1] + 1 if a[i] == b[j] else max(nxt[j], row[j + 1])
    steps: list[str] = []
    i = j = 0
    while i < n or j < m:
        if i < n and j < m and a[i] == b[j] and best[i][j] == best[i + 1][j + 1] + 1:
            steps.append("equal")
            i, j = i + 1, j + 1
        elif j < m and (i == n or best[i][j + 1] >= best[i + 1][j]):
            steps.append("insert")
            j += 1
        else:
            steps.append("delete")
            i += 1
    out: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    for step in steps:
        di, dj = (1, 1) if step == "equal" else (0, 1) if step == "insert" else (1, 0)
        if out and out[-1][0] == step:
            tag, i1, i2, j1, j2 = out[-1]
            out[-1] = (tag, i1, i2 + di, j1, j2 + dj)
        else:
            out.append((step, i, i + di, j, j + dj))
        i, j = i + di, j + dj
    return out


def inference_graph_hides(layers: list[ModelLayer]) -> frozenset[str]:
    """What an ONNX graph exported for inference does not show (``torch.onnx.export`` in eval mode drops
    Dropout and, with constant folding, folds a BatchNorm into the conv or linear before it): "dropout" when it
    has no Dropout node, "batchnorm" when it has no BatchNormalization."""
    hidden = set()
    if not any(la.role == "dropout" for la in layers):
        hidden.add("dropout")
    if not any("batch" in la.layer_type.lower() for la in layers if la.role == "norm"):
        hidden.add("batchnorm")
    return frozenset(hidden)


def width_list_hides(activations_known: bool) -> frozenset[str]:
    """What a list of layer widths in a hyper-parameter file (``hidden_sizes: [128, 64]``, ``layers: [...]``)
    cannot show: every role but the weighted layers it lists, and their activations unless the file states them.
    A model print beside it has its norms, dropouts and pools compared with nothing, not called missing."""
    hidden = set(COMPARED) - {"dense", "activation"}
    if not activations_known:
        hidden.add("activation")
    return frozenset(hidden)


def compare_structures(
    run: list[ModelLayer],
    base: list[ModelLayer],
    run_hides: frozenset[str] = frozenset(),
    base_hides: frozenset[str] = frozenset(),
) -> StructureDiff | None:
    """The differences between the two sides' layers; None when either side has no comparable layer.

    ``run_hides`` / ``base_hides``: what that side's description cannot show (an inference ONNX graph's,
    inference_graph_hides); the other side's layers of that kind are left out of the comparison."""
    shared = (run_hides | base_hides) & frozenset(COMPARED)  # a role one side cannot show is compared on neither
    r, b = _units(run, base_hides | shared), _units(base, run_hides | shared)
    if not r or not b:
        return None
    missing: list[str] = []
    extra: list[str] = []
    widths: list[str] = []
    acts: list[str] = []
    rates: list[str] = []
    first: str | None = None
    for tag, i1, i2, j1, j2 in _opcodes([u.role for u in r], [u.role for u in b]):
        if tag == "equal":
            for ru, bu in zip(r[i1:i2], b[j1:j2]):
                if ru.units is not None and bu.units is not None and ru.units != bu.units:
                    into, text = widths, f"'{ru.name}' has {ru.units} units, the baseline's '{bu.name}' {bu.units}"
                elif ru.role == "activation" and ru.activation and bu.activation and ru.activation != bu.activation:
                    into, text = acts, f"'{ru.name}' is {ru.activation}, the baseline's '{bu.name}' {bu.activation}"
                elif ru.role == "dropout" and ru.rate is not None and bu.rate is not None and ru.rate != bu.rate:
                    into, text = rates, f"'{ru.name}' drops {ru.rate:g}, the baseline's '{bu.name}' {bu.rate:g}"
                else:
                    continue
                into.append(text)
                first = first or text
            continue
        if tag in ("insert", "replace"):
            missing += [f"the baseline's {_what(u)}" for u in b[j1:j2]]
            first = first or f"the run has no counterpart of the baseline's {_what(b[j1])}"
        if tag in ("delete", "replace"):
            extra += [_what(u) for u in r[i1:i2]]
            first = first or f"the run's {_what(r[i1])} has no counterpart in the baseline"
    count = len(missing) + len(extra) + len(widths) + len(acts) + len(rates)
    parts = []
    for label, items in (
        ("missing in the run", missing),
        ("only in the run", extra),
        ("widths", widths),
        ("activations", acts),
        ("dropout rates", rates),
    ):
        if items:
            more = f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else ""
            parts.append(f"{label}: " + "; ".join(items[:MAX_NAMED]) + more)
    src = next((la.source for la in run if la.source is not None), None)
    return StructureDiff(
        run_layers=len(r),
        baseline_layers=len(b),
        differences=count,
        missing_count=len(missing),
        extra_count=len(extra),
        width_changes=len(widths),
        activation_changes=len(acts),
        dropout_changes=len(rates),
        first_difference=first,
        text="; ".join(parts) if parts else "the same layers, widths, activations and dropout rates",
        side="run",
        source=src if isinstance(src, Source) else None,
    )
