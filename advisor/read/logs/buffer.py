"""Bounded buffers of logged points: a log of any size keeps at most ``MAX_POINTS`` points of a series (when full,
every second point is dropped and only every 2nd, 4th, ... new point is kept); ``records.MetricSeries`` keeps the
exact count, the first non-finite point and the extremes beside them."""

from __future__ import annotations

import bisect
import math
from array import array

import numpy as np

MAX_POINTS = 100_000


class Buffer:
    """(step, epoch, value, line) points; at most ``cap`` kept, decimated evenly when full.

    The four arrays hold ``n`` points and room for more (their length doubles when full, up to ``cap``: arrays grown
    a little at a time were copied again and again); ``step``, ``epoch``, ``value`` and ``line`` are the points."""

    def __init__(self, cap: int | None = None):
        self.cap = MAX_POINTS if cap is None else cap
        self._step = array("d")
        self._epoch = array("d")
        self._value = array("d")
        self._line = array("q")
        self.n = 0  # points stored
        self.count = 0  # points seen (after resume de-duplication)
        self.stride = 1
        self._phase = 0
        self.nonfinite = 0
        self.first_nonfinite: tuple[float, float, int] | None = None  # (step, epoch, line)

    @property
    def step(self) -> array:
        return self._step[: self.n]

    @property
    def epoch(self) -> array:
        return self._epoch[: self.n]

    @property
    def value(self) -> array:
        return self._value[: self.n]

    @property
    def line(self) -> array:
        return self._line[: self.n]

    def __len__(self) -> int:
        return self.n

    def reserve(self, size: int) -> None:
        """Room for ``size`` points (at least; at most ``cap``)."""
        have = len(self._value)
        if size <= have:
            return
        extra = min(max(size, 2 * have, 64), max(self.cap, size)) - have
        zeros = bytes(8 * extra)
        for arr in (self._step, self._epoch, self._value, self._line):
            arr.frombytes(zeros)

    def put(self, step: float, epoch: float, value: float, line: int) -> None:
        """Store one point (the caller decides which points are stored)."""
        n = self.n
        if n == len(self._value):
            self.reserve(n + 1)
        self._step[n] = step
        self._epoch[n] = epoch
        self._value[n] = value
        self._line[n] = line
        self.n = n + 1

    def add(self, step: float, epoch: float, value: float, line: int) -> None:
        self.count += 1
        if not math.isfinite(value):
            self.nonfinite += 1
            if self.first_nonfinite is None:
                self.first_nonfinite = (step, epoch, line)
        self._phase += 1
        if self._phase < self.stride:
            return
        self._phase = 0
        self.put(step, epoch, value, line)
        if self.n >= self.cap:
            self.decimate()

    def decimate(self) -> None:
        """Keep every second stored point, and from now on every ``2 * stride``-th new one."""
        n = self.n
        self._step = array("d", self._step[:n:2])
        self._epoch = array("d", self._epoch[:n:2])
        self._value = array("d", self._value[:n:2])
        self._line = array("q", self._line[:n:2])
        self.n = len(self._value)
        self.stride *= 2

    def truncate(self, keep: int) -> None:
        """Keep only the first ``keep`` stored points (a resumed run overwrites the rest)."""
        dropped = self.n - keep
        if dropped <= 0:
            return
        self.count -= dropped * self.stride
        self.n = keep

    def at_line(self, line: int) -> int:
        """Index of the first stored point at or after ``line`` (points are stored in line order)."""
        return bisect.bisect_left(self._line, line, 0, self.n)

    def point(self, i: int) -> tuple[float, float, float, int]:
        """The ``i``-th stored point: (step, epoch, value, line)."""
        return self._step[i], self._epoch[i], self._value[i], self._line[i]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        n = self.n
        if not n:
            return np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0, np.int64)
        return (
            np.frombuffer(self._step, dtype=np.float64, count=n).copy(),
            np.frombuffer(self._epoch, dtype=np.float64, count=n).copy(),
            np.frombuffer(self._value, dtype=np.float64, count=n).copy(),
            np.frombuffer(self._line, dtype=np.int64, count=n).copy(),
        )
