"""TensorFlow's tfdbg2 dumps (``tf.debugging.experimental.enable_dump_debug_info(dump_root,
tensor_debug_mode="FULL_TENSOR")``) -> a ``Dump``, read without TensorFlow or protobuf.

The dump root holds ``tfdbg_events.<time>.<host>.{metadata,graphs,execution,graph_execution_traces,source_files,
stack_frames}``, each a sequence of ``DebugEvent`` records framed as TensorFlow's event files are. Read here:

- ``.graphs``: ``GraphOpCreation`` events give each graph op's type (``fc1/MatMul`` -> ``MatMul``);
- ``.graph_execution_traces``: one ``GraphExecutionTrace`` per op output computed inside a ``tf.function`` (its
  op name, output slot and, in FULL_TENSOR mode, the value as a ``TensorProto``), in execution order;
- ``.execution``: one ``Execution`` per eager op (its type and its outputs' values); eager ops have no names and
  are named ``{op_type}.{n}`` by their count, as msprobe names functional calls.
``source_files`` and ``stack_frames`` are not needed (and may be left out of a copied dump). The other tensor
debug modes (NO_TENSOR, CURT_HEALTH, CONCISE_HEALTH, SHAPE, FULL_HEALTH) record no values: such traces are listed as
a problem and not compared.

Names follow the module scope, as MindSpore's dump does: the op ``sequential_1/fc1_1/MatMul`` of a Keras model is
the kernel ``fc1.MatMul.forward`` (type MatMul) of the module ``fc1.forward``, whose output is its last kernel's.
The outermost scope is the model's (dropped, as MindSpore's ``Default``); Keras 3 gives every layer scope of a
traced call the same ``_<n>`` counter (``fc1_1``, ``act_1``), which is dropped when every scope of the dump carries
it. Variable reads, constants, placeholders and identities are not operators and are skipped. Tensors are decoded
on demand from their record (offset and length kept at indexing): a dump is never held in memory.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from advisor.read import protobuf_wire as pb
from advisor.read.tfrecord import FramingError, framed
from advisor.read.dump_files import BFloat16Bits, Dump, DumpReadError, TensorRecord, check_count

#: ops that compute nothing a comparison needs
SKIPPED_TYPES = frozenset(
    {"Const", "Placeholder", "ReadVariableOp", "VarHandleOp", "AssignVariableOp", "NoOp", "Identity", "IdentityN"}
)
#: a record longer than this is not indexed (tensors of that size are split by no dump of this kind)
MAX_RECORD_BYTES = 1 << 31
#: TensorFlow DataType enum -> numpy dtype (bfloat16 and half come as 16-bit patterns)
DTYPES: dict[int, np.dtype] = {
    1: np.dtype(np.float32),
    2: np.dtype(np.float64),
    3: np.dtype(np.int32),
    4: np.dtype(np.uint8),
    5: np.dtype(np.int16),
    6: np.dtype(np.int8),
    9: np.dtype(np.int64),
    10: np.dtype(np.bool_),
    14: np.dtype(np.uint16),  # bfloat16 bits
    17: np.dtype(np.uint16),
    19: np.dtype(np.float16),
    22: np.dtype(np.uint32),
    23: np.dtype(np.uint64),
}
_DTYPE_NAMES = {14: "bfloat16"}
_COUNTER = re.compile(r"^(.*)_(\d+)$")
#: TensorDebugMode.FULL_TENSOR (debug_event.proto): the only mode whose tensor_proto is the tensor itself (the
#: others record a health or shape summary in it)
FULL_TENSOR = 7


def _framed(path: Path) -> Iterator[tuple[int, bytes]]:
    """(offset of the data, data) of each record of a tfdbg file."""
    try:
        for _index, off, data in framed(path, MAX_RECORD_BYTES):
            if data is None:
                raise DumpReadError(f"{path.name}: a record over {MAX_RECORD_BYTES} bytes (damaged framing)")
            yield off, data
    except FramingError as exc:
        raise DumpReadError(f"{path.name}: {exc}") from None


def _tensor_header(proto: bytes) -> tuple[int, tuple[int, ...]]:
    """(DataType enum, shape) of a TensorProto."""
    f = pb.message(proto, {1: "int", 2: "bytes"})
    dims = pb.message(f.get(2, b""), {2: "all"}).get(2, [])
    return f.get(1, 0), tuple(pb.message(pb.sub(d), {1: "int"}).get(1, 0) for d in dims)


def decode_tensor(proto: bytes) -> np.ndarray:
    """A TensorProto's value (bfloat16 as ``BFloat16Bits``). Raises DumpReadError."""
    dtype_enum, shape = _tensor_header(proto)
    dtype = DTYPES.get(dtype_enum)
    if dtype is None:
        raise DumpReadError(f"TensorFlow dtype {dtype_enum} is not compared")
    size = int(np.prod(shape)) if shape else 1
    content: bytes | None = None
    typed: list[float | int] = []
    for n, wire, raw in pb.fields(proto):
        if n == 4:
            content = pb.sub(raw)
        elif n in (5, 6, 7, 10, 11, 13):
            typed.extend(_repeated(n, wire, raw))
    if content is not None:
        if len(content) != size * dtype.itemsize:
            raise DumpReadError(f"tensor_content of {len(content)} bytes for shape {shape} of {dtype}")
        arr = np.frombuffer(content, dtype=dtype.newbyteorder("<")).reshape(shape)
    elif typed:
        vals = np.asarray(typed)
        if dtype_enum in (19, 14):  # half_val holds the 16-bit patterns
            vals = vals.astype(np.uint16)
        if vals.size not in (1, size):
            raise DumpReadError(f"{vals.size} values for shape {shape}")
        arr = np.broadcast_to(vals.astype(dtype) if dtype_enum not in (19, 14) else vals.view(dtype), (size,))
        arr = np.ascontiguousarray(arr).reshape(shape)
    else:
        arr = np.zeros(shape, dtype=dtype)  # TensorFlow writes no values for an all-zero tensor
    if dtype_enum == 14:
        return BFloat16Bits(arr.view(np.int16))
    return arr


