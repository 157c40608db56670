"""An ONNX model file (``*.onnx``) -> its layers, as a model description (format ``onnx_graph``). No judgement.

The file is decoded with the protocol-buffer wire format (advisor/read/protobuf_wire.py: no onnx dependency, and
nothing in it runs), through a memory map: the weights' bytes are skipped, never copied. Read from ONNX's
``onnx.proto``: ModelProto.graph (7); GraphProto.node (1), initializer (5); NodeProto input (1), output (2), name
(3), op_type (4), attribute (5); AttributeProto name (1), f (2), i (3), t (5); TensorProto dims (1), data_type
(2), float_data (4), name (8), raw_data (9).

Exporters name a node after the module that made it: ``torch.onnx.export`` writes ``/encoder/fc1/Gemm``,
tf2onnx ``model/dense/MatMul``. Consecutive nodes of one scope are one layer, whatever the converter split it
into: opset 14's LayerNorm (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) is one norm layer, the
erf form of GELU (Div, Erf, Add, Mul, Mul) one gelu activation, tf2onnx's MatMul + BiasAdd + Relu one dense
layer with a relu. A scope that multiplies two activations (attention's scores) is not a layer of its own.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path

from advisor.read.model_desc import ModelDescription, RawLayer, canonical_activation
from advisor.read.protobuf_wire import LENGTH, VARINT, Budget, Data, OverBudget, WireError, fields, varint

#: an ONNX file larger than this is not read (a model's graph is a small part of it; the rest is weights)
MAX_ONNX_BYTES = 4_000_000_000
#: nodes read at most (a description longer than this is not one a reader compares layer by layer)
MAX_NODES = 200_000
#: protocol-buffer fields decoded per file at most, nested ones included (about 20 per node, 6 per initializer; a
#: file of millions of empty initializers or attributes stops here)
MAX_FIELDS = 4_000_000

_WEIGHTED = {"Conv": "conv", "ConvTranspose": "conv", "Gemm": "dense", "MatMul": "dense", "LSTM": "recurrent"}
_WEIGHTED |= {"GRU": "recurrent", "RNN": "recurrent"}
_NORMS = {"BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization"}
_NORMS |= {"SimplifiedLayerNormalization", "LpNormalization"}
_POOLS = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool"}
_ACTIVATIONS = {
    "Relu": "relu",
    "LeakyRelu": "leaky_relu",
    "PRelu": "leaky_relu",
    "Sigmoid": "sigmoid",
    "HardSigmoid": "sigmoid",
    "Tanh": "tanh",
    "Softmax": "softmax",
    "LogSoftmax": "log_softmax",
    "Gelu": "gelu",
    "FastGelu": "gelu",
    "Erf": "gelu",
    "Elu": "elu",
    "Selu": "selu",
    "Softplus": "softplus",
    "Softsign": "tanh",
    "HardSwish": "silu",
    "Mish": "silu",
}
_RESHAPES = {"Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze"}


class OnnxError(ValueError):
    """The file is not an ONNX model advisor can read."""


@dataclass
class Node:
    name: str
    op_type: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    ints: dict[str, int] = field(default_factory=dict)
    floats: dict[str, float] = field(default_factory=dict)
    #: the scalar of a Constant node's ``value`` tensor (float32/float64/int64), where it is one
    value: float | None = None


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    #: initializer name -> its dims
    dims: dict[str, list[int]] = field(default_factory=dict)
    #: initializer or Constant output name -> its scalar value
    scalars: dict[str, float] = field(default_factory=dict)


def _text(raw: int | Data) -> str:
    if isinstance(raw, int):
        raise WireError("not a string")
    return bytes(raw[:4096]).decode("utf-8", errors="replace")


def _ints(wire: int, raw: int | Data) -> list[int]:
    """A repeated int64 field's values: one varint, or a packed run of them."""
    if wire == VARINT and isinstance(raw, int):
        return [raw]
    if wire != LENGTH or isinstance(raw, int):
        raise WireError("not an integer list")
    out, pos = [], 0
    while pos < len(raw):
        v, pos = varint(raw, pos)
        out.append(v)
    return out


