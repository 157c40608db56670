"""Per-operator dumps -> tensor records (no judgement, no comparison).

The layouts (docs/run-layout.md, docs/comparing-dumps.md); msprobe's and MindSpore's own readers are in
``dumps_msprobe.py`` and ``dumps_mindspore.py``, on the records and helpers defined here:

- the plain layout: a folder of ``.npy`` files, one per tensor, with an
  optional ``manifest.json`` (a list of ``{"name", "file", "op_type"}`` in
  execution order). Without a manifest the order is the natural sort of the
  file names and the name is the file name without a leading ``NNNN_`` index
  and without ``.npy``.
- the msprobe layout: ``dump.json`` whose ``data`` maps API calls
  (``Functional.gelu.0.forward``, ``Module.layer1.Conv2d.forward.0``) to their
  ``input_args``/``input_kwargs``/``output`` (forward) or ``input``/``output``
  (backward) tensor records, with statistics (Max/Min/Mean/Norm) and, in tensor
  mode, ``data_name`` naming a file in ``dump_tensor_data/`` beside dump.json
  (``.pt`` from PyTorch, ``.npy`` from MindSpore).

Tensor names are ``{op}.{input|output}.{index}`` (msprobe's own convention;
``input_kwargs`` items become ``input.{key}``). The ``op`` is the operator call
whose inputs and outputs the tensor belongs to: localisation needs to know
both.

Safety: ``.npy`` files are opened with ``allow_pickle=False`` (object arrays
are refused) and memory-mapped; ``.pt`` files only with
``torch.load(weights_only=True)`` where torch is importable; file names taken
from a manifest or dump.json are resolved inside the dump folder and refused
when they point outside it. Nothing is written.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from advisor.read.safe import UnsafeInput, loads_json, resolve, resolve_within

MAX_JSON_BYTES = 200_000_000
MAX_DUMP_JSON_DEPTH = 200  # dump.json nests lists of tensors of lists; never this deep
_INDEX_PREFIX = re.compile(r"^\d+_")
_TENSOR_NAME = re.compile(r"^(?P<op>.+)\.(?P<role>input|output)\.(?P<index>[^.]+(?:\.[^.]+)*)$")
_NATURAL = re.compile(r"(\d+)")
#: float dtypes we compare; anything else is compared only for equality of shape
FLOAT_KINDS = "fc"


class DumpReadError(ValueError):
    """A dump (or one tensor of it) that cannot be read; the message names the problem."""


@dataclass(slots=True)  # 10^5 of them in a big dump: no per-instance dict
class TensorRecord:
    """One dumped tensor: where it is, what it belongs to, what was recorded about it."""

    name: str  # e.g. Functional.gelu.0.forward.output.0
    op: str  # e.g. Functional.gelu.0.forward
    role: Literal["input", "output"]
    index: str  # "0", "1", "approximate" ...
    order: int  # position of its operator in execution order (0-based)
    op_type: str | None = None  # gelu, conv2d, Conv2d, LayerNorm ...
    dtype: str | None = None  # numpy-style name: float32, float16, bfloat16 ...
    shape: tuple[int, ...] | None = None
    file: Path | None = None  # absolute path of the tensor file (tensor mode)
    rel_file: str | None = None  # the same, as shown to the user
    stats: dict[str, float] | None = None  # Max/Min/Mean/Norm as recorded (statistics)
    problem: str | None = None  # why the tensor cannot be used (refused / unreadable)
    #: an .npy file's header as read when the dump was indexed: (dtype, fortran order, data offset), so that
    #: loading it does not parse the header again
    npy_layout: tuple[np.dtype, bool, int] | None = field(default=None, repr=False, compare=False)
    #: a tensor inside a record of a tfdbg2 file: (offset, length, output index) of its DebugEvent (read.dumps_tfdbg)
    blob: tuple[int, int, int] | None = field(default=None, repr=False, compare=False)

    @property
    def direction(self) -> str:
        """forward or backward (from the operator name), '' when unknown."""
        parts = self.op.split(".")
        for p in reversed(parts):
            if p in ("forward", "backward"):
                return p
        return ""


@dataclass
class Dump:
    """One dump folder of one side."""

    root: Path  # the folder holding dump.json / the .npy files
    layout: Literal["npy", "msprobe", "mindspore", "tfdbg"]
    mode: Literal["tensor", "statistics"]
    records: list[TensorRecord] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file shown to the user, why)
    framework: str | None = None
    device: str | None = None  # as the dump states it (msprobe's or a manifest's ``device``): cpu, cuda, npu ...
    #: non-tensor arguments per operator call (msprobe: ``{"type": "str", "value": "tanh"}`` items):
    #: positional ones as ``arg<i>``, keyword ones by name; values are str, int, float, bool or None
    args: dict[str, dict[str, Any]] = field(default_factory=dict)

    def ops(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in sorted(self.records, key=lambda r: r.order):
            seen.setdefault(r.op, None)
        return list(seen)


def natural_key(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t.lower() for t in _NATURAL.split(text)]


def split_name(name: str) -> tuple[str, str, str]:
    """``layer1.forward.output.0`` -> (``layer1.forward``, ``output``, ``0``); no role -> (name, output, 0)."""
    m = _TENSOR_NAME.match(name)
    if not m:
        return name, "output", "0"
    return m.group("op"), m.group("role"), m.group("index")


def msprobe_op_type(op: str) -> str | None:
    """``Functional.gelu.0.forward`` -> gelu; ``Module.layer1.Conv2d.forward.0`` -> Conv2d."""
    parts = op.split(".")
    if parts[0] == "Module" and len(parts) >= 4:
        for i, p in enumerate(parts):
            if p in ("forward", "backward") and i >= 1:
                return parts[i - 1]
    if len(parts) >= 4 and parts[-1] in ("forward", "backward"):
        return parts[-3]
    return None


def _within(root: Path, rel: str, real_root: Path | None = None) -> Path:
    try:  # NUL bytes, link loops and escapes are refused (advisor.read.safe)
        return resolve_within(root, rel, "dump folder", real_root)
    except UnsafeInput as exc:
        raise DumpReadError(str(exc)) from None


def _read_json(path: Path) -> Any:
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise DumpReadError(f"{path.name} is {size} bytes, above the {MAX_JSON_BYTES}-byte limit")
    try:
        return loads_json(path.read_bytes().decode("utf-8"), max_depth=MAX_DUMP_JSON_DEPTH)
    except UnsafeInput as exc:
        raise DumpReadError(f"{path.name}: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DumpReadError(f"{path.name} is not valid JSON: {str(exc).splitlines()[0]}") from None


def _text(value: Any) -> str | None:
    """A short string field of a dump's metadata (anything else: None)."""
    return value[:60] if isinstance(value, str) and value.strip() else None


