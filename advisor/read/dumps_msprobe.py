"""msprobe's dump layout: ``dump.json`` and its ``dump_tensor_data/`` -> a ``Dump`` of tensor records."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal


from advisor.read.dump_files import (
    MAX_DUMP_CALLS,
    MAX_DUMP_JSON_DEPTH,
    MAX_DUMP_TENSORS,
    MAX_JSON_BYTES,
    Dump,
    DumpReadError,
    TensorRecord,
    check_count,
    dtype_name,
    file_within,
    metadata_text,
)
from advisor.read.dump_json import DumpJson, DumpJsonError, read_dump_calls
from advisor.read.safe import finite_float


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


def _read_calls(path: Path) -> DumpJson:
    """dump.json's members and its first MAX_DUMP_CALLS operator calls (read.dump_json: never decoded whole)."""
    try:
        got = read_dump_calls(path, MAX_DUMP_CALLS, MAX_DUMP_JSON_DEPTH, MAX_JSON_BYTES)
    except DumpJsonError as exc:
        raise DumpReadError(f"{path.name} {exc}") from None
    except UnicodeDecodeError as exc:
        raise DumpReadError(f"{path.name} is not valid JSON: {str(exc).splitlines()[0]}") from None
    if got.calls is None:
        raise DumpReadError("dump.json has no 'data' mapping of API calls")
    return got


def read_msprobe_dump(root: Path) -> Dump:
    """``dump.json`` (+ ``dump_tensor_data/`` in tensor mode)."""
    got = _read_calls(root / "dump.json")
    meta, calls = got.meta, got.calls or {}
    task = str(meta.get("task") or "statistics").lower()
    mode: Literal["tensor", "statistics"] = "tensor" if task == "tensor" else "statistics"
    dump = Dump(
        root=root,
        layout="msprobe",
        mode=mode,
        framework=metadata_text(meta.get("framework")),
        device=metadata_text(meta.get("device")),
    )
    data_dir = root / "dump_tensor_data"  # dump_data_dir in the json is the writer's path: not trusted
    if got.more:
        dump.problems.append(
            (
                "dump.json",
                f"more than {MAX_DUMP_CALLS:,} operator calls (advisor's limit per dump): the first {MAX_DUMP_CALLS:,} "
                "are compared; compare one step or rank at a time (its sub-folder), or dump fewer operators",
            )
        )
    for order, (op, entry) in enumerate(calls.items()):
        if isinstance(entry, dict):
            _add_call(dump, op, entry, order, data_dir)
            if len(dump.records) > MAX_DUMP_TENSORS:  # refused as soon as it is known
                check_count(len(dump.records))
    return dump


def _add_call(dump: Dump, op: str, entry: dict, order: int, data_dir: Path) -> None:
    """The tensor records (and the non-tensor arguments) of one operator call."""
    op_type = msprobe_op_type(op)
    for key, role in (("input_args", "input"), ("input", "input"), ("input_kwargs", "input"), ("output", "output")):
        items = entry.get(key)
        if isinstance(items, dict):
            pairs = [(str(k), v) for k, v in items.items()]
        elif isinstance(items, list):
            pairs = [(str(i), v) for i, v in enumerate(items)]
        else:
            continue
        for index, item in pairs:
            if key in ("input_args", "input_kwargs"):
                value = _scalar_arg(item)
                if value is not _NOT_SCALAR:
                    dump.args.setdefault(op, {})[f"arg{index}" if key == "input_args" else index] = value
            for sub_index, rec_json in _tensor_items(index, item):
                dump.records.append(
                    _msprobe_record(op, role, sub_index, order, op_type, rec_json, dump.mode, data_dir, dump.root)
                )


_NOT_SCALAR = object()
_SCALAR_TYPES = {"int": int, "float": float, "bool": bool, "str": str}


def _scalar_arg(item: Any) -> Any:
    """The value of a non-tensor argument record (``{"type": "int", "value": 1}``), else ``_NOT_SCALAR``."""
    if not isinstance(item, dict) or "value" not in item or "Tensor" in str(item.get("type", "")):
        return _NOT_SCALAR
    value = item["value"]
    if value is None or isinstance(value, (int, float, bool, str)):
        return value[:200] if isinstance(value, str) else value
    return _NOT_SCALAR


def _tensor_items(index: str, item: Any) -> list[tuple[str, dict]]:
    """Tensor records of one argument (lists and tuples of tensors are flattened as index.k)."""
    if isinstance(item, dict):
        return [(index, item)] if "Tensor" in str(item.get("type", "")) or "data_name" in item else []
    if isinstance(item, list):
        out: list[tuple[str, dict]] = []
        for k, sub in enumerate(item):
            out.extend(_tensor_items(f"{index}.{k}", sub))
        return out
    return []


def _msprobe_record(
    op: str, role: str, index: str, order: int, op_type: str | None, item: dict, mode: str, data_dir: Path, root: Path
) -> TensorRecord:
    shape = item.get("shape")
    stats = {}
    for k in ("Max", "Min", "Mean", "Norm"):
        v = item.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            stats[k] = finite_float(v)  # an integer of 400 digits is +-inf, not an OverflowError
        elif isinstance(v, str) and v.lower() in ("nan", "inf", "-inf"):
            stats[k] = float(v)
    rec = TensorRecord(
        name=f"{op}.{role}.{index}",
        op=op,
        role=role,
        index=index,
        order=order,  # type: ignore[arg-type]
        op_type=op_type,
        dtype=dtype_name(item.get("dtype")),
        shape=tuple(int(s) for s in shape)
        if isinstance(shape, list)
        and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**62 for s in shape)
        else None,
        stats=stats or None,
    )
    name = item.get("data_name")
    if mode == "tensor" and isinstance(name, str) and name not in ("-1", ""):
        rec.rel_file = f"dump_tensor_data/{name}"
        try:  # inside the dump's own folder: a dump_tensor_data that is a link out of it is not followed
            rec.file = file_within(data_dir.parent, f"{data_dir.name}/{name}")
        except DumpReadError as exc:
            rec.problem = str(exc)
            return rec
        if not rec.file.is_file():
            rec.problem = "tensor file named in dump.json is missing"
    return rec
