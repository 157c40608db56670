"""MindSpore's native synchronous dump (``rank_{id}/{net}/{graph}/{iteration}/*.npy``) -> a ``Dump``."""

from __future__ import annotations

from typing import Literal

import re
from pathlib import Path


from advisor.read.dump_files import (
    MAX_JSON_BYTES,
    MS_DUMP_FILE,
    Dump,
    DumpReadError,
    TensorRecord,
    dtype_name,
    file_within,
)
from advisor.read.dump_npy import fill_npy_header


def _ms_order(root: Path) -> list[str]:
    """Kernels in execution order, full names with scope (``Default/fc1-Dense/MatMul-op0``), from the
    ``execution_order/ms_execution_order_graph_{graph}.csv`` MindSpore writes beside the net's folder."""
    graph = root.parent.name
    rank = root.parent.parent.parent
    try:  # inside the rank's folder: an execution_order that is a link out of it is not followed
        csv_path = file_within(rank, f"execution_order/ms_execution_order_graph_{graph}.csv")
    except DumpReadError:
        return []
    if not csv_path.is_file() or csv_path.stat().st_size > MAX_JSON_BYTES:
        return []
    try:
        lines = csv_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [ln.split(",")[-1].strip() for ln in lines[1:] if "/" in ln]


def _ms_scope(full: str) -> tuple[list[str], str | None, str]:
    """``Default/block-Block/fc1-Dense/MatMul-op0`` -> (["block", "fc1"], "Dense", "MatMul-op0")."""
    parts = full.split("/")
    modules = [p for p in parts[1:-1] if p]
    names = [m.split("-", 1)[0] for m in modules]
    cls = modules[-1].split("-", 1)[1] if modules and "-" in modules[-1] else None
    return names, cls, parts[-1]


def read_mindspore_dump(root: Path) -> Dump:
    """One iteration folder of MindSpore's synchronous dump (one .npy per kernel input/output).

    Two views of the same files: each kernel as ``<module path>.<kernel>.forward`` (op type: the kernel's,
    e.g. MatMul), and each module of the net's scope (``fc1.forward``, op type its Cell class, e.g. Dense)
    with the first kernel's input 0 and the last kernel's output 0 -- the names a PyTorch module dump
    uses, so a port's dumps match module by module. Parameter files are not operators and are skipped.
    """
    dump = Dump(root=root, layout="mindspore", mode="tensor", framework="mindspore")
    files: dict[str, list[tuple[re.Match, str]]] = {}
    for p in sorted(root.glob("*.npy"), key=lambda p: p.name):
        m = MS_DUMP_FILE.match(p.name)
        if m is None or m.group("type") == "Parameter":
            continue
        files.setdefault(m.group("name"), []).append((m, p.name))
    if not files:
        raise DumpReadError("no MindSpore dump files (TYPE.NAME.TASK.STREAM.TIME.input|output.SLOT.FORMAT.DTYPE.npy)")
    order = _ms_order(root)
    flat = {full.replace("/", "_"): full for full in order}
    first_ts = {name: min(int(m.group("ts")) for m, _ in recs) for name, recs in files.items()}
    kernels = [flat[n] for n in (f.replace("/", "_") for f in order) if n in files]
    kernels += [n for n in sorted(files, key=lambda n: first_ts[n]) if n not in flat]  # without the csv: by time
    op_index = 0
    opened: set[tuple[str, ...]] = set()
    scopes: dict[tuple[str, ...], list[str]] = {}
    classes: dict[tuple[str, ...], str | None] = {}
    for full in kernels:
        name = full.replace("/", "_")
        modules, cls, kernel = _ms_scope(full) if "/" in full else ([], None, full)
        for depth in range(1, len(modules) + 1):
            key = tuple(modules[:depth])
            scopes.setdefault(key, []).append(name)
            if key not in opened:  # a module's record comes before its kernels' (execution order of its start)
                opened.add(key)
                classes[key] = cls if depth == len(modules) else None
                scopes[key].insert(0, str(op_index))
                op_index += 1
        op = ".".join(modules + [kernel]) + ".forward"
        for m, fname in sorted(files[name], key=lambda x: (x[0].group("role") != "input", int(x[0].group("slot")))):
            rec = TensorRecord(
                name=f"{op}.{m.group('role')}.{m.group('slot')}",
                op=op,
                role=m.group("role"),  # type: ignore[arg-type]
                index=m.group("slot"),
                order=op_index,
                op_type=m.group("type"),
                dtype=dtype_name(m.group("dtype")),
                rel_file=fname,
                file=root / fname,
            )
            fill_npy_header(rec)
            dump.records.append(rec)
        op_index += 1
    for key, members in scopes.items():
        order_of, kernel_names = int(members[0]), members[1:]
        op = ".".join(key) + ".forward"
        ends: tuple[tuple[Literal["input", "output"], str, str], ...] = (
            ("input", kernel_names[0], "0"),
            ("output", kernel_names[-1], "0"),
        )
        for role, kernel_name, slot in ends:
            hit = next((f for m, f in files[kernel_name] if m.group("role") == role and m.group("slot") == slot), None)
            if hit is None:
                continue
            m = MS_DUMP_FILE.match(hit)
            rec = TensorRecord(
                name=f"{op}.{role}.0",
                op=op,
                role=role,
                index="0",
                order=order_of,  # type: ignore[arg-type]
                op_type=classes.get(key),
                dtype=dtype_name(m.group("dtype")) if m else None,
                rel_file=hit,
                file=root / hit,
            )
            fill_npy_header(rec)
            dump.records.append(rec)
    dump.records.sort(key=lambda r: (r.order, r.role != "input", r.index))
    return dump
