"""Hyper-parameter reading: cost per key stays flat as files grow (issue #17: it was quadratic).

In one run, for JSON and YAML files of N flat keys (N = 1,000 and 10,000) and a
nested JSON file of 10,000 keys in 100 sections, measures

- the reference: the bare parser on the same text (``json.loads`` / ``yaml.load``
  with the pure-Python ``SafeLoader``);
- ``advisor.extract.view.settings.collect`` on a folder holding the file, read by ``read_run`` (parse, key
  lines, flattening, mapping to the vocabulary, generic settings);

and reports both times, their ratio, and the growth of ``collect`` from 1,000 to
10,000 keys (10x for linear cost, 100x for quadratic). Before the fix, the JSON
file of 10,000 keys took about 80 s (growth ~100x).

Usage::

    python benchmarks/hparams_bench.py [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from advisor.extract.base import Extraction
from advisor.extract.view.settings import collect
from advisor.inventory import RunFolder
from advisor.read.run import read_run


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _case(tmp: Path, name: str, fmt: str, data: dict) -> dict:
    folder = tmp / name
    folder.mkdir()
    text = json.dumps(data, indent=2) if fmt == "json" else yaml.safe_dump(data)
    path = folder / f"hparams.{fmt}"
    path.write_text(text)
    ref = _best(lambda: json.loads(text) if fmt == "json" else yaml.load(text, Loader=yaml.SafeLoader))
    took = _best(lambda: collect(read_run(RunFolder.scan(folder)), Extraction()))
    return {"case": name, "bytes": len(text), "reference_s": ref, "collect_s": took, "ratio": took / ref}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for fmt in ("json", "yaml"):
            for n in (1000, 10_000):
                rows.append(_case(tmp, f"{fmt}_{n}", fmt, {f"setting_{i}": i * 0.5 for i in range(n)}))
        nested = {f"section_{s}": {f"key_{k}": k for k in range(100)} for s in range(100)}
        rows.append(_case(tmp, "json_nested_10000", "json", nested))
    for r in rows:
        print(f"{r['case']:>18}: {r['bytes']:>8} bytes  reference {r['reference_s'] * 1e3:8.1f} ms  "
              f"collect {r['collect_s'] * 1e3:8.1f} ms  ratio {r['ratio']:6.1f}x")
    by = {r["case"]: r for r in rows}
    for fmt in ("json", "yaml"):
        growth = by[f"{fmt}_10000"]["collect_s"] / by[f"{fmt}_1000"]["collect_s"]
        print(f"{fmt}: collect 10,000 keys / 1,000 keys = {growth:.1f}x (linear: ~10x, quadratic: ~100x)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
