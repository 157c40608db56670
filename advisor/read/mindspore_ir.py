"""A MindSpore graph IR dump (``*.ir``, written by ``set_context(save_graphs=True)``) -> its layers, as a model
description (format ``mindspore_ir``). No judgement.

Each node of the IR text is three lines the reader uses::

    %1(equiv_8_x) = PrimFunc_MatMul(%para1_inputs0, %0, Bool(0), Bool(1)) {instance name: matmul} ...
        : (<Tensor[Float32], (2, 8)>, <Tensor[Float32], (16, 8)>, ...) -> (<Tensor[Float32], (2, 16)>)
        # Fullname with scope: (Default/network-WithLossCell/_backbone-Net/fc1-Dense/MatMul-op0)

The scope names the cells the node belongs to, each as ``attribute-CellClass``. Forward nodes are under
``Default/`` (the backward pass is under ``Gradients/``); with a ``WithLossCell`` the model is the cell under
``_backbone-``, and the loss and optimizer cells are left out. A layer is the outermost cell whose class is a
layer (Dense, Conv2d, ReLU, LayerNorm, Dropout, ...; advisor.read.model_desc.role_of), so the GELU that
``Dense(activation="gelu")`` applies in its ``activation-GELU`` sub-cell is that Dense's activation; nodes of
consecutive runs of one cell are one layer. A dense layer's units are the last axis of its MatMul's output, a
convolution's the channel axis of its Conv2D's (``out_channel``); a Dropout's rate is 1 - its keep_prob.

A graph's ~100 IR files (one per compile pass) describe the same network: the last ``*validate*.ir`` that is not
empty is read (the front end's final graph, which still has every cell's scope), else the largest ``*.ir`` that has
scopes; ``ir_candidates`` gives them in that order, and the caller reads the next one where a file gives no layer.

Reading is bounded: lines of at most MAX_LINE_CHARS (longer ones are skipped, read through in pieces), at most
MAX_IR_BYTES of a file, and a run of NUL bytes (a sparse file's zeros) ends the read, each with a note.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

from advisor.read.bounded import capped, numbered_bounded_lines, padding_note
from advisor.read.model_desc import ModelDescription, RawLayer, canonical_activation, role_of

#: lines read of one IR file at most (a description longer than this is not one compared layer by layer)
MAX_LINES = 20_000_000
#: a line longer than this is skipped (a node's line lists its inputs and shapes: thousands of characters)
MAX_LINE_CHARS = 1 << 20
#: bytes read of one IR file at most (a big network's validate pass is tens of MB)
MAX_IR_BYTES = 1 << 30
#: IR files read at most to find one with layers (the last validate pass may be empty)
MAX_IR_TRIES = 3

_NODE = re.compile(r"^\s+%\d+\([^)]*\) = (?:PrimFunc_)?(\w+)\((.*)$")
#: a node's shapes line: ``: (<inputs>) -> (<outputs>)``; read by ``_output_shapes``, not by a regex (a line of
#: many ``) -> (`` would make a backtracking one quadratic)
_SHAPES_START = re.compile(r"^\s+: \(")
_ARROW = ") -> ("
_SCOPE = re.compile(r"^\s+# Fullname with scope: \((\S+)\)")
_DIMS = re.compile(r"<Tensor\[\w+\], \(([\d, ]*)\)>")
_KEEP = re.compile(r"keep_prob: F32\(([\d.eE+-]+)\)")
_FIRST_F32 = re.compile(r"F32\(([\d.eE+-]+)\)")
#: nodes that move values or state, not computations of a layer
_BOOKKEEPING = {"Load", "UpdateState", "MakeTuple", "TupleGetItem", "Depend", "Return", "Partial", "Switch"}
_CONV_OPS = ("Conv2D", "Conv3D", "Conv1D", "Conv2DTranspose", "Conv2DBackpropInput", "Conv3DTranspose")


def ir_candidates(files: list[Path]) -> list[Path]:
    """The IR files of a folder's dumps that may describe the model, best first: the validate passes from the last,
    then the other files from the largest; empty files left out."""
    sizes = {f: _size(f) for f in files}
    kept = [f for f in files if sizes[f]]
    validate = sorted((f for f in kept if "validate" in f.name), key=lambda f: f.name, reverse=True)
    others = sorted((f for f in kept if "validate" not in f.name), key=lambda f: (sizes[f], f.name), reverse=True)
    return validate + others


def pick_ir(files: list[Path]) -> Path | None:
    """The IR file of a folder's dumps that describes the model (the first of ``ir_candidates``)."""
    return next(iter(ir_candidates(files)), None)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _output_shapes(line: str) -> str | None:
    """The outputs of a shapes line ``: (<inputs>) -> (<outputs>)``, or None for another line. In linear time: the
    outputs follow the last arrow, and the line (trailing blanks aside) ends with their ``)``."""
    start = _SHAPES_START.match(line)
    body = line.rstrip()
    if start is None or not body.endswith(")"):
        return None
    arrow = body.rfind(_ARROW, start.end() - 1)
    if arrow < start.end() - 1:
        return None
    return body[arrow + len(_ARROW) : -1]


