"""Speed of the network-wide comparison on two >= 1 GB dumps (generated here, never committed).

    python benchmarks/compare_bench.py [--size-gb 1.0] [--workers 2] [--dir /tmp] [--repeat 2]

Each side is a plain-layout dump of float32 tensors shaped like a real
network's: three of 128 MB (big activations / embedding tables) and many small
ones (biases, norms, attention blocks: 4 KB .. 16 MB). The run is the baseline
plus float32-rounding-sized noise, with one operator deviating by 1e-3;
``--scenario after-source`` keeps the run bit-identical before that operator
(a deterministic same-stack comparison).

Measured, in the same process and on the same (page-cached) files:
- reference: a numpy pass that only reads both dumps (np.load) and takes one
  float64-accumulated dot product per tensor pair, with the same number of
  threads (the issue's yardstick); also the same pass over memory maps (as
  advisor reads: no copy of the file into memory), reported beside it;
- advisor: ``compare_dumps`` with every metric, with the compiled kernel (numba, when installed) and
  with the numpy pass, and once compiled without the KL; each round runs the reference and every
  variant back to back (noise on these shared machines is +-30%), best of ``--repeat`` rounds;
- peak memory that Python/numpy allocated during the comparison (tracemalloc,
  in a separate untimed pass: tracing slows the pass several times;
  memory-mapped file pages are not allocations), against the dump size.

- with ``--msprobe PATH`` (msprobe's executable in its own venv): msprobe's compare on the same dumps
  rewritten in its layout (benchmarks/msprobe_compare.py; not timed), against ``advisor compare`` run
  as a command the same way (both with their start-up).

Throughput is bytes of both dumps per second; the ratio is advisor / reference.
Results are printed as JSON and appended to benchmarks/compare_results.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from advisor.compare.engine import compare_dumps  # noqa: E402
from advisor.compare.localise import localise  # noqa: E402
from advisor.compare.kernel_loader import compiled_kernel, single_threaded_blas  # noqa: E402
from advisor.read.dumps import read_dump  # noqa: E402

MB = 1 << 20
TABLE_HEADER = ("| date | machine | dumps | tensors/side | reference GB/s | compiled kernel GB/s (ratio) "
                "| numpy pass GB/s (ratio) | compiled, no KL GB/s (ratio) | mmap reference GB/s (compiled ratio) "
                "| peak alloc MB | differences | rounds | msprobe compare (advisor compare as a command) |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")


def tensor_sizes(total_bytes: int, rng: np.random.Generator) -> list[int]:
    """Element counts: three 128 MB tensors, the rest small (log-uniform 1k .. 4M elements)."""
    sizes = [32 * MB] * 3
    left = total_bytes // 4 - sum(sizes)
    while left > 0:
        n = int(np.exp(rng.uniform(np.log(1024), np.log(4 * MB))))
        n = min(n, left) if left > 1024 else left
        sizes.append(n)
        left -= n
    order = rng.permutation(len(sizes))
    return [sizes[i] for i in order]


def generate(folder: Path, total_bytes: int, seed: int = 0, scenario: str = "everywhere") -> tuple[Path, Path, int]:
    rng = np.random.default_rng(seed)
    run, base = folder / "run", folder / "baseline"
    run.mkdir(parents=True)
    base.mkdir(parents=True)
    sizes = tensor_sizes(total_bytes, rng)
    deviating = len(sizes) // 2
    for i, n in enumerate(sizes):
        b = rng.standard_normal(n, dtype=np.float32)
        noise = rng.standard_normal(n, dtype=np.float32)
        scale = np.float32(1e-3 if i == deviating else 1e-7)
        name = f"{i:05d}_layer{i}.forward.output.0.npy"
        np.save(base / name, b)
        if scenario == "after-source" and i < deviating:
            np.save(run / name, b)  # same stack, deterministic: bit-identical before the source
        else:
            np.save(run / name, b + scale * noise * b)
    return run, base, 2 * sum(sizes) * 4


def reference_pass(run: Path, base: Path, workers: int, mmap: bool = False) -> float:
    """Read both dumps (np.load; ``mmap``: memory-mapped, as advisor reads) and take one dot per pair."""
    names = sorted(p.name for p in run.iterdir())
    mode = "r" if mmap else None

    def one(name: str) -> float:
        a = np.load(run / name, mmap_mode=mode)
        b = np.load(base / name, mmap_mode=mode)
        return float(np.dot(a.astype(np.float64), b.astype(np.float64))) if a.size < 4 * MB else \
            sum(float(np.dot(a[i:i + MB].astype(np.float64), b[i:i + MB].astype(np.float64)))
                for i in range(0, a.size, MB))

    start = time.perf_counter()
    with single_threaded_blas():
        if workers <= 1:
            for n in names:
                one(n)
        else:
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(one, sorted(names, key=lambda n: -(run / n).stat().st_size)))
    return time.perf_counter() - start


def advisor_pass(run: Path, base: Path, workers: int, with_kl: bool, kernel: str = "auto") -> tuple[float, str | None]:
    start = time.perf_counter()
    comp = compare_dumps(read_dump(run), read_dump(base), {"compare.kl": with_kl, "compare.kernel": kernel},
                         workers=workers)
    loc = localise(comp.rows)
    assert kernel == "auto" or comp.kernel == kernel, (kernel, comp.kernel)
    return time.perf_counter() - start, loc.source.op if loc.source else None


def peak_allocation(run: Path, base: Path, workers: int) -> int:
    """Peak bytes allocated by Python/numpy during one comparison (a separate pass: tracing is slow)."""
    tracemalloc.start()
    compare_dumps(read_dump(run), read_dump(base), {"compare.kernel": "compiled" if compiled_kernel() else "numpy"},
                  workers=workers)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def msprobe_vs_cli(run: Path, base: Path, tmp: Path, msprobe: str, nbytes: int) -> dict:
    """msprobe's compare and ``advisor compare`` as commands on the same dumps (each with its start-up)."""
    import subprocess

    from msprobe_compare import time_msprobe, write_msprobe_layout

    ms = time_msprobe(write_msprobe_layout(run, tmp / "ms_run"), write_msprobe_layout(base, tmp / "ms_base"),
                      [msprobe], tmp / "ms_work")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "advisor", "compare", str(run), str(base)], check=False,
                   capture_output=True, cwd=ROOT)
    cli = time.perf_counter() - start
    return {"msprobe_seconds": ms["seconds"], "msprobe_startup_seconds": ms["startup_seconds"],
            "msprobe_MBps": round(nbytes / ms["seconds"] / 1e6, 1), "advisor_cli_seconds": round(cli, 2),
            "advisor_cli_MBps": round(nbytes / cli / 1e6, 1), "advisor_cli_speedup_vs_msprobe": round(ms["seconds"] / cli, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-gb", type=float, default=1.0, help="size of each dump (default 1.0)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--dir", default=None, help="where to generate the dumps (a temporary folder inside it)")
    ap.add_argument("--repeat", type=int, default=2, help="best of N for each measurement")
    ap.add_argument("--keep", action="store_true", help="keep the generated dumps")
    ap.add_argument("--scenario", choices=("everywhere", "after-source"), default="everywhere",
                    help="where the run differs from the baseline: every tensor (another framework or device; "
                         "the worst case) or only from the deviating operator on (same stack, deterministic)")
    ap.add_argument("--results", default=str(ROOT / "benchmarks" / "compare_results.md"))
    ap.add_argument("--msprobe", default=None, metavar="PATH",
                    help="msprobe executable (mindstudio-probe in its own venv): also time its compare")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="advisor-compare-bench-", dir=args.dir))
    try:
        t0 = time.perf_counter()
        run, base, nbytes = generate(tmp, int(args.size_gb * (1 << 30)), scenario=args.scenario)
        gen_s = time.perf_counter() - t0
        ntensors = len(list(run.iterdir()))
        compiled = compiled_kernel() is not None
        if compiled:
            advisor_pass(run, base, args.workers, True, "compiled")  # compile or load the kernel: not timed
        times: dict[str, list[float]] = {"ref": [], "ref_mmap": [], "compiled": [], "numpy": [], "compiled_no_kl": []}
        found = None
        for _ in range(args.repeat):  # interleaved: every variant sees the same moments of load
            times["ref"].append(reference_pass(run, base, args.workers))
            times["ref_mmap"].append(reference_pass(run, base, args.workers, mmap=True))
            for key, kernel, kl in (("compiled", "compiled", True), ("numpy", "numpy", True),
                                    ("compiled_no_kl", "compiled", False)):
                if kernel == "compiled" and not compiled:
                    continue
                secs, found = advisor_pass(run, base, args.workers, kl, kernel)
                times[key].append(secs)
        ref = min(times["ref"])
        full = (min(times["compiled"] or times["numpy"]), found)
        slow = min(times["numpy"])
        no_kl = (min(times["compiled_no_kl"]), found) if compiled else (math.nan, None)
        ref1 = reference_pass(run, base, 1)
        res = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
            "dumps_bytes": nbytes, "tensors_per_side": ntensors, "workers": args.workers, "scenario": args.scenario,
            "generate_s": round(gen_s, 1),
            "reference_GBps": round(nbytes / ref / 1e9, 3), "reference_1thread_GBps": round(nbytes / ref1 / 1e9, 3),
            "reference_mmap_GBps": round(nbytes / min(times["ref_mmap"]) / 1e9, 3),
            "ratio_to_mmap_reference": round(min(times["ref_mmap"]) / full[0], 3),
            "kernel": "compiled" if compiled else "numpy (numba not installed)",
            "advisor_GBps": round(nbytes / full[0] / 1e9, 3), "ratio": round(ref / full[0], 3),
            "numpy_pass_GBps": round(nbytes / slow / 1e9, 3), "ratio_numpy_pass": round(ref / slow, 3),
            "advisor_no_kl_GBps": round(nbytes / no_kl[0] / 1e9, 3), "ratio_no_kl": round(ref / no_kl[0], 3),
            "peak_alloc_MB": round(peak_allocation(run, base, args.workers) / MB, 1), "source_found": full[1],
        }
        if args.msprobe:
            res.update(msprobe_vs_cli(run, base, tmp, args.msprobe, nbytes))
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(res, indent=1))
    path = Path(args.results)
    if not path.exists():
        path.write_text("# advisor compare: benchmark results\n\nWritten by `python benchmarks/compare_bench.py`; "
                        "bytes = both dumps; ratio = advisor throughput / reference pass (read + one dot per pair, "
                        "same threads).\n\n" + TABLE_HEADER)
    row = (f"| {res['date']} | {res['machine']} | {nbytes / 1e9:.2f} GB | {ntensors} | {res['reference_GBps']} "
           f"| {res['advisor_GBps']} ({res['ratio']}) | {res['numpy_pass_GBps']} ({res['ratio_numpy_pass']}) "
           f"| {res['advisor_no_kl_GBps']} ({res['ratio_no_kl']}) "
           f"| {res['reference_mmap_GBps']} ({res['ratio_to_mmap_reference']}) | {res['peak_alloc_MB']} | {args.scenario} "
           f"| {args.repeat} | " + (f"{res['msprobe_MBps']} MB/s; advisor compare {res['advisor_cli_MBps']} MB/s "
                                   f"({res['advisor_cli_speedup_vs_msprobe']}x)" if args.msprobe else "-") + " |")
    lines = path.read_text().split("\n")
    last = max((i for i, line in enumerate(lines) if line.startswith("| 20")), default=len(lines) - 1)
    lines.insert(last + 1, row)  # below the last row of the last table, above the notes that follow it
    path.write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
