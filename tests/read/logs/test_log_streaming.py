"""A big log is read in bounded memory: peak memory does not grow with the file."""

from __future__ import annotations

import tracemalloc

import pytest

from advisor.read.logs import read_file
from advisor.read.logs import buffer


def _big_log(path, lines: int) -> None:
    with path.open("w") as fh:
        for i in range(lines):
            fh.write(f"[epoch {i // 1000}][iter {i}/1000000] loss: {1.0 / (1 + i * 1e-4):.5f} lr: 1.0e-03 grad_norm: 1.5\n")
            if i % 7 == 0:
                fh.write("UserWarning: something was deprecated, ignore\n")


def _peak(path) -> tuple[int, int]:
    tracemalloc.start()
    read = read_file(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, read.series["train/loss"].buf.count


@pytest.mark.slow
def test_peak_memory_independent_of_size(tmp_path, monkeypatch):
    monkeypatch.setattr(buffer, "MAX_POINTS", 500)
    small, big = tmp_path / "small.log", tmp_path / "big.log"
    _big_log(small, 6_000)
    _big_log(big, 24_000)
    peak_small, n_small = _peak(small)
    peak_big, n_big = _peak(big)
    assert (n_small, n_big) == (6_000, 24_000)
    # 4x the lines, not 4x the memory (the series buffers are capped, lines are not kept)
    assert peak_big < 1.5 * peak_small + 200_000
