"""The combination algebra of rank.py: bounds, order independence, known values."""

from __future__ import annotations

import itertools
import random

import pytest

from advisor.rank import combine, noisy_or


def test_known_values():
    assert combine([]) == 0.0
    assert combine([0.8]) == pytest.approx(0.8)
    assert combine([-0.5]) == pytest.approx(-0.5)
    assert combine([0.6, 0.6]) == pytest.approx(0.84)          # two independent supports beat one
    assert combine([0.8, -0.5]) == pytest.approx((0.8 - 0.5) / (1 - 0.5))
    assert combine([0.5, -0.5]) == pytest.approx(0.0)
    assert combine([1.0, 0.3]) == pytest.approx(1.0)          # a certain rule stays certain
    assert combine([1.0, -1.0]) == 0.0                         # certain both ways: undecided


def test_noisy_or_bounds_and_monotone():
    assert noisy_or([]) == 0.0
    assert noisy_or([0.3, 0.4]) == pytest.approx(1 - 0.7 * 0.6)
    assert noisy_or([0.3, 0.4, 0.1]) > noisy_or([0.3, 0.4])


def test_order_independent_and_bounded():
    rng = random.Random(7)
    for _ in range(200):
        cs = [rng.uniform(-1, 1) for _ in range(rng.randint(1, 6))]
        values = {round(combine(p), 12) for p in itertools.permutations(cs)}
        assert len(values) == 1
        v = values.pop()
        assert -1.0 <= v <= 1.0


def test_support_only_grows_and_opposition_only_shrinks():
    base = [0.4, -0.2]
    assert combine(base + [0.3]) > combine(base)
    assert combine(base + [-0.3]) < combine(base)