def _dtype_name(text: str | None) -> str | None:
    if not text:
        return None
    return str(text).replace("torch.", "").replace("mindspore.", "").lower()


# -- discovery ------------------------------------------------------------

#: ``{op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}.{input|output}.{slot}.{format}.{dtype}.npy``
#: (MindSpore's synchronous dump with ``file_format: npy``, in ``rank_{id}/{net_name}/{graph_id}/{iteration}/``)
MS_DUMP_FILE = re.compile(
    r"^(?P<type>[A-Za-z0-9_]+)\.(?P<name>.+?)\.(?P<task>\d+)\.(?P<stream>\d+)\.(?P<ts>\d+)\."
    r"(?P<role>input|output)\.(?P<slot>\d+)\.(?P<fmt>[A-Za-z0-9_]+)\.(?P<dtype>[A-Za-z0-9_]+)\.npy$"
)


#: the files of a tfdbg2 dump that advisor reads (read.dumps_tfdbg)
TFDBG_FILE = re.compile(r"^tfdbg_events\.\d+\..+\.(metadata|graphs|execution|graph_execution_traces)$")


def is_dump_json(path: Path) -> bool:
    return path.name == "dump.json"


def find_dump_roots(files: list[Path]) -> list[Path]:
    """Relative folders that hold a dump: those with a dump.json, and folders of .npy files
    named ``dump`` (or below one) that are not inside a msprobe dump."""
    msprobe = sorted({p.parent for p in files if is_dump_json(p)}, key=lambda p: p.as_posix())
    tfdbg = sorted({p.parent for p in files if TFDBG_FILE.match(p.name)}, key=lambda p: p.as_posix())
    mindspore = sorted(
        {p.parent for p in files if MS_DUMP_FILE.match(p.name) and not any(p.is_relative_to(m) for m in msprobe)},
        key=lambda p: p.as_posix(),
    )
    npy_dirs: set[Path] = set()
    for p in files:
        if p.suffix.lower() != ".npy" or p.parent in mindspore:
            continue
        parts = [x.lower() for x in p.parent.parts]
        if "dump" not in parts and "dumps" not in parts:
            continue
        if any(p.is_relative_to(m) for m in msprobe):
            continue
        npy_dirs.add(p.parent)
    # a manifest names the dump folder even when its files lie in sub-folders
    for p in files:
        if p.name == "manifest.json" and any(d.is_relative_to(p.parent) for d in npy_dirs):
            npy_dirs = {d for d in npy_dirs if not d.is_relative_to(p.parent)} | {p.parent}
    return msprobe + tfdbg + mindspore + sorted(npy_dirs, key=lambda p: p.as_posix())


