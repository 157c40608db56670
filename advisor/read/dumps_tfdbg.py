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

import math
import mmap
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from advisor.read import protobuf_wire as pb
from advisor.read.tfrecord import FramingError, Record, framed_stream
from advisor.read.dump_files import MAX_DUMP_TENSORS, BFloat16Bits, Dump, DumpReadError, TensorRecord, check_count

#: ops that compute nothing a comparison needs
SKIPPED_TYPES = frozenset(
    {"Const", "Placeholder", "ReadVariableOp", "VarHandleOp", "AssignVariableOp", "NoOp", "Identity", "IdentityN"}
)
#: a record longer than this is damaged framing (a DebugEvent is a protocol buffer: under 2 GiB)
MAX_RECORD_BYTES = 1 << 31
#: a record longer than this is memory-mapped, not read: its tensor's bytes are touched only where they are compared
#: (a sparse file announcing a 2 GiB record costs no memory)
MAX_READ_RECORD = 16 << 20
#: protocol-buffer fields decoded per file while it is indexed (the values of a tensor are one field)
MAX_FIELDS = 20_000_000
#: values of one tensor written as a list of numbers, not as bytes, at most (TensorFlow writes long tensors as bytes)
MAX_TYPED_VALUES = 1 << 22
#: bytes of one tensor filled in memory from a single value (or from none: an all-zero tensor) at most
MAX_FILLED_BYTES = 1 << 30
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


def _read_events(path: Path, dump: Dump, handle: Callable[[Path, int, pb.Data, pb.Budget], None]) -> None:
    """``handle(path, offset, data, budget)`` for each record of a tfdbg file (a long record as a view of the mapped
    file). Raises DumpReadError naming the file and the record where it cannot be read or decoded: a dump is
    compared whole or not at all."""
    shown = path.relative_to(dump.root).as_posix()
    budget, index = pb.Budget(MAX_FIELDS), 0
    try:
        with path.open("rb") as fh:
            for rec in framed_stream(fh, MAX_READ_RECORD):
                index = rec.index
                handle(path, rec.offset, rec.data if rec.data is not None else _mapped(fh, rec), budget)
    except FramingError as exc:
        raise DumpReadError(f"{shown}: {exc}") from None
    except pb.OverBudget as exc:
        raise DumpReadError(f"{shown}: {exc}, at record {index}") from None
    except pb.WireError as exc:
        raise DumpReadError(f"{shown}: record {index} is not a DebugEvent ({exc})") from None
    except OSError as exc:
        raise DumpReadError(f"{shown}: cannot read: {exc.strerror or exc}") from None


def _mapped(fh: BinaryIO, rec: Record) -> memoryview:
    """The data of a long record as a view of the file mapped into memory (unmapped when the last view goes)."""
    if rec.length > MAX_RECORD_BYTES:
        raise FramingError(
            f"record {rec.index} announces {rec.length:,} bytes, over a DebugEvent's 2 GiB (damaged framing)"
        )
    return _map(fh, rec.offset, rec.length)


def _map(fh: BinaryIO, offset: int, length: int) -> memoryview:
    start = offset - offset % mmap.ALLOCATIONGRANULARITY
    mapped = mmap.mmap(fh.fileno(), offset - start + length, offset=start, access=mmap.ACCESS_READ)
    return memoryview(mapped)[offset - start :]


def _tensor_header(proto: pb.Data) -> tuple[int, tuple[int, ...]]:
    """(DataType enum, shape) of a TensorProto. Raises WireError for a negative or absurd dimension."""
    f = pb.message(proto, {1: "int", 2: "bytes"})
    dims = pb.message(f.get(2, b""), {2: "all"}).get(2, [])
    shape = tuple(pb.message(pb.sub(d), {1: "int"}).get(1, 0) for d in dims)
    if any(not 0 <= d < 1 << 62 for d in shape):
        raise pb.WireError(f"a tensor shape {shape[:8]} with a negative or absurd dimension")
    return f.get(1, 0), shape