def _repeated(n: int, wire: int, raw: int | bytes) -> list[float | int]:
    if wire == pb.LENGTH:  # packed
        buf = pb.sub(raw)
        if n == 5:
            return list(struct.unpack(f"<{len(buf) // 4}f", buf[: len(buf) // 4 * 4]))
        if n == 6:
            return list(struct.unpack(f"<{len(buf) // 8}d", buf[: len(buf) // 8 * 8]))
        out: list[float | int] = []
        pos = 0
        while pos < len(buf):
            v, pos = pb.varint(buf, pos)
            out.append(v)
        return out
    if n == 5:
        return [pb.single(raw)]
    if n == 6:
        return [pb.double(raw)]
    return [pb.int64(raw)]


def _op_types(root: Path) -> dict[tuple[str, str], str]:
    """(graph id, op name) -> op type, from the GraphOpCreation events of the .graphs files."""
    out: dict[tuple[str, str], str] = {}
    for path in sorted(root.glob("tfdbg_events.*.graphs")):
        for _off, data in _framed(path):
            op = pb.message(data, {7: "bytes"}).get(7)
            if op is not None:
                f = pb.message(op, {1: "text", 2: "text", 4: "text"})
                out[(f.get(4, ""), f.get(2, ""))] = f.get(1, "")
    return out


def _module_paths(names: list[str]) -> dict[str, list[str]]:
    """op name -> its module path: its scopes, without the model's outermost scope when every scoped op shares it,
    and without a Keras 3 counter (``fc1_1``) when every layer scope (the first inner one) carries the same one."""
    scopes = {n: n.split("/")[:-1] for n in names}
    tops = {s[0] for s in scopes.values() if s}
    inner = {n: (s[1:] if len(tops) == 1 and s else s) for n, s in scopes.items()}
    firsts = [s[0] for s in inner.values() if s]  # the layers' scopes
    counters = {m.group(2) for part in firsts if (m := _COUNTER.match(part))}
    if len(counters) == 1 and firsts and all(_COUNTER.match(p) for p in firsts):
        return {n: ([_COUNTER.sub(r"\1", s[0]), *s[1:]] if s else s) for n, s in inner.items()}
    return inner


def read_tfdbg_dump(root: Path) -> Dump:
    dump = Dump(root=root, layout="tfdbg", mode="tensor", framework="tensorflow")
    types = _op_types(root)
    #: (wall time, name, slot, type, file, offset, length, tensor header): graph ops traced, eager ops executed
    graph_ops: list[tuple[float, str, int, str | None, Path, int, int, Header]] = []
    eager: list[tuple[float, str, int, str | None, Path, int, int, Header]] = []
    modes: set[int] = set()
    for path in sorted(root.glob("tfdbg_events.*.graph_execution_traces")):
        for off, data in _framed(path):
            event = pb.message(data, {1: "double", 10: "bytes"})
            if 10 not in event:
                continue
            f = pb.message(event[10], {1: "text", 2: "text", 3: "int", 4: "int", 5: "bytes"})
            name = f.get(2, "")
            kind = types.get((f.get(1, ""), name))
            if kind in SKIPPED_TYPES or not name:
                continue
            if 5 not in f or f.get(4) != FULL_TENSOR:
                modes.add(f.get(4, 0))
                continue
            graph_ops.append((event.get(1, 0.0), name, f.get(3, 0), kind, path, off, len(data), _header(f[5])))
    counts: dict[str, int] = {}
    for path in sorted(root.glob("tfdbg_events.*.execution")):
        for off, data in _framed(path):
            event = pb.message(data, {1: "double", 9: "bytes"})
            if 9 not in event:
                continue
            f = pb.message(event[9], {1: "text", 3: "text", 6: "int", 7: "all"})
            kind = f.get(1, "")
            if not kind or kind in SKIPPED_TYPES or f.get(3) or kind.startswith("__inference"):
                continue  # a function call's outputs are its last traced op's
            if f.get(6) != FULL_TENSOR:
                modes.add(f.get(6, 0))
                continue
            k = counts[kind] = counts.get(kind, -1) + 1
            for slot, proto in enumerate(f.get(7, [])):
                eager.append(
                    (event.get(1, 0.0), f"{kind}.{k}", slot, kind, path, off, len(data), _header(pb.sub(proto)))
                )
    if modes and not graph_ops and not eager:
        raise DumpReadError(
            "a tfdbg dump without tensor values (tensor_debug_mode other than FULL_TENSOR): "
            'dump again with enable_dump_debug_info(..., tensor_debug_mode="FULL_TENSOR")'
        )
    check_count(len(graph_ops) + len(eager))
    paths = _module_paths([g[1] for g in graph_ops])
    last_kernel: dict[str, tuple[int, Path, int, int, Header]] = {}  # module op -> its last kernel's output 0
    # one execution order for both: the events' wall times (a stable sort keeps each file's own order)
    timeline = sorted([(g, True) for g in graph_ops] + [(e, False) for e in eager], key=lambda x: x[0][0])
    for order, ((_wall, name, slot, kind, path, off, length, head), traced) in enumerate(timeline):
        if not traced:
            op = f"{name}.forward"
            dump.records.append(_record(f"{op}.output.{slot}", op, order, kind, (path, off, length, head), root, slot))
            continue
        module = paths[name]
        op = ".".join([*module, name.rsplit("/", 1)[-1], "forward"])
        dump.records.append(_record(f"{op}.output.{slot}", op, order, kind, (path, off, length, head), root))
        if slot == 0:
            for i in range(1, len(module) + 1):
                last_kernel[".".join([*module[:i], "forward"])] = (order, path, off, length, head)
    # a module's output is its last kernel's, and it is judged after the kernels inside it (as MindSpore's view)
    for mod_op, (at, *where) in last_kernel.items():
        dump.records.append(_record(f"{mod_op}.output.0", mod_op, at, None, tuple(where), root))  # type: ignore[arg-type]
    dump.records.sort(key=lambda r: (r.order, -r.op.count(".")))
    ops: dict[str, int] = {}
    for r in dump.records:
        r.order = ops.setdefault(r.op, len(ops))
    return dump


#: a tensor's DataType enum and shape, or why its header could not be read
Header = tuple[int, tuple[int, ...]] | str


def _header(proto: bytes) -> Header:
    try:
        return _tensor_header(proto)
    except pb.WireError as exc:
        return str(exc)


def _record(
    name: str, op: str, order: int, kind: str | None, where: tuple[Path, int, int, Header], root: Path, index: int = 0
) -> TensorRecord:
    """The record of one output: where its event lies in ``path`` (read again only to load it) and its header."""
    path, off, length, head = where
    rec = TensorRecord(name=name, op=op, role="output", index=name.rsplit(".", 1)[-1], order=order, op_type=kind)
    rec.file, rec.rel_file = path, path.relative_to(root).as_posix()
    rec.blob = (off, length, index)
    if isinstance(head, str):
        rec.problem = f"{rec.rel_file}: {head}"
    else:
        dtype_enum, rec.shape = head
        rec.dtype = _DTYPE_NAMES.get(dtype_enum) or (str(DTYPES[dtype_enum]) if dtype_enum in DTYPES else None)
    return rec


def _tensor_in(path: Path, off: int, length: int, index: int) -> bytes:
    """The TensorProto bytes of a trace (index 0) or of an eager execution's output ``index``."""
    with path.open("rb") as fh:
        fh.seek(off)
        data = fh.read(length)
    if len(data) < length:
        raise DumpReadError("the record is cut short")
    event = pb.message(data, {9: "bytes", 10: "bytes"})
    if 10 in event:
        proto = pb.message(event[10], {5: "bytes"}).get(5)
        if proto is None:
            raise DumpReadError("no tensor value in the trace")
        return proto
    if 9 not in event:
        raise DumpReadError("not a trace or execution event")
    outputs = pb.message(event[9], {7: "all"}).get(7, [])
    if index >= len(outputs):
        raise DumpReadError(f"no output {index} in the execution event")
    return pb.sub(outputs[index])


def load_tfdbg_tensor(rec: TensorRecord) -> np.ndarray:
    if rec.file is None or rec.blob is None:
        raise DumpReadError("no tfdbg record")
    off, length, index = rec.blob
    try:
        return decode_tensor(_tensor_in(rec.file, off, length, index))
    except pb.WireError as exc:
        raise DumpReadError(f"not a tfdbg tensor: {exc}") from None
