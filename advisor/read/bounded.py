"""Reads with bounds: on each line, and on the bytes of a whole file.

Lines read with a bound on each: a file whose line never ends (a sparse file of zeros, a log written
without newlines) is read in pieces of at most ``limit`` characters, never as one string.

``csv.reader`` and the log parsers take any iterable of lines; ``bounded_lines`` is that iterable. A line
longer than ``limit`` is skipped (read through to its end in pieces, so memory stays at ``limit``), and
``on_long`` is told its line number; the lines after it are read as usual.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import IO, AnyStr, BinaryIO

#: the most bytes read from one log or metrics file (a sparse or endless file stops here; about a minute of
#: reading at advisor's speed on text logs)
MAX_LOG_BYTES = 4 << 30

#: the longest line a CSV reader takes (a Lightning metrics.csv row of a thousand columns is well under it)
MAX_CSV_LINE = 1 << 20


def _ends(line: str | bytes) -> bool:
    return line[-1:] in ("\n", "\r", b"\n", b"\r")


def bounded_lines(
    fh: IO[AnyStr], limit: int = MAX_CSV_LINE, on_long: Callable[[int], None] | None = None
) -> Iterator[AnyStr]:
    """The lines of ``fh`` (text or binary), each at most ``limit`` long; longer ones are skipped."""
    for _, line in numbered_bounded_lines(fh, limit, on_long):
        yield line


def numbered_bounded_lines(
    fh: IO[AnyStr], limit: int = MAX_CSV_LINE, on_long: Callable[[int], None] | None = None
) -> Iterator[tuple[int, AnyStr]]:
    """``(line number, line)`` for the lines of ``fh`` of at most ``limit``; the number counts skipped lines too."""
    number = 0
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not _ends(line):
            while True:  # read through to the end of the line, a piece at a time
                more = fh.readline(limit)
                if not more or _ends(more):
                    break
            if on_long is not None:
                on_long(number)
            continue
        yield number, line


class CappedReader(io.RawIOBase):
    """The first ``limit`` bytes of a binary stream, then end of file; ``capped`` says whether bytes were left."""

    def __init__(self, raw: BinaryIO, limit: int) -> None:
        super().__init__()
        self._raw, self._left, self.capped = raw, limit, False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        view = memoryview(buffer).cast("B")
        if self._left <= 0:
            if not self.capped and self._raw.read(1):
                self.capped = True
            return 0
        got = self._raw.readinto(view[: min(len(view), self._left)])  # type: ignore[attr-defined]
        got = got or 0
        self._left -= got
        return got


def capped(raw: BinaryIO, limit: int = MAX_LOG_BYTES) -> tuple[BinaryIO, CappedReader]:
    """``raw`` (positioned where reading starts) as a buffered stream that ends after ``limit`` bytes, and the
    reader that says whether it did."""
    reader = CappedReader(raw, limit)
    return io.BufferedReader(reader, buffer_size=1 << 20), reader  # type: ignore[return-value]