# -- the plain .npy layout ------------------------------------------------


def read_npy_dump(root: Path) -> Dump:
    """The plain layout: ``manifest.json`` if present, else the natural order of the .npy files."""
    dump = Dump(root=root, layout="npy", mode="tensor")
    manifest = root / "manifest.json"
    entries: list[tuple[str, str, str | None]] = []
    if manifest.is_file():
        try:
            data = _read_json(manifest)
        except DumpReadError as exc:
            dump.problems.append(("manifest.json", str(exc)))
            data = None
        if isinstance(data, dict):
            dump.framework, dump.device = _text(data.get("framework")), _text(data.get("device"))
            data = data.get("tensors", data.get("entries"))
        if data is not None and not isinstance(data, list):
            dump.problems.append(("manifest.json", "expected a list of {name, file, op_type} entries"))
            data = None
        for i, item in enumerate(data or []):
            if not isinstance(item, dict) or not isinstance(item.get("file"), str):
                dump.problems.append(("manifest.json", f"entry {i + 1} has no 'file' string"))
                continue
            name = item.get("name") if isinstance(item.get("name"), str) else None
            op_type = item.get("op_type") if isinstance(item.get("op_type"), str) else None
            entries.append((name or _name_from_file(item["file"]), item["file"], op_type))
    if not entries:
        files = sorted((p.relative_to(root).as_posix() for p in root.rglob("*.npy")), key=natural_key)
        entries = _timestamped_entries(files, dump) or [(_name_from_file(f), f, None) for f in files]
    _check_count(len(entries))
    op_order: dict[str, int] = {}
    real_root = resolve(root)
    for name, rel, op_type in entries:
        op, role, index = split_name(name)
        order = op_order.setdefault(op, len(op_order))
        rec = TensorRecord(name=name, op=op, role=role, index=index, order=order, op_type=op_type, rel_file=rel)
        try:
            rec.file = _within(root, rel, real_root)
        except DumpReadError as exc:
            rec.problem = str(exc)
            dump.records.append(rec)
            continue
        _fill_npy_header(rec)
        dump.records.append(rec)
    return dump


#: tensors one dump may hold: a comparison keeps about 4 KB per tensor pair (10^5 pairs: 0.75 GB, 50 s on
#: 2 cores, benchmarks/compare_many_bench.py), so a bigger dump is refused with the way to split it
MAX_DUMP_TENSORS = 1_000_000


def _check_count(n: int, what: str = "tensors") -> None:
    if n > MAX_DUMP_TENSORS:
        raise DumpReadError(
            f"{n:,} {what}, above advisor's limit of {MAX_DUMP_TENSORS:,} per dump: compare one step or rank "
            "at a time (its sub-folder), or dump fewer operators"
        )


#: the .npy naming of MindStudio's TensorFlow and Caffe comparisons: ``{op_name}.{output_index}.{timestamp}.npy``
#: (the tensor ``dense_1/MatMul:0`` saved as ``dense_1_MatMul.0.1626144000000000.npy``; a 16-digit timestamp)
TF_NPY = re.compile(r"^(?P<op>[A-Za-z0-9_\-]+)\.(?P<slot>\d{1,3})\.(?P<ts>\d{10,17})\.npy$")


