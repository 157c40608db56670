"""Show that a change leaves advisor's reports as they were: write the JSON report of every shipped example and
every run of the labelled sets, from one source tree, then compare two such folders byte by byte.

A refactor (issue 52: modules cut along seams) must not change a single report. Run it on the tree before the
change and on the tree after, then compare:

    git worktree add /tmp/before HEAD~1
    python benchmarks/report_identity.py write --src /tmp/before --out /tmp/reports-before -j 2
    python benchmarks/report_identity.py write --src . --out /tmp/reports-after -j 2
    python benchmarks/report_identity.py compare /tmp/reports-before /tmp/reports-after

The runs: the shipped examples (``examples/labels.json``, with their baselines), the committed test fixtures that
are run folders (``tests/extract/fixtures/*``), and, where ``../shared`` is present, eval-dev's corpus and
eval-real-dev's cases. Each report is the ``-f json`` output with ``advisor_version`` removed, its keys sorted.
``compare`` prints each report that differs and exits 1 if any does (or if a run is missing on one side).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def runs() -> list[tuple[str, Path, Path | None]]:
    """(name, run folder, baseline folder or None) for every run whose report is compared."""
    out: list[tuple[str, Path, Path | None]] = []
    examples = ROOT / "examples"
    for name, lab in json.loads((examples / "labels.json").read_text()).items():
        base = examples / lab["baseline"] if lab.get("baseline") else None
        out.append((f"example_{name}", examples / lab["run"], base))
    fixtures = ROOT / "tests" / "extract" / "fixtures"
    for d in sorted(fixtures.iterdir()):
        if d.is_dir() and d.name != "make":
            out.append((f"fixture_{d.name}", d, None))
    corpus = SHARED / "eval-dev" / "corpus"
    if (corpus / "labels.json").is_file():
        for r in json.loads((corpus / "labels.json").read_text()):
            base = corpus / r["baseline"] if r.get("baseline") else None
            out.append(("dev_" + r["run"].replace("/", "_"), corpus / r["run"], base))
    real = SHARED / "eval-real-dev"
    if (real / "cases.json").is_file():
        for case in json.loads((real / "cases.json").read_text()):
            out.append((f"real_{case['case']}", real / "cases" / case["case"] / "run", None))
    return out


def _report(src: Path, run: Path, baseline: Path | None) -> str:
    cmd = [sys.executable, "-m", "advisor", "diagnose", str(run), "-f", "json"]
    if baseline is not None:
        cmd += ["--baseline", str(baseline)]
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/", timeout=600)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return "NO REPORT\n" + done.stderr[-2000:]
    report.pop("advisor_version", None)
    return json.dumps(report, indent=1, sort_keys=True)


def write(src: Path, out: Path, jobs: int) -> int:
    out.mkdir(parents=True, exist_ok=True)
    todo = runs()

    def one(item: tuple[str, Path, Path | None]) -> None:
        name, run, base = item
        (out / f"{name}.json").write_text(_report(src.resolve(), run, base))

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(one, todo))
    print(f"{len(todo)} reports written to {out} from {src}")
    return 0


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.glob("*.json")} | {p.name for p in b.glob("*.json")})
    differ = [
        n
        for n in names
        if not (a / n).is_file() or not (b / n).is_file() or (a / n).read_bytes() != (b / n).read_bytes()
    ]
    for n in differ:
        print(f"differs: {n}")
    print(f"{len(names) - len(differ)} of {len(names)} reports byte-identical")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="write every report from one source tree")
    w.add_argument("--src", type=Path, default=ROOT, help="the source tree whose advisor package runs")
    w.add_argument("--out", type=Path, required=True)
    w.add_argument("-j", "--jobs", type=int, default=1)
    c = sub.add_parser("compare", help="compare two folders of reports")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "write":
        return write(args.src, args.out, args.jobs)
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
