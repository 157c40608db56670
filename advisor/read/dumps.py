"""Per-operator dumps -> tensor records (no judgement, no comparison).

The layouts (docs/run-layout.md, docs/comparing-dumps.md); msprobe's and MindSpore's own readers are in
``dumps_msprobe.py`` and ``dumps_mindspore.py``, on the records and helpers of ``dump_files.py``:

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

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from advisor.read.dump_files import (
    MS_DUMP_FILE,
    BFloat16Bits,
    Dump,
    DumpReadError,
    TensorRecord,
    check_count,
    file_within,
    float_chunk,
    metadata_text,
    natural_key,
    read_dump_json,
    split_name,
)
from advisor.read.dump_npy import fill_npy_header, load_indexed_npy, open_npy
from advisor.read.safe import resolve

_INDEX_PREFIX = re.compile(r"^\d+_")


# -- discovery ------------------------------------------------------------

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
            data = read_dump_json(manifest)
        except DumpReadError as exc:
            dump.problems.append(("manifest.json", str(exc)))
            data = None
        if isinstance(data, dict):
            dump.framework, dump.device = metadata_text(data.get("framework")), metadata_text(data.get("device"))
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
    check_count(len(entries))
    op_order: dict[str, int] = {}
    real_root = resolve(root)
    for name, rel, op_type in entries:
        op, role, index = split_name(name)
        order = op_order.setdefault(op, len(op_order))
        rec = TensorRecord(name=name, op=op, role=role, index=index, order=order, op_type=op_type, rel_file=rel)
        try:
            rec.file = file_within(root, rel, real_root)
        except DumpReadError as exc:
            rec.problem = str(exc)
            dump.records.append(rec)
            continue
        fill_npy_header(rec)
        dump.records.append(rec)
    return dump


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
#: blocks nested deeper than this are skipped (Caffe's own nest three or four levels)
MAX_PROTOTXT_DEPTH = 64
#: what the scanner stops at: a comment to the end of its line, a layer block's start, another block's bounds
_PROTO_TOKEN = re.compile(r"#[^\n]*|\b(?:layer|layers)\s*\{|[{}]")
_PROTO_FIELD = re.compile(r"""\b(name|type)\s*:\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z_][\w]*))""")
_NOT_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9_\-]")


def caffe_layer_types(root: Path) -> dict[str, str]:
    """Layer name (as MindStudio's ``op.index.timestamp.npy`` names spell it: ``conv1/7x7_s2`` ->
    ``conv1_7x7_s2``) -> layer type (``Convolution``), from the Caffe ``*.prototxt`` beside the dump's files;
    {} without one. The text format is read with a small scanner (``prototxt_layers``)."""
    protos = sorted(root.glob("*.prototxt"))[:1]
    try:  # a link that points out of the dump folder is not followed
        path = file_within(root, protos[0].name) if protos else None
    except DumpReadError:
        return {}
    try:
        if path is None or not path.is_file() or path.stat().st_size > MAX_PROTOTXT_BYTES:
            return {}
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    out: dict[str, str] = {}
    for fields in prototxt_layers(text):
        if fields.get("name") and fields.get("type"):
            out.setdefault(_NOT_IN_FILE_NAME.sub("_", fields["name"]), fields["type"])
    return out


@dataclass
class _Block:
    start: int  # where it opens in the text (layers are returned in this order)
    is_layer: bool
    own: list[str] = field(default_factory=list)  # its text outside the blocks nested in it


def prototxt_layers(text: str) -> list[dict[str, str]]:
    """The ``name`` and ``type`` of each ``layer {`` block, from its own text (nested blocks such as
    ``convolution_param`` hold neither), in the order the blocks open. One pass over the text: an unclosed block
    ends with the text, blocks nested deeper than MAX_PROTOTXT_DEPTH are skipped."""
    stack: list[_Block] = []
    done: list[_Block] = []
    too_deep = pos = 0  # blocks open below the deepest kept one; where the text not yet given to a block starts
    for m in _PROTO_TOKEN.finditer(text):
        if stack and not too_deep:
            stack[-1].own.append(text[pos : m.start()])
        pos, token = m.end(), m.group()
        if token.startswith("#"):
            continue
        if token == "}":
            if too_deep:
                too_deep -= 1
            elif stack:
                _close(stack, done)
        elif len(stack) >= MAX_PROTOTXT_DEPTH:
            too_deep += 1
        else:
            stack.append(_Block(m.start(), token != "{"))
    if stack and not too_deep:
        stack[-1].own.append(text[pos:])
    while stack:  # unclosed at the end of the text
        _close(stack, done)
    return [_layer_fields("".join(b.own)) for b in sorted(done, key=lambda b: b.start)]


def _close(stack: list[_Block], done: list[_Block]) -> None:
    block = stack.pop()
    if block.is_layer:
        done.append(block)
    if stack:
        stack[-1].own.append(" ")


def _layer_fields(own: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for f in _PROTO_FIELD.finditer(own):
        fields.setdefault(f.group(1), f.group(2) or f.group(3) or f.group(4) or "")
    return fields


def _name_from_file(rel: str) -> str:
    name = Path(rel).name
    if name.lower().endswith(".npy"):
        name = name[:-4]
    return _INDEX_PREFIX.sub("", name)


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
        return load_indexed_npy(rec) if rec.npy_layout is not None else open_npy(rec.file)
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


__all__ = [
    "MS_DUMP_FILE",
    "BFloat16Bits",
    "Dump",
    "DumpReadError",
    "TensorRecord",
    "find_dump_roots",
    "float_chunk",
    "load_tensor",
    "natural_key",
    "open_npy",
    "read_dump",
    "read_npy_dump",
    "split_name",
]