def _timestamped_entries(files: list[str], dump: Dump) -> list[tuple[str, str, str | None]] | None:
    """The entries of a folder whose every file is named ``op.index.timestamp.npy``, in timestamp order (the
    execution order; the file names sort by operator name), each tensor once: a tensor dumped at several
    iterations is taken at its first; None for any other folder."""
    parsed = [(TF_NPY.match(Path(f).name), f) for f in files]
    if not parsed or not all(m for m, _ in parsed):
        return None
    first: dict[tuple[str, int], tuple[int, str]] = {}
    later = 0
    for m, f in parsed:
        assert m is not None
        key, ts = (m.group("op"), int(m.group("slot"))), int(m.group("ts"))
        if key in first:
            later += 1
            if ts >= first[key][0]:
                continue
        first[key] = (ts, f)
    if later:
        dump.problems.append(
            (
                "*.npy",
                f"{later} later dump(s) of tensors already dumped (other iterations): the first of each is compared",
            )
        )
    ordered = sorted(first.items(), key=lambda kv: (kv[1][0], kv[0][1]))
    types = caffe_layer_types(dump.root)
    if types:
        dump.framework = dump.framework or "caffe"
    return [(f"{op}.output.{slot}", f, types.get(op)) for (op, slot), (_, f) in ordered]


#: a Caffe prototxt larger than this is not read for layer types
MAX_PROTOTXT_BYTES = 5_000_000
_PROTO_LAYER = re.compile(r"\b(?:layer|layers)\s*\{")
_PROTO_FIELD = re.compile(r"""\b(name|type)\s*:\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z_][\w]*))""")
_NOT_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9_\-]")


def caffe_layer_types(root: Path) -> dict[str, str]:
    """Layer name (as MindStudio's ``op.index.timestamp.npy`` names spell it: ``conv1/7x7_s2`` ->
    ``conv1_7x7_s2``) -> layer type (``Convolution``), from the Caffe ``*.prototxt`` beside the dump's files;
    {} without one. The text format is read with a small scanner: each ``layer {`` block's own ``name`` and
    ``type`` (nested blocks such as ``convolution_param`` hold neither)."""
    protos = sorted(root.glob("*.prototxt"))[:1]
    try:  # a link that points out of the dump folder is not followed
        path = _within(root, protos[0].name) if protos else None
    except DumpReadError:
        return {}
    try:
        if path is None or not path.is_file() or path.stat().st_size > MAX_PROTOTXT_BYTES:
            return {}
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    out: dict[str, str] = {}
    for m in _PROTO_LAYER.finditer(text):
        depth, i, own = 1, m.end(), []
        while i < len(text) and depth:  # the block's extent, and its depth-1 text
            ch = text[i]
            if ch == "#":  # a comment to the end of the line
                j = text.find("\n", i)
                i = len(text) if j < 0 else j
                continue
            depth += (ch == "{") - (ch == "}")
            if depth == 1 and ch != "}":
                own.append(ch)
            elif depth == 1:
                own.append(" ")
            i += 1
        fields: dict[str, str] = {}
        for f in _PROTO_FIELD.finditer("".join(own)):
            fields.setdefault(f.group(1), f.group(2) or f.group(3) or f.group(4) or "")
        if fields.get("name") and fields.get("type"):
            out.setdefault(_NOT_IN_FILE_NAME.sub("_", fields["name"]), fields["type"])
    return out


def _name_from_file(rel: str) -> str:
    name = Path(rel).name
    if name.lower().endswith(".npy"):
        name = name[:-4]
    return _INDEX_PREFIX.sub("", name)


#: bytes read to find an .npy header (numpy pads headers to 64 or 128 bytes; longer ones are read again)
HEADER_PROBE = 4096