_SCALAR_FORMATS = {1: "<f", 11: "<d", 7: "<q", 6: "<i"}  # TensorProto.DataType FLOAT, DOUBLE, INT64, INT32


def _tensor(buf: Data, budget: Budget) -> tuple[str, list[int], float | None]:
    """(name, dims, scalar value or None) of a TensorProto."""
    name, dims, dtype, raw, floats = "", [], 0, None, None
    for number, wire, value in fields(buf, budget):
        if number == 1:
            dims += _ints(wire, value)
        elif number == 2 and isinstance(value, int):
            dtype = value
        elif number == 8:
            name = _text(value)
        elif number == 9 and not isinstance(value, int) and len(value) <= 8:
            raw = bytes(value)
        elif number == 4 and not isinstance(value, int) and len(value) == 4:
            floats = bytes(value)
    scalar = None
    fmt = _SCALAR_FORMATS.get(dtype)
    if fmt is not None and raw is not None and len(raw) == struct.calcsize(fmt):
        scalar = float(struct.unpack(fmt, raw)[0])
    elif floats is not None:
        scalar = float(struct.unpack("<f", floats)[0])
    if dims and any(d != 1 for d in dims):
        scalar = None
    return name, dims, scalar


def _node(buf: Data, budget: Budget) -> Node:
    node = Node(name="", op_type="")
    for number, _wire, value in fields(buf, budget):
        if number == 1:
            node.inputs.append(_text(value))
        elif number == 2:
            node.outputs.append(_text(value))
        elif number == 3:
            node.name = _text(value)
        elif number == 4:
            node.op_type = _text(value)
        elif number == 5 and not isinstance(value, int):
            attr_name, attr_i, attr_f, attr_t = "", None, None, None
            for n2, _w2, v2 in fields(value, budget):
                if n2 == 1:
                    attr_name = _text(v2)
                elif n2 == 3 and isinstance(v2, int):
                    attr_i = v2 - (1 << 64) if v2 >= 1 << 63 else v2
                elif n2 == 2 and not isinstance(v2, int) and len(v2) == 4:
                    attr_f = float(struct.unpack("<f", bytes(v2))[0])
                elif n2 == 5 and not isinstance(v2, int):
                    attr_t = _tensor(v2, budget)[2]
            if attr_i is not None:
                node.ints[attr_name] = attr_i
            if attr_f is not None:
                node.floats[attr_name] = attr_f
            if attr_name == "value" and attr_t is not None:
                node.value = attr_t
    return node


def read_graph(path: Path) -> Graph:
    """The nodes and initializer shapes of an ONNX file. Raises OnnxError (naming the problem) or OSError."""
    size = path.stat().st_size
    if size == 0:
        raise OnnxError("empty file")
    if size > MAX_ONNX_BYTES:
        raise OnnxError(f"{size} bytes, over the {MAX_ONNX_BYTES} read")
    graph = Graph()
    with open(path, "rb") as fh:
        # not closed here: the map goes with its last slice (an exception's traceback may hold some)
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        _read_model(memoryview(mapped), graph, Budget(MAX_FIELDS))
    except OverBudget as exc:
        raise OnnxError(str(exc)) from None
    except WireError as exc:
        raise OnnxError(f"not an ONNX model: {exc}") from None
    return graph


def _read_model(buf: Data, graph: Graph, budget: Budget) -> None:
    seen_graph = False
    for number, _wire, value in fields(buf, budget):
        if number != 7 or isinstance(value, int):
            continue
        seen_graph = True
        for n2, _w2, v2 in fields(value, budget):
            if isinstance(v2, int):
                continue
            if n2 == 1:
                if len(graph.nodes) >= MAX_NODES:
                    raise OnnxError(f"more than {MAX_NODES} nodes")
                node = _node(v2, budget)
                graph.nodes.append(node)
            elif n2 == 5 and len(v2):  # an empty initializer names nothing
                name, dims, scalar = _tensor(v2, budget)
                graph.dims[name] = dims
                if scalar is not None:
                    graph.scalars[name] = scalar
    if not seen_graph or not graph.nodes:
        raise OnnxError("no graph nodes (ModelProto.graph is missing or empty)")