def decode_tensor(proto: pb.Data) -> np.ndarray:
    """A TensorProto's value (bfloat16 as ``BFloat16Bits``): a view of ``proto`` where its bytes hold it. Raises
    DumpReadError."""
    dtype_enum, shape = _tensor_header(proto)
    dtype = DTYPES.get(dtype_enum)
    if dtype is None:
        raise DumpReadError(f"TensorFlow dtype {dtype_enum} is not compared")
    size = math.prod(shape)
    content, typed = _values(proto)
    if content is not None:
        if len(content) != size * dtype.itemsize:
            raise DumpReadError(f"tensor_content of {len(content)} bytes for shape {shape} of {dtype}")
        arr = np.frombuffer(content, dtype=dtype.newbyteorder("<")).reshape(shape)
    else:
        if size * dtype.itemsize > MAX_FILLED_BYTES:
            raise DumpReadError(
                f"a tensor of shape {shape} written as {typed.size} value(s): above the {MAX_FILLED_BYTES >> 20} MiB "
                "advisor fills in memory from a dump's values; not compared"
            )
        arr = _filled(typed, dtype_enum, dtype, size).reshape(shape)
    if dtype_enum == 14:
        return BFloat16Bits(arr.view(np.int16))
    return arr


def _filled(typed: np.ndarray, dtype_enum: int, dtype: np.dtype, size: int) -> np.ndarray:
    """A tensor's ``size`` values from its typed fields: one per element, or one for all, or none (TensorFlow writes
    no values for an all-zero tensor)."""
    if not typed.size:
        return np.zeros(size, dtype=dtype)
    if typed.size not in (1, size):
        raise DumpReadError(f"{typed.size} values for {size} elements")
    if dtype_enum in (19, 14):  # half_val holds the 16-bit patterns
        vals = typed.astype(np.uint16).view(dtype)
    else:
        vals = typed.astype(dtype)
    return np.ascontiguousarray(np.broadcast_to(vals, (size,)))


#: TensorProto fields that hold values as numbers: float_val, double_val, int_val, int64_val, bool_val, half_val
_TYPED_FIELDS = (5, 6, 7, 10, 11, 13)


def _values(proto: pb.Data) -> tuple[pb.Data | None, np.ndarray]:
    """(tensor_content or None, the values of the typed fields, at most MAX_TYPED_VALUES) of a TensorProto."""
    content: pb.Data | None = None
    parts: list[np.ndarray] = []
    count = 0
    for n, wire, raw in pb.fields(proto):
        if n == 4:
            content = pb.sub(raw)
        elif n in _TYPED_FIELDS:
            part = _repeated(n, wire, raw, MAX_TYPED_VALUES - count)
            count += part.size
            parts.append(part)
    return content, (np.concatenate(parts) if parts else np.empty(0))


