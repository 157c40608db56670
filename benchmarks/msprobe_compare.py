"""Time msprobe's (PyPI ``mindstudio-probe``) tensor-mode compare on the benchmark's plain-layout dumps.

    python benchmarks/msprobe_compare.py RUN_PLAIN BASE_PLAIN --msprobe /path/to/venv/bin/msprobe
        [--framework pytorch|mindspore] [--workdir DIR] [--keep]

msprobe lives in its own virtual environment (it pulls pandas, onnx,
tensorboard, ...), so this script never imports it: it rewrites each plain
dump (``NNNNN_layerN.forward.output.0.npy`` files) into msprobe's dump layout
and runs ``msprobe compare`` as a subprocess:

    OUT/step0/rank0/dump.json        task "tensor", level "L1", one entry per op, in file-name order,
                                     each tensor with type/dtype/shape/Max/Min/Mean/Norm/requires_grad/data_name
    OUT/step0/rank0/stack.json       one (synthetic) frame per op, so that msprobe runs with its stack column
    OUT/step0/rank0/construct.json   {}
    OUT/step0/rank0/dump_tensor_data/Functional.<op>.0.forward.output.0.pt (or .npy)

Framework "pytorch" (the default) is the one msprobe 26.2.0 compares without
MindSpore: every tensor is written again as a ``.pt`` file (``torch.save`` of
a copy-on-write memory map of the ``.npy``: no copy in memory, but the bytes
are written to disk once more), so torch is needed here and in msprobe's venv.
Framework "mindspore" keeps the ``.npy`` files as hard links (symbolic links
across file systems; msprobe resolves them and logs a warning), nothing is
copied, but msprobe's MindSpore compare imports ``mindspore`` (its package's
``__init__`` does), so it fails unless MindSpore is installed in msprobe's venv.

The compare is ``msprobe compare -tp RUN/step0 -gp BASE/step0 -o OUT``
(msprobe's "auto" mode, every metric it has in tensor mode: Cosine, EucDist,
MaxAbsErr, MaxRelativeErr, One/Five Thousandth Err Ratio, plus the statistics
comparison and its Result verdict), with OMP/OPENBLAS/MKL threads set to 2.
Its start-up (imports of pandas, torch if present, ...) is timed separately
on a 2-tensor pair. The statistics in dump.json are computed here (one pass
over each dump, not timed): msprobe takes them from dump.json, not from the
tensors.

Imports: numpy and the standard library; torch only when writing the "pytorch" layout.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MB = 1 << 20
_PLAIN = re.compile(r"^(?P<op>.+?)\.(?P<dir>forward|backward)\.(?P<io>input|output)\.(?P<idx>\d+)\.npy$")
_MS_DTYPE = {"float16": "Float16", "float32": "Float32", "float64": "Float64", "int8": "Int8", "int16": "Int16",
             "int32": "Int32", "int64": "Int64", "uint8": "UInt8", "bool": "Bool"}
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _stats(a: np.ndarray) -> dict:
    """Max/Min/Mean/Norm as msprobe writes them, accumulated in float64 over 1M-element chunks."""
    flat = a.reshape(-1)
    if flat.size == 0:
        return {"Max": None, "Min": None, "Mean": None, "Norm": None}
    mx, mn, total, sq = -np.inf, np.inf, 0.0, 0.0
    for i in range(0, flat.size, MB):
        c = np.asarray(flat[i:i + MB], dtype=np.float64)
        mx, mn = max(mx, float(c.max())), min(mn, float(c.min()))
        total += float(c.sum())
        sq += float(np.dot(c, c))
    if a.dtype == np.bool_:
        mx, mn = bool(mx), bool(mn)
    return {"Max": mx, "Min": mn, "Mean": total / flat.size, "Norm": float(np.sqrt(sq))}


def _link(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system (or links not allowed): a symbolic link to the real file
        os.symlink(os.path.realpath(src), dst)


def _save_pt(src: Path, dst: Path) -> None:
    import torch  # optional: only the "pytorch" layout needs it

    arr = np.load(src, mmap_mode="c")  # copy-on-write map: writable for torch, the file stays untouched
    torch.save(torch.from_numpy(arr), dst)
    del arr


def write_msprobe_layout(plain_dir: Path, out_dir: Path, framework: str = "pytorch") -> Path:
    """Turn a plain dump folder into an msprobe tensor-mode dump; returns ``out_dir/step0`` (the compare input).

    One dump.json entry per op (``NNNNN_layerN.forward.output.0.npy`` -> ``Functional.NNNNN_layerN.0.forward``,
    its output 0), in file-name order; ``.npy`` files are linked (framework "mindspore") or rewritten as ``.pt``
    (framework "pytorch", needs torch).
    """
    if framework not in ("mindspore", "pytorch"):
        raise ValueError(f"framework must be 'mindspore' or 'pytorch', not {framework!r}")
    plain_dir, out_dir = Path(plain_dir), Path(out_dir)
    rank = out_dir / "step0" / "rank0"
    data_dir = rank / "dump_tensor_data"
    data_dir.mkdir(parents=True, exist_ok=False)
    suffix = ".npy" if framework == "mindspore" else ".pt"
    entries: dict[str, dict] = {}
    stack: dict[str, list] = {}
    for path in sorted(p for p in plain_dir.iterdir() if p.suffix == ".npy"):
        m = _PLAIN.match(path.name)
        if m:
            op, direction, io, idx = m["op"], m["dir"], m["io"], int(m["idx"])
        else:
            op, direction, io, idx = path.stem, "forward", "output", 0
        op = re.sub(r"[^A-Za-z0-9_]", "_", op)
        key = f"Functional.{op}.0.{direction}"
        if key not in entries:
            entries[key] = ({"input_args": [], "input_kwargs": {}, "output": []} if direction == "forward"
                            else {"input": [], "output": []})
            frame = f"File benchmarks/generated.py, line {len(stack) + 1}, in forward, \n y = {op}(x)"
            stack[str(len(stack))] = [[key], [frame]]
        slot = entries[key]["input_args" if (io == "input" and direction == "forward") else io]
        arr = np.load(path, mmap_mode="r")
        data_name = f"{key}.{io}.{idx}{suffix}"
        dtype = _MS_DTYPE.get(arr.dtype.name, arr.dtype.name) if framework == "mindspore" else f"torch.{arr.dtype.name}"
        record = {"type": "mindspore.Tensor" if framework == "mindspore" else "torch.Tensor",
                  "dtype": dtype, "shape": list(arr.shape), **_stats(arr), "requires_grad": False,
                  "data_name": data_name}
        del arr
        slot.append((idx, record))
        if framework == "mindspore":
            _link(path, data_dir / data_name)
        else:
            _save_pt(path, data_dir / data_name)
    if not entries:
        raise ValueError(f"no .npy files in {plain_dir}")
    for entry in entries.values():  # by index (file-name order puts input.10 before input.2)
        for name, slot in entry.items():
            if isinstance(slot, list):
                entry[name] = [rec for _, rec in sorted(slot, key=lambda x: x[0])]
    dump = {"task": "tensor", "level": "L1", "framework": framework, "dump_data_dir": str(data_dir), "data": entries}
    (rank / "dump.json").write_text(json.dumps(dump, indent=1))
    (rank / "stack.json").write_text(json.dumps(stack, indent=1))
    (rank / "construct.json").write_text("{}")
    return out_dir / "step0"


def _env() -> dict:
    env = dict(os.environ)
    env.update({v: "2" for v in THREAD_VARS})
    return env


def _run(msprobe_cmd: list[str], run_dump: Path, base_dump: Path, out: Path) -> tuple[float, int, list[str]]:
    """One ``msprobe compare``; returns (seconds, compared rows, command). Raises if it fails or writes nothing."""
    out.mkdir(parents=True, exist_ok=True)
    cmd = [*msprobe_cmd, "compare", "-tp", str(run_dump), "-gp", str(base_dump), "-o", str(out)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=_env(), cwd=out,
                          stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    results = sorted(out.glob("**/compare_result*.csv"))
    # msprobe logs its errors and may still exit 0 (its per-rank compare swallows them): check its output too
    errors = [line for line in (proc.stdout + proc.stderr).splitlines()
              if "[ERROR]" in line and "CANN environment" not in line]  # msprobe always logs the CANN one
    if proc.returncode != 0 or not results or errors:
        tail = (proc.stderr[-3000:] + "\n--- stdout ---\n" + proc.stdout[-3000:]).strip()
        raise RuntimeError(f"msprobe compare failed (exit {proc.returncode}, {len(results)} result file(s)): "
                           f"{' '.join(cmd)}\n{tail}")
    csv.field_size_limit(1 << 30)
    with results[-1].open(newline="") as fh:
        rows = sum(1 for _ in csv.reader(fh)) - 1  # minus the header; quoted fields hold newlines
    return seconds, rows, cmd


def _tiny_pair(folder: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    run, base = folder / "plain_run", folder / "plain_base"
    run.mkdir(parents=True)
    base.mkdir(parents=True)
    for i in range(2):
        b = rng.standard_normal(1024, dtype=np.float32)
        np.save(base / f"{i:05d}_layer{i}.forward.output.0.npy", b)
        np.save(run / f"{i:05d}_layer{i}.forward.output.0.npy", b + np.float32(1e-6) * b)
    return run, base


def time_msprobe(run_dump: Path, base_dump: Path, msprobe_cmd: list[str], workdir: Path,
                 framework: str = "pytorch") -> dict:
    """Time ``msprobe compare`` on two msprobe-layout dumps (the ``step0`` folders ``write_msprobe_layout`` returns).

    ``startup_seconds`` is a compare of a 2-tensor pair (written under ``workdir`` in the same framework's
    layout), so ``seconds - startup_seconds`` is about the work that grows with the dumps.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    tiny = Path(tempfile.mkdtemp(prefix="tiny-", dir=workdir))
    t_run, t_base = _tiny_pair(tiny)
    startup, tiny_rows, _ = _run(msprobe_cmd, write_msprobe_layout(t_run, tiny / "ms_run", framework),
                                 write_msprobe_layout(t_base, tiny / "ms_base", framework), tiny / "out")
    if tiny_rows != 2:
        raise RuntimeError(f"msprobe compared {tiny_rows} rows of the 2-tensor pair (expected 2)")
    out = Path(tempfile.mkdtemp(prefix="out-", dir=workdir))
    seconds, rows, cmd = _run(msprobe_cmd, Path(run_dump), Path(base_dump), out)
    return {"seconds": round(seconds, 3), "startup_seconds": round(startup, 3), "rows": rows,
            "command": " ".join(cmd), "threads": {v: "2" for v in THREAD_VARS}}


