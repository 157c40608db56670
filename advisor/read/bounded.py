"""Reads with bounds: on each line, and on the bytes of a whole file.

Lines read with a bound on each: a file whose line never ends (a sparse file of zeros, a log written
without newlines) is read in pieces of at most ``limit`` characters, never as one string.

``csv.reader`` and the log parsers take any iterable of lines; ``bounded_lines`` is that iterable. A line
longer than ``limit`` is skipped (read through to its end in pieces, so memory stays at ``limit``), and
``on_long`` is told its line number; the lines after it are read as usual. A piece of such a line that holds only
NUL bytes is padding (the zeros of a sparse or preallocated file, a terabyte of them costing nothing on disk): the
reading ends there, and ``on_padding`` is told the line number, so a file of NULs ends at once instead of being
read through.
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


def padding_note(line: int) -> str:
    """What a reader says where NUL padding ended its reading."""
    return f"only NUL bytes from line {line} on (a sparse or preallocated file); the rest of the file was not read"


def _padding(piece: str | bytes) -> bool:
    """A piece of a line that holds only NUL bytes."""
    return piece[:1] in ("\x00", b"\x00") and not piece.strip(piece[:1])  # type: ignore[arg-type]


def bounded_lines(
    fh: IO[AnyStr],
    limit: int = MAX_CSV_LINE,
    on_long: Callable[[int], None] | None = None,
    on_padding: Callable[[int], None] | None = None,
) -> Iterator[AnyStr]:
    """The lines of ``fh`` (text or binary), each at most ``limit`` long; longer ones are skipped."""
    for _, line in numbered_bounded_lines(fh, limit, on_long, on_padding):
        yield line


def numbered_bounded_lines(
    fh: IO[AnyStr],
    limit: int = MAX_CSV_LINE,
    on_long: Callable[[int], None] | None = None,
    on_padding: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, AnyStr]]:
    """``(line number, line)`` for the lines of ``fh`` of at most ``limit``; the number counts skipped lines too.
    The reading ends at a long line's piece of NUL bytes (``on_padding`` is told its number)."""
    number = 0
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not _ends(line):
            if not _skip_long_line(fh, line, limit):
                if on_padding is not None:
                    on_padding(number)
                return
            if on_long is not None:
                on_long(number)
            continue
        yield number, line


def _skip_long_line(fh: IO[AnyStr], first: AnyStr, limit: int) -> bool:
    """Read through to the end of a long line, a piece at a time; False where a piece is NUL padding (stopped)."""
    piece = first
    while True:
        if _padding(piece):
            return False
        piece = fh.readline(limit)
        if not piece or _ends(piece):
            return True


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
