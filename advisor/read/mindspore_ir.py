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

A graph's ~100 IR files (one per compile pass) describe the same network: the last ``*validate*.ir`` is read
(the front end's final graph, which still has every cell's scope), else the largest ``*.ir`` that has scopes.
"""

from __future__ import annotations

import re
from pathlib import Path

from advisor.read.model_desc import ModelDescription, RawLayer, canonical_activation, role_of

#: lines read of one IR file at most (a description longer than this is not one compared layer by layer)
MAX_LINES = 20_000_000

_NODE = re.compile(r"^\s+%\d+\([^)]*\) = (?:PrimFunc_)?(\w+)\((.*)$")
_SHAPES = re.compile(r"^\s+: \(.*\) -> \((.*)\)\s*$")
_SCOPE = re.compile(r"^\s+# Fullname with scope: \((\S+)\)")
_DIMS = re.compile(r"<Tensor\[\w+\], \(([\d, ]*)\)>")
_KEEP = re.compile(r"keep_prob: F32\(([\d.eE+-]+)\)")
_FIRST_F32 = re.compile(r"F32\(([\d.eE+-]+)\)")
#: nodes that move values or state, not computations of a layer
_BOOKKEEPING = {"Load", "UpdateState", "MakeTuple", "TupleGetItem", "Depend", "Return", "Partial", "Switch"}
_CONV_OPS = ("Conv2D", "Conv3D", "Conv1D", "Conv2DTranspose", "Conv2DBackpropInput", "Conv3DTranspose")


def pick_ir(files: list[Path]) -> Path | None:
    """The IR file of a folder's dumps that describes the model (the last validate pass, else the largest)."""
    validate = sorted((f for f in files if "validate" in f.name), key=lambda f: f.name)
    if validate:
        return validate[-1]
    return max(files, key=lambda f: (f.stat().st_size, f.name), default=None)


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


def read_ir(path: Path, shown: str = "") -> ModelDescription:
    """The layers of one IR file. Raises OSError; a file with no forward node of a cell gives no layers."""
    desc = ModelDescription(format="mindspore_ir", framework="mindspore", path=shown or path.name)
    current: tuple[str, str] | None = None
    layer: RawLayer | None = None
    op = args = shapes = ""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh):
            if n >= MAX_LINES:
                break
            m = _NODE.match(line)
            if m:
                op, args, shapes = m.group(1), m.group(2), ""
                continue
            s = _SHAPES.match(line)
            if s:
                shapes = s.group(1)
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
