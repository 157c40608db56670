"""Start-up cost of ``advisor``: ``--help`` and a small diagnosis against the bare interpreter and the reference
``python -c "import numpy, pydantic"``, in the same run (imports must be lazy).

    python benchmarks/startup_bench.py [--repeat 10] [--run examples/lr_too_high]

Each command runs ``--repeat`` times, the commands interleaved so that the machine's load hits all alike; wall time
is the median, CPU time (user + sys of the child) the least. Byte code is written first (as an installed package has
it). Aims: ``--help`` under 0.3 s more than the bare interpreter; a diagnosis of ``examples/lr_too_high`` (JSON
report) in at most 0.35 CPU seconds (#51).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELP_AIM_S = 0.3
DIAGNOSE_AIM_CPU_S = 0.35
REFERENCE = "import numpy, pydantic"


def timed(cmds: list[list[str]], repeat: int, env: dict[str, str]) -> list[tuple[float, float]]:
    """(median wall seconds, least CPU seconds) of each command, the commands interleaved."""
    wall: list[list[float]] = [[] for _ in cmds]
    cpu: list[list[float]] = [[] for _ in cmds]
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
            wall[i].append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[i].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return [(statistics.median(w), min(c)) for w, c in zip(wall, cpu)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--run", default="examples/lr_too_high", help="the run diagnosed (default examples/lr_too_high)")
    args = ap.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its byte code compiled
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        env["ADVISOR_CACHE_DIR"] = str(Path(tmp) / "cache")
        diagnose = [py, "-m", "advisor", "diagnose", args.run, "--format", "json", "-o", str(Path(tmp) / "r.json")]
        commands = {
            "python -c pass": [py, "-c", "pass"],
            f'python -c "{REFERENCE}"': [py, "-c", REFERENCE],
            "advisor --help": [py, "-m", "advisor", "--help"],
            "advisor diagnose --help": [py, "-m", "advisor", "diagnose", "--help"],
            f"advisor diagnose {args.run}": diagnose,
        }
        subprocess.run(diagnose, check=True, cwd=ROOT, env=env, capture_output=True)  # byte code and rule cache
        results = dict(zip(commands, timed(list(commands.values()), args.repeat, env)))
    bare_wall, _ = results["python -c pass"]
    _, ref_cpu = results[f'python -c "{REFERENCE}"']
    for name, (wall, cpu) in results.items():
        print(
            f"{name:42s} wall {wall:.3f} s (+{wall - bare_wall:.3f})  CPU {cpu:.3f} s ({cpu / ref_cpu:.2f}x reference)"
        )
    help_wall, _ = results["advisor --help"]
    _, diag_cpu = results[f"advisor diagnose {args.run}"]
    print(f"aim: --help +{HELP_AIM_S:.3f} s at most -> {'met' if help_wall - bare_wall <= HELP_AIM_S else 'NOT met'}")
    print(
        f"aim: diagnose at most {DIAGNOSE_AIM_CPU_S} CPU s -> {diag_cpu:.3f} s, "
        f"{'met' if diag_cpu <= DIAGNOSE_AIM_CPU_S else 'NOT met'}"
    )
    print(f"median of {args.repeat}; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
