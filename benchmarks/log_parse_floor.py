"""What the least any regex reading of a log costs in CPython, against plain line reading.

The #11 target is log reading at 1/10 the speed of reading the same lines with no parsing. This
measures, on a log of one well-formed metric line repeated (the best case for any reader: one
template, every line matches it, five numbers a line), the steps no exact reading can skip:

- ``plain``: ``for line in open(...)``, the reference;
- ``verify``: one ``re.match`` of ``(?:TEMPLATE\\n)+`` over all the lines (sre walks every character,
  no groups, no Python step per line): that every line is a template line;
- ``match+groups``: one ``match`` per line start and its ``groups()``, in a Python loop (the reader's
  tight loop);
- ``findall``: the template's groups of every line in one C call (no Python step per line);
- ``convert``: the captured numbers to float64 with ``numpy.array(strings, float64)`` (the fastest of
  ``float``, ``numpy.fromstring``, ``numpy.fromiter``, ``astype``);
- with ``pyarrow`` importable: its import, and its RE2 ``extract_regex`` plus ``cast`` over blocks of
  lines (a compiled scanner, which advisor does not depend on).

Each figure is CPU seconds per line (best of 5) and its ratio to ``plain``. The sum of ``findall`` and
``convert`` is the floor of a regex reader of this line in CPython.

    python benchmarks/log_parse_floor.py [--lines 100000]
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path

import numpy as np

LINE = "[epoch {e}][iter {i}/100000] loss: {loss:.5f} lr: 1.0e-03 grad_norm: 1.500\n"
GROUPS = r"\[epoch (\d++)\]\[iter (\d++)/100000\] loss: (\d++\.\d++) lr: (\d++\.\d++e-\d++) grad_norm: (\d++\.\d++)"
RUN = re.compile(r"(?:" + GROUPS.replace("(", "(?:").replace("(?:?:", "(?:") + r"\n)+", re.ASCII)
TEMPLATE = re.compile(GROUPS, re.ASCII)


def _best(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _loop(text: str) -> list[str]:
    out: list[str] = []
    take, match, pos, end = out.extend, TEMPLATE.match, 0, len(text)
    while pos < end:
        m = match(text, pos)
        if m is None:
            break
        take(m.groups())
        pos = m.end() + 1
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100_000)
    n = ap.parse_args(argv).lines
    text = "".join(LINE.format(e=i // 1000, i=i, loss=2 / (1 + i * 1e-5)) for i in range(n))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.log"
        path.write_text(text, encoding="utf-8")

        def plain() -> None:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for _ in fh:
                    pass

        numbers = [v for row in TEMPLATE.findall(text) for v in row]
        assert RUN.match(text).end() == len(text) and len(_loop(text)) == len(numbers) == 5 * n
        rows = {
            "plain": _best(plain),
            "verify": _best(lambda: RUN.match(text)),
            "match+groups": _best(lambda: _loop(text)),
            "findall": _best(lambda: TEMPLATE.findall(text)),
            "convert": _best(lambda: np.array(numbers, np.float64)),
        }
        rows.update(_arrow(path, n))
    base = rows["plain"]
    print(f"{n} lines of {len(LINE.format(e=0, i=0, loss=1.0)) - 1} characters, 5 numbers a line")
    for name, sec in rows.items():
        print(f"{name:>24}: {sec / n * 1e6:6.3f} us/line  {sec / base:6.1f}x plain")
    floor = rows["findall"] + rows["convert"]
    print(f"{'findall + convert':>24}: {floor / n * 1e6:6.3f} us/line  {floor / base:6.1f}x plain (target 10x)")
    return 0


def _arrow(path: Path, n: int) -> dict[str, float]:
    try:
        t0 = time.process_time()
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:
        return {}
    imported = time.process_time() - t0
    parts = re.split(r"\((?!\?)", GROUPS.replace("++", "+"))  # RE2: named groups, no possessive repeats
    named = parts[0] + "".join(f"(?P<g{i}>{part}" for i, part in enumerate(parts[1:]))

    def scan() -> None:
        with open(path, encoding="utf-8", errors="replace") as fh:
            while block := fh.read(1 << 20):
                got = pc.extract_regex(pa.array(block.split("\n"), type=pa.string()), named)
                got = got.filter(got.is_valid())
                for i in range(5):
                    pc.cast(got.field(i), pa.float64()).to_numpy()

    return {"pyarrow import (once)": imported, "pyarrow extract+cast": _best(scan)}


if __name__ == "__main__":
    raise SystemExit(main())
