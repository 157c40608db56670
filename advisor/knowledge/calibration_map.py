"""Calibration map of the combined confidence (see advisor/calibration.py and docs/calibration.md).

Empty: the identity, until ``python benchmarks/calibrate.py --write`` fits it on labelled runs.
"""

KNOTS: tuple[tuple[float, float], ...] = ()
