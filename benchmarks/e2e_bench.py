"""End-to-end CPU time of ``advisor diagnose`` on the shipped examples, against a reference in the same run.

For each example folder, and for three runs written by the real libraries (what users mostly have: a log,
a config, maybe a model summary; ``REAL_RUNS`` below), runs ``python -m advisor diagnose RUN --format json -o
TMP`` in a fresh interpreter and measures the child's CPU time (user + sys, from ``resource.getrusage(RUSAGE_CHILDREN)``);
the reference is ``python -c "import numpy, pydantic"`` (importing the two libraries every diagnosis needs,
the least any diagnosis costs; ``--reference`` sets another), measured in the same run. Each command runs
``--repeat`` times and the least CPU time is kept (the machine may be shared). The #11 target was a typical small
run under 0.5 s; #51's is ``examples/lr_too_high`` in at most 0.35 s (``TARGET_S``).

Before measuring, one diagnosis runs unmeasured: it writes the byte-code caches (``__pycache__``, as an
installed package has them) and advisor's rule-base cache (``--no-rule-cache`` measures without it).

Usage::

    python benchmarks/e2e_bench.py [--repeat 5] [--examples lr_too_high healthy ...] [--runs PATH ...]
                                   [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.35
REFERENCE = "import numpy, pydantic"
#: runs written by the real libraries (tests/extract/config_samples/README.md, tests/extract/fixtures): name -> path
REAL_RUNS = {
    "keras_log": "tests/extract/fixtures/keras_log_only_healthy",  # Keras 3 fit output, model summary
    "hf_trainer": "tests/extract/config_samples/hf_output",  # transformers Trainer checkpoints and arguments
    "lightning_csv": "tests/extract/config_samples/lightning/lightning_logs/version_1",  # CSVLogger, hparams
}


def cpu_of(cmd: list[str], env: dict[str, str]) -> float:
    """User + sys CPU seconds of one run of ``cmd`` (a fresh child process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best_cpu(cmd: list[str], env: dict[str, str], repeat: int) -> float:
    return min(cpu_of(cmd, env) for _ in range(repeat))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--examples", nargs="*", default=None, help="example folder names (default: all)")
    ap.add_argument(
        "--runs", nargs="*", default=None, help="run folders or files to add (default: the real-library runs)"
    )
    ap.add_argument("--no-rule-cache", action="store_true", help="measure with ADVISOR_NO_CACHE=1")
    ap.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    ap.add_argument("--reference", default=REFERENCE, help=f"the reference's Python code (default: {REFERENCE})")
    args = ap.parse_args()
    names = args.examples or sorted(
        p.name
        for p in (ROOT / "examples").iterdir()
        if p.is_dir() and p.name != "generated"  # (made locally)
    )
    paths = {name: ROOT / "examples" / name for name in names}
    extra = REAL_RUNS if args.runs is None else {Path(r).name: Path(r) for r in args.runs}
    paths.update({name: ROOT / path for name, path in extra.items()})
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its byte code compiled
        env["ADVISOR_CACHE_DIR"] = str(Path(tmp) / "cache")
        if args.no_rule_cache:
            env["ADVISOR_NO_CACHE"] = "1"
        out = str(Path(tmp) / "report.json")

        def diagnose(name: str) -> list[str]:
            return [sys.executable, "-m", "advisor", "diagnose", str(paths[name]), "--format", "json", "-o", out]

        for name in paths:  # byte code (the modules a run imports lazily too) and rule-base caches written
            cpu_of(diagnose(name), env)
        ref = best_cpu([sys.executable, "-c", args.reference], env, args.repeat)
        runs = {name: best_cpu(diagnose(name), env, args.repeat) for name in paths}
    result = {
        "reference_cmd": f'python -c "{args.reference}"',
        "reference_cpu_s": ref,
        "diagnose_cpu_s": runs,
        "ratio_to_reference": {k: v / ref for k, v in runs.items()},
        "target_s": TARGET_S,
        "meets_target": {k: v <= TARGET_S for k, v in runs.items()},
        "rule_cache": not args.no_rule_cache,
        "repeat": args.repeat,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
    }
    print(f"reference ({result['reference_cmd']}): {ref:.3f} s CPU")
    for name, cpu in runs.items():
        print(
            f"{name:20s} {cpu:.3f} s CPU  {cpu / ref:.2f}x reference  {'meets' if cpu <= TARGET_S else 'misses'} "
            f"the {TARGET_S} s target"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