def _fill_npy_header(rec: TensorRecord) -> None:
    """dtype and shape from the .npy header (one open, one small read: a dump of 10^5 tensors is indexed
    without mapping any); a refused or broken file sets ``problem``."""
    assert rec.file is not None
    try:
        with open(rec.file, "rb", buffering=0) as raw:
            head = raw.read(HEADER_PROBE)  # one read holds the header of nearly every file
            size = os.fstat(raw.fileno()).st_size
            fh = io.BytesIO(head)
            version = np.lib.format.read_magic(fh)
            header_len = int.from_bytes(head[8:10] if version == (1, 0) else head[8:12], "little")
            if 12 + header_len > len(head) and len(head) == HEADER_PROBE:  # a long header: read it whole
                raw.seek(0)
                fh = io.BytesIO(raw.read(12 + header_len))
                np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version in ((2, 0), (3, 0)):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                raise ValueError(f"unknown .npy version {version}")
            offset = fh.tell()
        _check_npy_dtype(dtype)
        if size - offset < math.prod(int(d) for d in shape) * dtype.itemsize:
            raise DumpReadError(TRUNCATED)
    except DumpReadError as exc:
        rec.problem = str(exc)
        return
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        rec.problem = str(_npy_error(exc))
        return
    rec.dtype = "bfloat16" if _is_bfloat16_record(dtype) else str(dtype)
    rec.shape = tuple(int(s) for s in shape)
    rec.npy_layout = (dtype, bool(fortran), offset)


#: an .npy tensor of at most this many bytes is read into memory (one read); a bigger one is memory-mapped
READ_WHOLE_BYTES = 1 << 20


def _load_indexed_npy(rec: TensorRecord) -> np.ndarray:
    """The tensor of an .npy file whose header was read when the dump was indexed (``npy_layout``)."""
    assert rec.file is not None and rec.npy_layout is not None and rec.shape is not None
    dtype, fortran, offset = rec.npy_layout
    count = math.prod(rec.shape)
    order = "F" if fortran else "C"
    try:
        if count * dtype.itemsize <= READ_WHOLE_BYTES:
            with open(rec.file, "rb") as fh:
                fh.seek(offset)
                data = fh.read(count * dtype.itemsize)
            if len(data) < count * dtype.itemsize:  # the file got shorter since it was indexed
                raise DumpReadError(TRUNCATED)
            arr = np.frombuffer(data, dtype=dtype, count=count).reshape(rec.shape, order=order)
        else:
            arr = np.memmap(rec.file, dtype=dtype, mode="r", offset=offset, shape=rec.shape, order=order)
    except DumpReadError:
        raise
    except (OSError, ValueError) as exc:  # the file changed since it was indexed (shorter, gone)
        raise _npy_error(exc) from None
    if _is_bfloat16_record(dtype):
        return BFloat16Bits(arr.view(np.int16))
    return arr


TRUNCATED = "truncated .npy file (fewer bytes than its header announces)"
PICKLED = "holds pickled Python objects (refused: loading them could run code)"


def _npy_error(exc: BaseException) -> DumpReadError:
    """numpy's error on an .npy file as the reason advisor gives (pickled objects, truncation, else numpy's)."""
    text = str(exc)
    if "pickle" in text.lower() or "object" in text.lower():
        return DumpReadError(PICKLED)
    if "mmap length" in text or "larger than" in text or "cannot reshape" in text:
        return DumpReadError(TRUNCATED)
    return DumpReadError(f"not a readable .npy file: {text}" if text else "not a readable .npy file")


def _is_bfloat16_record(dtype: np.dtype) -> bool:
    """numpy has no bfloat16: ml_dtypes and torch-to-numpy writers save it as raw 2-byte records ('<V2')."""
    return dtype.kind == "V" and dtype.itemsize == 2 and dtype.names is None


def _check_npy_dtype(dtype: np.dtype) -> None:
    """Raises DumpReadError for a dtype the comparison does not take (objects, float8 records, text...)."""
    if dtype.hasobject:
        raise DumpReadError(PICKLED)
    if _is_bfloat16_record(dtype):
        return
    if dtype.kind == "V" and dtype.itemsize == 1 and dtype.names is None:
        raise DumpReadError(
            "raw 1-byte values (dtype |V1, a float8 tensor as ml_dtypes writes it): the .npy header does not say "
            "whether it is float8 e4m3 or e5m2, so it is not compared; save float8 tensors as float32"
        )
    if dtype.kind not in "biufc":
        raise DumpReadError(f"not numeric (dtype {dtype}): not compared")


