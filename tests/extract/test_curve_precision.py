"""One value printed at two precisions is one value: a loop's ``print(loss)`` at full precision beside its
framework's bar at four decimals (advisor/extract/curves.py same_printed, frozen_tail_points)."""

from __future__ import annotations

import numpy as np

from advisor.extract.curves import frozen_tail_points, printed_decimals, same_printed


def test_printed_decimals_are_those_of_the_shortest_text():
    assert [printed_decimals(v) for v in (17.2694, 8.05904769897461, 3.0, 1e-05)] == [4, 14, 0, 5]


def test_a_full_precision_value_and_its_four_decimal_print_are_the_same():
    # Keras 3: train_on_batch returned 8.05904769897461, the progress bar printed 8.0590 (parsed back as 8.059)
    assert same_printed(8.05904769897461, 8.059)
    assert same_printed(17.269388197455335, 17.2694)


def test_values_that_differ_at_four_decimals_are_not_the_same():
    # a parsed 0.4000 reads back as 0.4: one decimal of its own, but printed at four, so 0.41 is another value
    assert not same_printed(0.41, 0.4)
    assert not same_printed(0.40006, 0.4)
    assert not same_printed(1.2345, 1.23)
    assert not same_printed(0.5123, 0.5124)


def test_the_frozen_tail_counts_a_value_at_any_of_its_precisions():
    y = np.array([0.2356, 17.269388197455335, 17.269388197455335, 17.2694, 17.269388197455335, 17.269388197455335])
    assert frozen_tail_points(y) == 5
    assert frozen_tail_points(np.array([0.9, 0.5, 0.41, 0.4, 0.4])) == 2
    assert frozen_tail_points(np.array([1.0, 1.0, 1.0])) == 3
