"""The end-of-run trend on short, step-level curves (Lightning logs a few dozen points per run)."""

from __future__ import annotations

import numpy as np

from advisor.extract.curves import CurveThresholds, shape

# train_loss_step of a real 2-epoch Lightning run (MLP on sklearn digits, SGD lr 0.01): 44 logged points
LIGHTNING_STEPS = [0, 1] + list(range(3, 86, 2))
LIGHTNING_LOSS = [2.34946, 2.28085, 2.30812, 2.30419, 2.32595, 2.24811, 2.26212, 2.19735, 2.2632, 2.24802, 2.24863,
                  2.22553, 2.22042, 2.18826, 2.13544, 2.13208, 2.11976, 2.13484, 2.03717, 2.03513, 2.0539, 2.04265,
                  2.0685, 2.05131, 2.01981, 1.9969, 1.94771, 1.98784, 1.97036, 1.89326, 1.91475, 1.90374, 1.92727,
                  1.89945, 1.82729, 1.8438, 1.80977, 1.84004, 1.81775, 1.90134, 1.67607, 1.75851, 1.7305, 1.66343]


def _shape(y, x=None):
    y = np.asarray(y, dtype=np.float64)
    x = np.arange(y.size, dtype=np.float64) if x is None else np.asarray(x, dtype=np.float64)
    return shape(x, y, CurveThresholds())


def test_short_step_curve_still_falling_is_seen():
    sh = _shape(LIGHTNING_LOSS, LIGHTNING_STEPS)
    assert len(LIGHTNING_LOSS) == 44
    assert sh.is_still_falling
    # the window is the last 20% of the steps (9 points); the noise comes from the curve's second half
    assert sh.end_trend_t < -3.5 and -0.15 < sh.end_change_ratio < -0.05


def test_short_curve_flat_in_its_second_half_is_not_still_falling():
    # the same start, then flat with the same noise for the second half: the early fall must not count as "the end"
    rng = np.random.default_rng(0)
    y = np.concatenate([LIGHTNING_LOSS[:22], 1.95 + 0.03 * rng.standard_normal(22)])
    sh = _shape(y, LIGHTNING_STEPS)
    assert not sh.is_still_falling
    assert abs(sh.end_change_ratio) < 0.05


def test_epoch_level_curve_keeps_its_last_ten_points():
    # 8 epochs of a Keras run: short curves are judged on all their points, as before
    y = [23.9771, 14.212, 6.8576, 3.9856, 3.0969, 2.6643, 2.3944, 2.2062]
    sh = _shape(y, range(1, 9))
    assert sh.is_still_falling
    flat = _shape([2.31, 2.30, 2.31, 2.30, 2.31, 2.30, 2.31, 2.30], range(1, 9))
    assert not flat.is_still_falling


def test_a_loss_of_1e308_raises_no_numpy_warning(tmp_path):
    import warnings

    from advisor.diagnosis import diagnose

    losses = [2.0, 1.9, 1.8, 1e308, 1.7] + [1.0 - 0.005 * i for i in range(100)]
    (tmp_path / "train.log").write_text("".join(f"step {i} loss {v}\n" for i, v in enumerate(losses)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # overflow in numpy's reductions reached the user's terminal
        report = diagnose(tmp_path)
    assert any(i.path == "train.log" and i.status == "used" for i in report.inputs)


def test_end_change_is_relative_to_the_window_start_and_never_below_minus_100_percent():
    # a loss falling from 0.4 to 0.1 over the last fifth removed 75% of its level there, not -300% of the end level
    x = np.arange(100, dtype=np.float64)
    y = np.where(x < 80, 2.0 - 0.02 * x, 0.4 - 0.015 * (x - 80))
    sh = _shape(y, x)
    assert sh.is_still_falling
    assert -0.8 < sh.end_change_ratio < -0.7
    steep = _shape(np.where(x < 80, 2.0 - 0.02 * x, 0.4 - 0.05 * (x - 80)), x)   # the fitted line crosses zero
    assert sh.end_change_ratio >= -1.0 and steep.end_change_ratio == -1.0


def test_end_window_is_a_share_of_the_steps_not_of_the_points():
    # dense logging early, sparse late: the last 20% of the steps hold 3 of 60 points, so the window takes 5 points
    x = np.concatenate([np.arange(50.0), 50.0 + 50.0 * np.arange(1, 11)])
    y = np.concatenate([2.0 - 0.02 * np.arange(50.0), np.full(10, 1.0)])
    sh = _shape(y, x)
    assert not sh.is_still_falling and abs(sh.end_change_ratio) < 0.01