def _cells(scope: str) -> list[tuple[str, str]] | None:
    """(attribute, class) of the model's cells on a forward node's scope, outermost first; None: not the model's."""
    parts = scope.split("/")
    if parts[0] != "Default":
        return None
    cells = [tuple(p.split("-", 1)) for p in parts[1:-1] if "-" in p]
    names = [c[0] for c in cells]
    if "_backbone" in names:
        cells = cells[names.index("_backbone") + 1 :]
    elif any(n in ("_loss_fn", "optimizer") for n in names):
        return None
    return [(a, b) for a, b in cells]  # type: ignore[misc]


def _layer_of(cells: list[tuple[str, str]]) -> tuple[str, str] | None:
    for i, (_name, cls) in enumerate(cells):
        if role_of(cls) != "other":
            return ".".join(a for a, _ in cells[: i + 1]), cls
    return (".".join(a for a, _ in cells), cells[-1][1]) if cells else None


def read_ir(path: Path, shown: str = "", notes: list[str] | None = None) -> ModelDescription:
    """The layers of one IR file. Raises OSError; a file with no forward node of a cell gives no layers. ``notes``
    receives what bounded the read (lines skipped, a cut, NUL padding)."""
    desc = ModelDescription(format="mindspore_ir", framework="mindspore", path=shown or path.name)
    notes = notes if notes is not None else []
    current: tuple[str, str] | None = None
    layer: RawLayer | None = None
    op = args = shapes = ""
    for line in _ir_lines(path, notes):
        m = _NODE.match(line)
        if m:
            op, args, shapes = m.group(1), m.group(2), ""
            continue
        outputs = _output_shapes(line)
        if outputs is not None:
            shapes = outputs
            continue
        sc = _SCOPE.match(line)
        if not sc or not op or op in _BOOKKEEPING:
            continue
        cells = _cells(sc.group(1))
        found = _layer_of(cells) if cells else None
        if found is None:
            continue
        if found != current:
            current = found
            layer = RawLayer(found[0], found[1], role_of(found[1]))
            if layer.role == "activation":
                layer.activation = canonical_activation(found[1])
            desc.layers.append(layer)
        assert layer is not None
        _fill(layer, op, args, shapes)
        op = ""
    return desc


def _ir_lines(path: Path, notes: list[str]) -> Iterator[str]:
    """The lines of an IR file, bounded (MAX_LINE_CHARS, MAX_IR_BYTES, MAX_LINES, NUL padding), with notes."""
    long_lines: list[int] = []
    padding: list[int] = []
    with open(path, "rb") as raw:
        limited, cap = capped(raw, MAX_IR_BYTES)  # type: ignore[arg-type]
        text = io.TextIOWrapper(limited, encoding="utf-8", errors="replace")
        for n, line in numbered_bounded_lines(text, MAX_LINE_CHARS, long_lines.append, padding.append):
            if n > MAX_LINES:
                notes.append(f"read the first {MAX_LINES:,} lines only")
                break
            yield line
    if long_lines:
        notes.append(
            f"{len(long_lines)} line(s) longer than {MAX_LINE_CHARS:,} characters skipped (first: {long_lines[0]})"
        )
    notes += [padding_note(line) for line in padding]
    if cap.capped:
        notes.append(f"read the first {MAX_IR_BYTES >> 30} GiB only (advisor's limit per IR file)")


def _fill(layer: RawLayer, op: str, args: str, shapes: str) -> None:
    """What one node of a layer says of it: its width, its fused activation, its dropout rate."""
    dims = [[int(d) for d in g.split(",") if d.strip()] for g in _DIMS.findall(shapes)]
    out = dims[0] if dims else []
    if layer.role == "dense" and op in ("MatMul", "BatchMatMul", "Dense") and out and layer.units is None:
        layer.units = out[-1]
    elif layer.role == "conv" and op in _CONV_OPS and len(out) > 1 and layer.units is None:
        layer.units = out[1]
    elif layer.role in ("dense", "conv") and op not in ("BiasAdd", "Add", "Reshape", "Cast"):
        act = canonical_activation(op)
        if act is not None and role_of(op) == "activation":
            layer.activation = act
    if layer.role == "dropout" and op.startswith("Dropout"):
        keep = _KEEP.search(args) or _FIRST_F32.search(args)
        if keep is not None:
            layer.dropout_rate = round(1.0 - float(keep.group(1)), 6)