def _nbytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in Path(folder).iterdir() if p.suffix == ".npy")


def _msprobe_version(msprobe_cmd: list[str]) -> str | None:
    try:
        proc = subprocess.run([*msprobe_cmd, "--version"], check=False, capture_output=True, text=True, env=_env(),
                              timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # "msprobe 26.2.0 (078e720)", after a logged "[ERROR] ... CANN environment ..." line
    m = re.search(r"^msprobe\s+(\S+.*)$", proc.stdout + "\n" + proc.stderr, re.MULTILINE)
    return m.group(1).strip() if m else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="plain-layout dump of the run (folder of .npy files)")
    ap.add_argument("base", type=Path, help="plain-layout dump of the baseline")
    ap.add_argument("--msprobe", default="msprobe", help="msprobe executable (in its own venv)")
    ap.add_argument("--framework", choices=("pytorch", "mindspore"), default="pytorch",
                    help="msprobe layout: pytorch (.pt, written again; needs torch here and in msprobe's venv) or "
                         "mindspore (.npy, linked; msprobe then needs MindSpore in its venv)")
    ap.add_argument("--workdir", type=Path, default=None, help="where to write the msprobe layout and its output")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args(argv)
    msprobe_cmd = [args.msprobe]
    # beside the plain dumps by default, so that hard links work (same file system)
    work = Path(tempfile.mkdtemp(prefix="msprobe-bench-", dir=args.workdir or args.run.resolve().parent))
    try:
        t0 = time.perf_counter()
        run = write_msprobe_layout(args.run, work / "run", args.framework)
        base = write_msprobe_layout(args.base, work / "baseline", args.framework)
        layout_s = time.perf_counter() - t0
        res = time_msprobe(run, base, msprobe_cmd, work, args.framework)
        nbytes = _nbytes(args.run) + _nbytes(args.base)
        res.update({
            "msprobe_version": _msprobe_version(msprobe_cmd), "framework": args.framework,
            "dumps_bytes": nbytes, "tensors_per_side": len([p for p in args.run.iterdir() if p.suffix == ".npy"]),
            "layout_seconds": round(layout_s, 1), "load_1min": round(os.getloadavg()[0], 1),
            "MBps": round(nbytes / res["seconds"] / 1e6, 1),
            "MBps_without_startup": round(nbytes / max(res["seconds"] - res["startup_seconds"], 1e-9) / 1e6, 1),
        })
    finally:
        if args.keep:
            print(f"work folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
