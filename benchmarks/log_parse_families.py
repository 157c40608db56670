"""Log parsing cost per line style: CPU microseconds per line of ``read_text`` on a log of one style only.

Each style of ``log_parse_bench.py`` (and its noise lines) is written alone, 20,000 lines (the metric styles with
their step counter running on), and read with ``advisor.read.logs.text.read_text``, best of 3 (CPU time). The
baseline is reading the same file line by line without parsing.

With ``--mixed``, each metric style is written instead as ``log_parse_bench.py`` writes its sections (a noise line
after every fourth metric line, a DeepSpeed overflow message every 997), about 2 MiB of it.

Usage::

    python benchmarks/log_parse_families.py [--lines 20000] [--mixed] [--root DIR]

``--root``: import ``advisor`` from DIR instead of this tree (to measure another version in the same minutes).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import log_parse_bench  # noqa: E402
from log_parse_bench import _OVERFLOW, _STYLES  # noqa: E402

NAMES = ("keyvalue", "hf_dict", "metriclogger", "detectron2", "mindspore", "keras", "warning", "code_line", "info")


def write_style(path: Path, style: str, lines: int) -> int:
    """``lines`` lines of one style (a Keras epoch is two lines); returns the number written."""
    out = []
    i = 0
    n = 0
    while n < lines:
        loss = 2.0 / (1 + i * 1e-5)
        text = style.format(
            e=i // 100000,
            e1=i // 1000,
            e2=i // 1000 + 1,
            e3=i + 1,
            i=i,
            j=i % 1000,
            j1=i % 1000 + 1,
            loss=loss,
            avg=loss * 1.01,
            g=1.5,
            ep=i / 1000,
        )
        out.append(text)
        n += text.count("\n")
        i += 1
    path.write_text("".join(out), encoding="utf-8")
    return n


def cpu_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        c = time.process_time()
        fn()
        best = min(best, time.process_time() - c)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--mixed", action="store_true", help="each metric style with the bench's noise lines")
    ap.add_argument("--root", type=Path, default=HERE.parent)
    args = ap.parse_args()
    sys.path.insert(0, str(args.root))
    from advisor.read.logs.text import read_text

    styles = dict(zip(NAMES, _STYLES))
    styles["overflow"] = _OVERFLOW
    if args.mixed:
        styles = dict(list(styles.items())[:6])
    with tempfile.TemporaryDirectory() as tmp:
        for name, style in styles.items():
            path = Path(tmp) / f"{name}.log"
            if args.mixed:  # the bench's sections, all in this style
                log_parse_bench._STYLES = (style,) * 6 + _STYLES[6:]
                n = log_parse_bench.generate(path, 2 * 1024 * 1024)
                log_parse_bench._STYLES = _STYLES
            else:
                n = write_style(path, style, args.lines)

            def base(path=path):
                with path.open("r", encoding="utf-8", errors="replace") as fh:
                    for _ in fh:
                        pass

            c_base = cpu_of(base)
            c_read = cpu_of(lambda path=path: read_text(path, path.name))
            print(
                f"{name:14s} {n:7d} lines  read {c_read / n * 1e6:6.2f} us/line  baseline {c_base / n * 1e6:5.3f}"
                f"  ratio {c_read / c_base:6.1f}x"
            )


if __name__ == "__main__":
    main()
