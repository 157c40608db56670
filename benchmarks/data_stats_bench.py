"""Benchmark: data-sample statistics over a large sample file, against a plain numpy sum.

    python benchmarks/data_stats_bench.py            # 2 GiB (default) and 256 MiB files
    python benchmarks/data_stats_bench.py --gib 0.5  # a smaller run

For each size, a float32 ``x_train.npy`` (rows x 128 features) and ``y_train.npy``
are written chunk by chunk into a temporary folder (deleted afterwards; never
inside the repository). Then, in the same process and on the same file:

- baseline: a plain numpy pass that only sums the array (memory-mapped,
  chunked, float64 accumulation);
- advisor: ``advisor.extract.data_stats.extract`` on the folder (all facts:
  one-pass per-feature statistics, robust outliers, row hashes, labels, kNN
  label check on a subsample).

It prints the throughput of both, their ratio, and the peak of memory
allocated by numpy/Python during each (``tracemalloc``; memory-mapped file
pages are not allocations and the OS can drop them), which should not grow
with the file size.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.extract.base import RunPair  # noqa: E402
from advisor.extract.data_stats import extract  # noqa: E402
from advisor.inventory import RunFolder  # noqa: E402

N_FEATURES = 128


def write_sample(folder: Path, gib: float) -> int:
    rows = int(gib * (1 << 30)) // (N_FEATURES * 4)
    x = np.lib.format.open_memmap(folder / "x_train.npy", mode="w+", dtype=np.float32, shape=(rows, N_FEATURES))
    rng = np.random.default_rng(0)
    step = 1 << 16
    for s in range(0, rows, step):
        n = min(step, rows - s)
        x[s:s + n] = rng.standard_normal((n, N_FEATURES), dtype=np.float32)
    x.flush()
    del x
    np.save(folder / "y_train.npy", rng.integers(0, 10, rows).astype(np.int64))
    return rows


def plain_sum(path: Path) -> float:
    arr = np.load(path, mmap_mode="r", allow_pickle=False)
    total = 0.0
    step = 1 << 16
    for s in range(0, arr.shape[0], step):
        total += float(arr[s:s + step].sum(dtype=np.float64))
    return total


def measure(fn):
    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    result = fn()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return result, dt, peak


def run(gib: float) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="advisor-data-bench-"))
    try:
        rows = write_sample(tmp, gib)
        size = (tmp / "x_train.npy").stat().st_size
        plain_sum(tmp / "x_train.npy")  # warm the page cache for both contenders alike
        _, t_sum, m_sum = measure(lambda: plain_sum(tmp / "x_train.npy"))
        ex, t_adv, m_adv = measure(lambda: extract(RunPair(run=RunFolder.scan(tmp))))
        kinds = sorted({f.kind for f in ex.facts})
        return {"gib": size / (1 << 30), "rows": rows, "t_sum": t_sum, "t_adv": t_adv, "m_sum": m_sum, "m_adv": m_adv,
                "kinds": kinds}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, nargs="*", default=[0.25, 2.0], help="file sizes in GiB")
    args = ap.parse_args()
    print(f"{'size GiB':>9} {'rows':>10} {'sum MB/s':>9} {'advisor MB/s':>12} {'ratio':>6} "
          f"{'peak alloc sum':>15} {'peak alloc advisor':>19}")
    for gib in args.gib:
        r = run(gib)
        mb = r["gib"] * 1024
        print(f"{r['gib']:9.2f} {r['rows']:10d} {mb / r['t_sum']:9.0f} {mb / r['t_adv']:12.0f} "
              f"{r['t_adv'] / r['t_sum']:6.1f} {r['m_sum'] / 2**20:12.1f} MB {r['m_adv'] / 2**20:16.1f} MB")
        print(f"           facts: {', '.join(r['kinds'])}")


if __name__ == "__main__":
    main()
