"""`advisor --help` wall time against `python -c pass`, in the same run (imports must be lazy).

    python benchmarks/startup_bench.py [--repeat 10]

Aim: under 0.3 s more than the bare interpreter.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cmds: list[list[str]], repeat: int) -> list[float]:
    """Median wall time of each command, the commands interleaved so that load hits all alike."""
    times: list[list[float]] = [[] for _ in cmds]
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    bare, helped, listed = timed([[sys.executable, "-c", "pass"], [sys.executable, "-m", "advisor", "--help"],
                                  [sys.executable, "-m", "advisor", "diagnose", "--help"]], args.repeat)
    print(f"python -c pass:          {bare:.3f} s (median of {args.repeat})")
    print(f"advisor --help:          {helped:.3f} s  (+{helped - bare:.3f} s)")
    print(f"advisor diagnose --help: {listed:.3f} s  (+{listed - bare:.3f} s)")
    print(f"aim: +0.300 s at most -> {'met' if helped - bare <= 0.3 else 'NOT met'}")


if __name__ == "__main__":
    main()
