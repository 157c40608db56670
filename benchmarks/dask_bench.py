"""Scaling of a dump-tree comparison on Dask against the in-process path (dumps generated here, never committed).

    python benchmarks/dask_bench.py [--ranks 64] [--steps 2] [--tensors 4] [--elements 262144] [--dir /tmp]

Two trees of ``ranks x steps`` plain dumps (``step{s}/rank{r}``, ``tensors`` float32 tensors of ``elements``
values each) that differ slightly everywhere (every pair is computed in full). Measured in one run, on the same
page-cached files, the metrics of every variant checked equal to the in-process result:
- in-process: ``compare_tree`` on the thread runner with 1 worker (the reference) and with ``--workers`` threads;
- Dask: a LocalCluster of 1, 2 and 4 single-threaded worker processes (cluster start-up not timed; the first
  comparison, where each worker imports advisor and loads the compiled kernel, is reported apart);
  the speed-up against the 1-worker in-process path, and the share of linear scaling up to the cores there are;
- peak resident memory of each Dask worker (VmHWM) next to the chunk the metrics pass streams through;
- the scheduler's overhead per task: the time of 2,000 empty tasks per task, against the mean compute of one
  comparison task.
Results are printed as JSON and appended to benchmarks/dask_results.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from advisor.compare.dask_runner import TASK_BYTES, DaskRunner, batches  # noqa: E402
from advisor.compare.engine import KERNEL_MIN_BYTES  # noqa: E402
from advisor.compare.kernel_loader import compiled_kernel  # noqa: E402
from advisor.compare.metrics import CHUNK  # noqa: E402
from advisor.compare.runner import ThreadRunner  # noqa: E402
from advisor.compare.tree_compare import compare_tree  # noqa: E402


def make(root: Path, ranks: int, steps: int, tensors: int, elements: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(elements).astype(np.float32)
    noise = (x * np.float32(1e-3)).astype(np.float32)
    for side, arr in (("base", x), ("run", x + noise)):
        for s in range(steps):
            for r in range(ranks):
                folder = root / side / f"step{s}" / f"rank{r}"
                folder.mkdir(parents=True)
                entries = []
                for t in range(tensors):
                    name = f"layer{t}.forward.output.0"
                    np.save(folder / f"{t:02d}_{name}.npy", arr, allow_pickle=False)
                    entries.append({"name": name, "file": f"{t:02d}_{name}.npy"})
                (folder / "manifest.json").write_text(json.dumps(entries), encoding="utf-8")


def _metrics(tree) -> list:
    return [
        (res.cell.step, res.cell.rank, r.name, r.metrics.as_dict() if r.metrics else None)
        for res in tree.results
        for r in res.comparison.rows
    ]


def _timed(root: Path, workers: int, runner=None) -> tuple[float, list]:
    t = time.perf_counter()
    tree = compare_tree(root / "run", root / "base", workers=workers, runner=runner)
    return time.perf_counter() - t, _metrics(tree)


def _vmhwm() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _noop(items: list) -> list:
    return [None for _ in items]


def overhead(runner: DaskRunner, n: int = 2000) -> float:
    """Seconds of scheduling per task: ``n`` empty tasks, submitted and gathered."""
    client = runner.client
    t = time.perf_counter()
    futures = [client.submit(_noop, [i], pure=False) for i in range(n)]
    client.gather(futures)
    return (time.perf_counter() - t) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--tensors", type=int, default=4)
    ap.add_argument("--elements", type=int, default=1 << 18)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="advisor-dask-bench-", dir=a.dir))
    cores = os.cpu_count() or 1
    try:
        make(root, a.ranks, a.steps, a.tensors, a.elements)
        _timed(root, 1)  # page cache warm, imports paid
        ref, want = _timed(root, 1, ThreadRunner(1))
        threads, got = _timed(root, min(4, cores), ThreadRunner(min(4, cores)))
        assert got == want, "threads differ from the 1-worker path"
        out: dict = {
            "python": platform.python_version(),
            "cores": cores,
            "ranks": a.ranks,
            "steps": a.steps,
            "tensor_mb": a.elements * 4 / 1e6,
            "dump_mb": a.tensors * a.elements * 4 / 1e6,
            "total_gb_both_sides": 2 * a.ranks * a.steps * a.tensors * a.elements * 4 / 1e9,
            "in_process_1_s": round(ref, 3),
            f"in_process_{min(4, cores)}_threads_s": round(threads, 3),
            "dask": {},
        }
        sizes = [2 * a.elements * 4] * (a.ranks * a.steps * a.tensors)
        out["tasks"] = len(batches(sizes))
        out["task_bytes_limit_mb"] = TASK_BYTES / 1e6
        for n in (1, 2, 4):
            with DaskRunner("local", workers=n) as runner:
                cold, _ = _timed(root, 1, runner)  # each worker process imports advisor (and numba) once
                dt, got = _timed(root, 1, runner)  # the same splits as the reference
                assert got == want, f"{n} Dask workers differ from the in-process path"
                peaks = runner.client.run(_vmhwm)
                per_task = overhead(runner) if n == 1 else None
            speedup = ref / dt
            out["dask"][n] = {
                "seconds": round(dt, 3),
                "first_run_seconds": round(cold, 3),
                "speedup_vs_in_process_1": round(speedup, 3),
                "share_of_linear": round(speedup / min(n, cores), 3),
                "peak_rss_mb_per_worker": round(max(peaks.values()) / 1e6, 1),
            }
            if per_task is not None:
                compute = ref / out["tasks"]
                out["scheduler_overhead_per_task_ms"] = round(per_task * 1e3, 3)
                out["compute_per_task_ms"] = round(compute * 1e3, 3)
                out["overhead_over_compute"] = round(per_task / compute, 4)
        out["chunk_mb"] = CHUNK * 8 / 1e6
        out["kernel"] = "compiled" if compiled_kernel() is not None and sum(sizes) >= KERNEL_MIN_BYTES else "numpy"
        print(json.dumps(out, indent=1))
        with open(ROOT / "benchmarks" / "dask_results.md", "a", encoding="utf-8") as fh:
            fh.write(f"\n```json\n{json.dumps(out, indent=1)}\n```\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
