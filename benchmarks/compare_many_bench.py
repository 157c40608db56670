"""Speed and memory of ``advisor compare`` on dumps of many small tensors (generated here, never committed).

    python benchmarks/compare_many_bench.py [--count 100000] [--dir /tmp]

A layer-by-layer dump of a big model at several steps is mostly small tensors (biases, norms, scalars): the
cost there is per file, not per byte. Each side gets ``--count`` .npy files of 16 float32 values in one
folder (the plain layout); the run equals the baseline.

Measured in one run, on the same (page-cached) files:
- reference: one Python loop that opens every file of both sides with ``np.load`` (no memory map) and takes
  one float64 dot product per pair: the least any per-file comparison in Python does;
- advisor: ``advisor compare RUN BASE -o table.json`` as a command in a child process (index, compare,
  localise, write the JSON table), its wall time and its peak resident memory (VmHWM).

The ratio is reference time / advisor time (1.0: as fast as the bare loop). Results are printed as JSON and
appended to benchmarks/compare_many_results.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def make(folder: Path, count: int) -> None:
    x = np.arange(16, dtype=np.float32)
    for side in ("run", "base"):
        (folder / side).mkdir(parents=True)
        for i in range(count):
            np.save(folder / side / f"op{i:07d}.output.0.npy", x)


def reference(folder: Path) -> float:
    names = sorted(os.listdir(folder / "run"))
    t = time.perf_counter()
    total = 0.0
    for n in names:
        a = np.load(folder / "run" / n, allow_pickle=False)
        b = np.load(folder / "base" / n, allow_pickle=False)
        total += float(np.dot(a.astype(np.float64), b.astype(np.float64)))
    return time.perf_counter() - t


def advisor(folder: Path) -> tuple[float, int]:
    code = (
        "import sys, time; from advisor.cli import main; t = time.perf_counter(); "
        f"rc = main(['compare', {str(folder / 'run')!r}, {str(folder / 'base')!r}, '-o', {str(folder / 't.json')!r}]); "
        "dt = time.perf_counter() - t; "
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]; "
        "print('RESULT', rc, dt, hwm, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("RESULT"))
    _, rc, dt, hwm = line.split()
    assert rc == "0", out.stderr
    return float(dt), int(hwm) * 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="advisor-many-", dir=args.dir))
    try:
        make(folder, args.count)
        reference(folder)  # warm the page cache
        ref = reference(folder)
        adv, peak = advisor(folder)
        ref2 = reference(folder)  # the machine's speed after advisor's run too: the ratio uses the better one
        ref = min(ref, ref2)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "tensors_per_side": args.count,
        "reference_s": round(ref, 2),
        "advisor_s": round(adv, 2),
        "ratio": round(ref / adv, 3),
        "advisor_peak_mb": round(peak / 2**20),
        "per_pair_kb": round(peak / args.count / 1024, 2),
    }
    print(json.dumps(result))
    table = ROOT / "benchmarks" / "compare_many_results.md"
    if not table.exists():
        table.write_text(
            "# advisor compare on many small tensors (benchmarks/compare_many_bench.py)\n\n"
            "| date | machine | tensors/side | reference s | advisor s | ratio | advisor peak MB | KB per pair |\n"
            "|---|---|---|---|---|---|---|---|\n"
        )
    with table.open("a") as fh:
        fh.write(
            f"| {result['date']} | {result['machine']} | {args.count} | {result['reference_s']} | "
            f"{result['advisor_s']} | {result['ratio']} | {result['advisor_peak_mb']} | {result['per_pair_kb']} |\n"
        )


if __name__ == "__main__":
    main()
