"""The calibration map: monotone, bounded, fitted by pool-adjacent-violators; the shipped knots are valid."""

from __future__ import annotations

import random

import pytest

from advisor.calibration import calibrate, fit_isotonic
from advisor.knowledge.calibration_map import KNOTS


def test_identity_without_knots_and_zero_below():
    assert calibrate(0.73, ()) == pytest.approx(0.73)
    assert calibrate(-0.4, ()) == 0.0 and calibrate(0.0, KNOTS) == 0.0
    assert calibrate(1.7, ()) == 1.0


def test_piecewise_linear_between_knots():
    knots = ((0.2, 0.1), (0.6, 0.5), (0.9, 0.9))
    assert calibrate(0.1, knots) == pytest.approx(0.05)       # from (0, 0) to the first knot
    assert calibrate(0.4, knots) == pytest.approx(0.3)
    assert calibrate(0.95, knots) == pytest.approx(0.9)       # flat after the last knot


def test_isotonic_fit_recovers_a_known_curve():
    rng = random.Random(1)
    xs = [rng.random() for _ in range(4000)]
    points = [(x, rng.random() < x * x) for x in xs]            # true P(right | x) = x^2
    knots = fit_isotonic(points, min_block=50)
    ys = [y for _, y in knots]
    assert ys == sorted(ys)                                     # non-decreasing
    assert all(n >= 0 for n in ys)
    for x in (0.3, 0.5, 0.8):
        assert calibrate(x, knots) == pytest.approx(x * x, abs=0.08)


def test_small_blocks_are_pooled():
    points = [(0.1, False), (0.2, True), (0.3, False), (0.9, True)] * 3   # 12 points
    knots = fit_isotonic(points, min_block=8)
    assert len(knots) == 1                                       # too few runs for two knots of 8


def test_shipped_knots_are_valid():
    xs, ys = [x for x, _ in KNOTS], [y for _, y in KNOTS]
    assert xs == sorted(xs) and ys == sorted(ys)
    assert all(0 < x <= 1 for x in xs) and all(0 <= y <= 1 for y in ys)
    grid = [i / 100 for i in range(101)]
    values = [calibrate(x) for x in grid]
    assert values == sorted(values)                              # the map never reorders causes
