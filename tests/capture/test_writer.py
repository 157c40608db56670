"""advisor/capture/writer.py: the numpy statistics every non-torch callback writes agree with the torch hook's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from advisor.capture.writer import numpy_row_std, numpy_stats, numpy_update, record


def test_numpy_statistics_exact_on_a_small_array():
    a = np.array([[0.0, 1.0, -2.0], [3.0, 0.0, 0.5]], dtype=np.float32)
    rec = record(7, "w", "weight", a.size, numpy_stats(a))
    assert rec == {"step": 7, "name": "w", "kind": "weight", "numel": 6, "mean": 2.5 / 6,
                   "std": pytest.approx(math.sqrt(14.25 / 6 - (2.5 / 6) ** 2), rel=1e-12), "min": -2.0, "max": 3.0,
                   "norm": pytest.approx(math.sqrt(14.25), rel=1e-12), "zero_frac": 2 / 6, "nan": 0, "inf": 0}
    # population std across the two output rows, averaged over the three inputs
    assert numpy_row_std(a) == pytest.approx(np.mean([1.5, 0.5, 1.25]), rel=1e-12)


def test_non_finite_values_are_counted():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], dtype=np.float32)
    rec = record(0, "g", "grad", a.size, numpy_stats(a))
    assert (rec["nan"], rec["inf"], rec["mean"], rec["norm"], rec["zero_frac"]) == (1, 2, None, None, 0.2)


def test_update_terms():
    before = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    grad = np.array([0.5, -1.0, 0.0], dtype=np.float32)
    after = before - 0.1 * grad
    dd, dg, dw, gw = numpy_update(before, after, grad)
    d = after.astype(np.float64) - before
    assert (dd, dg, dw, gw) == pytest.approx([d @ d, d @ grad, d @ before, grad.astype(np.float64) @ before],
                                             rel=1e-12)


def test_agrees_with_the_torch_hook():
    torch = pytest.importorskip("torch")
    from advisor.capture.hook import Capture

    x = torch.randn(64, 33, generator=torch.Generator().manual_seed(0))
    cap = Capture.__new__(Capture)
    cap._torch = torch
    ours = record(0, "x", "weight", x.numel(), numpy_stats(x.numpy()))
    theirs = record(0, "x", "weight", x.numel(), cap._stats(x).tolist())
    assert ours == {k: pytest.approx(v, rel=1e-9) if isinstance(v, float) else v for k, v in theirs.items()}