def open_npy(path: Path) -> np.ndarray:
    """A read-only memory map of an .npy file; refuses pickled objects and truncated files."""
    if not path.is_file():
        raise DumpReadError("file not found")
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        raise _npy_error(exc) from None
    except (OSError, EOFError) as exc:
        raise DumpReadError(f"not a readable .npy file: {exc}") from None
    if not isinstance(arr, np.ndarray):
        raise DumpReadError("not a single array")
    _check_npy_dtype(arr.dtype)
    if _is_bfloat16_record(arr.dtype):
        return BFloat16Bits(arr.view(np.int16))
    return arr


def read_dump(root: Path) -> Dump:
    """Any layout, by what the folder holds. Raises DumpReadError when nothing can be read."""
    if (root / "dump.json").is_file():
        from advisor.read.dumps_msprobe import read_msprobe_dump

        return read_msprobe_dump(root)
    if any(TFDBG_FILE.match(p.name) for p in root.glob("tfdbg_events.*")):
        from advisor.read.dumps_tfdbg import read_tfdbg_dump

        return read_tfdbg_dump(root)
    if any(MS_DUMP_FILE.match(p.name) for p in root.glob("*.npy")):
        from advisor.read.dumps_mindspore import read_mindspore_dump

        return read_mindspore_dump(root)
    return read_npy_dump(root)


# -- loading tensors ------------------------------------------------------


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except Exception:
        return False
    return True


class BFloat16Bits(np.ndarray):
    """A bfloat16 tensor as its raw 16-bit patterns (int16 data; numpy has no bfloat16).

    Views and slices keep the class; the comparison converts them chunk by chunk
    (``float_chunk``) or bit by bit in the compiled kernel, so a big tensor is never
    copied whole into float32.
    """

    def __new__(cls, bits: np.ndarray) -> "BFloat16Bits":
        return np.asarray(bits).view(np.int16).view(cls)


def float_chunk(x: np.ndarray) -> np.ndarray:
    """``x`` itself, or the float32 values (exact) of a ``BFloat16Bits`` slice."""
    if isinstance(x, BFloat16Bits):
        return (np.asarray(x).view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
    return x


def load_tensor(rec: TensorRecord) -> np.ndarray:
    """The tensor as a numpy array (a memory map for .npy and .pt). Raises DumpReadError with the reason.

    bfloat16 tensors from ``.pt`` files come back as ``BFloat16Bits`` (their bit patterns, mapped,
    converted to float32 exactly where they are read), other dtypes unchanged.
    """
    if rec.problem:
        raise DumpReadError(rec.problem)
    if rec.file is None:
        raise DumpReadError("no tensor file (statistics only)")
    if rec.blob is not None:
        from advisor.read.dumps_tfdbg import load_tfdbg_tensor

        return load_tfdbg_tensor(rec)
    suffix = rec.file.suffix.lower()
    if suffix == ".npy":
        return _load_indexed_npy(rec) if rec.npy_layout is not None else open_npy(rec.file)
    if suffix in (".pt", ".pth"):
        return _load_pt(rec.file)
    raise DumpReadError(f"unknown tensor file type '{suffix}'")


def _load_pt(path: Path) -> np.ndarray:
    try:
        import torch
    except Exception:
        raise DumpReadError(
            "a PyTorch .pt tensor: reading it needs torch (pip install accuracy-advisor[torch]); "
            "compared on the statistics of dump.json instead"
        ) from None
    try:  # memory-mapped (torch >= 2.1, zip files): pages are read as the pass reaches them
        obj = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception:  # a legacy (non-zip) file cannot be mapped, or an older torch
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # weights_only refuses anything but tensors and plain containers
            raise DumpReadError(
                f"not a plain tensor file (torch.load with weights_only=True refused it: {type(exc).__name__})"
            ) from None
    if not isinstance(obj, torch.Tensor):
        raise DumpReadError(f"holds a {type(obj).__name__}, not a tensor")
    t = obj.detach()
    if t.dtype == torch.bfloat16:  # no copy: the mapped bits, read as float32 chunk by chunk
        return BFloat16Bits(t.contiguous().view(torch.int16).numpy())
    if t.dtype.is_floating_point and t.element_size() == 1:  # float8 (e4m3, e5m2): numpy has none; exact in float32
        return t.float().contiguous().numpy()
    if (
        t.is_complex()
        or t.dtype.is_floating_point
        or t.dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)
    ):
        return t.contiguous().numpy()
    return t.float().contiguous().numpy()