def _repeated(n: int, wire: int, raw: int | pb.Data, room: int) -> np.ndarray:
    """The values of one typed field (packed or not); DumpReadError beyond ``room`` values."""
    if wire != pb.LENGTH:
        return np.array([pb.single(raw) if n == 5 else pb.double(raw) if n == 6 else pb.int64(raw) % (1 << 64)])
    buf = pb.sub(raw)
    width = {5: 4, 6: 8}.get(n)
    if width:
        if len(buf) // width > room:
            raise _too_many_values()
        return np.frombuffer(buf, dtype="<f4" if n == 5 else "<f8", count=len(buf) // width)
    out: list[int] = []
    pos = 0
    while pos < len(buf):
        if len(out) >= room:
            raise _too_many_values()
        value, pos = pb.varint(buf, pos)
        out.append(value)
    return np.array(out, dtype=np.uint64)


def _too_many_values() -> DumpReadError:
    return DumpReadError(f"more than {MAX_TYPED_VALUES:,} values written as numbers in one tensor; not compared")


def _op_types(dump: Dump) -> dict[tuple[str, str], str]:
    """(graph id, op name) -> op type, from the GraphOpCreation events of the .graphs files."""
    out: dict[tuple[str, str], str] = {}

    def op_creation(_path: Path, _off: int, data: pb.Data, budget: pb.Budget) -> None:
        op = pb.message(data, {7: "bytes"}, budget).get(7)
        if op is not None:
            f = pb.message(op, {1: "text", 2: "text", 4: "text"}, budget)
            out[(f.get(4, ""), f.get(2, ""))] = f.get(1, "")

    for path in sorted(dump.root.glob("tfdbg_events.*.graphs")):
        _read_events(path, dump, op_creation)
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


#: a tensor's DataType enum and shape, or why its header could not be read
Header = tuple[int, tuple[int, ...]] | str
#: an output found while indexing: (wall time, name, slot, type, file, offset, length, tensor header)
Output = tuple[float, str, int, str | None, Path, int, int, Header]


class _Outputs:
    """The outputs the trace and execution files record: graph ops traced, eager ops executed."""

    def __init__(self, types: dict[tuple[str, str], str]) -> None:
        self.types = types
        self.graph_ops: list[Output] = []
        self.eager: list[Output] = []
        self.modes: set[int] = set()  # the tensor debug modes of traces without values
        self.counts: dict[str, int] = {}  # eager op type -> executions so far

    def trace(self, path: Path, off: int, data: pb.Data, budget: pb.Budget) -> None:
        event = pb.message(data, {1: "double", 10: "bytes"}, budget)
        if 10 not in event:
            return
        f = pb.message(event[10], {1: "text", 2: "text", 3: "int", 4: "int", 5: "bytes"}, budget)
        name = f.get(2, "")
        kind = self.types.get((f.get(1, ""), name))
        if kind in SKIPPED_TYPES or not name:
            return
        if 5 not in f or f.get(4) != FULL_TENSOR:
            self.modes.add(f.get(4, 0))
            return
        self.graph_ops.append((event.get(1, 0.0), name, f.get(3, 0), kind, path, off, len(data), _header(f[5])))
        self._check_count()

    def execution(self, path: Path, off: int, data: pb.Data, budget: pb.Budget) -> None:
        event = pb.message(data, {1: "double", 9: "bytes"}, budget)
        if 9 not in event:
            return
        f = pb.message(event[9], {1: "text", 3: "text", 6: "int", 7: "all"}, budget)
        kind = f.get(1, "")
        if not kind or kind in SKIPPED_TYPES or f.get(3) or kind.startswith("__inference"):
            return  # a function call's outputs are its last traced op's
        if f.get(6) != FULL_TENSOR:
            self.modes.add(f.get(6, 0))
            return
        k = self.counts[kind] = self.counts.get(kind, -1) + 1
        for slot, proto in enumerate(f.get(7, [])):
            head = _header(pb.sub(proto))
            self.eager.append((event.get(1, 0.0), f"{kind}.{k}", slot, kind, path, off, len(data), head))
        self._check_count()

    def _check_count(self) -> None:
        if len(self.graph_ops) + len(self.eager) > MAX_DUMP_TENSORS:  # refused before the whole dump is indexed
            check_count(len(self.graph_ops) + len(self.eager))


def read_tfdbg_dump(root: Path) -> Dump:
    dump = Dump(root=root, layout="tfdbg", mode="tensor", framework="tensorflow")
    found = _Outputs(_op_types(dump))
    for path in sorted(root.glob("tfdbg_events.*.graph_execution_traces")):
        _read_events(path, dump, found.trace)
    for path in sorted(root.glob("tfdbg_events.*.execution")):
        _read_events(path, dump, found.execution)
    graph_ops, eager = found.graph_ops, found.eager
    if found.modes and not graph_ops and not eager:
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


def _header(proto: pb.Data) -> Header:
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


def _tensor_in(path: Path, off: int, length: int, index: int) -> pb.Data:
    """The TensorProto bytes of a trace (index 0) or of an eager execution's output ``index`` (a view of the mapped
    file for a long record)."""
    data: pb.Data
    with path.open("rb") as fh:
        if off + length > os.fstat(fh.fileno()).st_size:
            raise DumpReadError("the record is cut short (the file is shorter than when it was indexed)")
        if length > MAX_READ_RECORD:
            data = _map(fh, off, length)
        else:
            fh.seek(off)
            data = fh.read(length)
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