def _scope(node: Node, i: int) -> str:
    if "/" in node.name.strip("/"):
        return node.name.rstrip("/").rsplit("/", 1)[0]
    return f"{node.op_type}_{i}"  # an unnamed or unscoped node: a layer of its own


def _units(node: Node, graph: Graph) -> int | None:
    weight = next((graph.dims[x] for x in node.inputs[1:2] if x in graph.dims), None)
    if node.op_type in ("LSTM", "GRU", "RNN"):
        return node.ints.get("hidden_size")
    if not weight:
        return None
    if node.op_type == "Conv":
        return weight[0]
    if node.op_type == "ConvTranspose":
        return weight[1] * node.ints.get("group", 1) if len(weight) > 1 else None
    if node.op_type == "Gemm":
        return weight[0] if node.ints.get("transB", 0) else weight[-1]
    return weight[-1]  # MatMul: (in, out)


def _layer(name: str, group: list[Node], graph: Graph) -> RawLayer:
    ops = [n.op_type for n in group]
    weighted = [
        n
        for n in group
        if n.op_type in _WEIGHTED and (n.op_type != "MatMul" or n.inputs[1:2] and n.inputs[1] in graph.dims)
    ]
    act = next((_ACTIVATIONS[o] for o in ops if o in _ACTIVATIONS), None)
    if weighted:
        w = weighted[0]
        return RawLayer(name, w.op_type, _WEIGHTED[w.op_type], units=_units(w, graph), activation=act)
    gathers = [n for n in group if n.op_type == "Gather" and n.inputs and len(graph.dims.get(n.inputs[0], ())) == 2]
    if gathers:
        return RawLayer(name, "Gather", "embedding", units=graph.dims[gathers[0].inputs[0]][1])
    if "MatMul" in ops:  # two activations multiplied (attention scores): no layer a description prints
        return RawLayer(name, "+".join(dict.fromkeys(ops)), "other")
    norm = next((o for o in ops if o in _NORMS), None)
    if norm is not None or ("ReduceMean" in ops and ("Sqrt" in ops or "Pow" in ops) and "Div" in ops):
        return RawLayer(name, norm or "LayerNormalization(split)", "norm")
    if "Dropout" in ops:
        drop = next(n for n in group if n.op_type == "Dropout")
        rate = drop.floats.get("ratio")
        if rate is None and len(drop.inputs) > 1:
            rate = graph.scalars.get(drop.inputs[1])
        return RawLayer(name, "Dropout", "dropout", dropout_rate=rate if rate is not None else 0.5)
    pool = next((o for o in ops if o in _POOLS), None)
    if pool is not None:
        return RawLayer(name, pool, "pool")
    if act is not None:
        return RawLayer(
            name, next(o for o in ops if o in _ACTIVATIONS), "activation", activation=canonical_activation(act)
        )
    if all(o in _RESHAPES or o in ("Constant", "Shape", "Gather", "Concat") for o in ops):
        return RawLayer(name, ops[-1], "reshape")
    return RawLayer(name, "+".join(dict.fromkeys(ops)), "other")


def describe(graph: Graph, path: str = "") -> ModelDescription:
    """The graph's layers, one per run of consecutive nodes of one scope, in the file's (topological) order."""
    for node in graph.nodes:
        if node.op_type == "Constant" and node.value is not None and node.outputs:
            graph.scalars[node.outputs[0]] = node.value
    desc = ModelDescription(format="onnx_graph", framework="onnx", path=path)
    groups: list[tuple[str, list[Node]]] = []
    for i, node in enumerate(graph.nodes):
        if node.op_type == "Constant":
            continue
        scope = _scope(node, i)
        if groups and groups[-1][0] == scope:
            groups[-1][1].append(node)
        else:
            groups.append((scope, [node]))
    for scope, group in groups:
        name = scope.strip("/").replace("/", ".") or group[0].op_type
        desc.layers.append(_layer(name, group, graph))
    return desc
