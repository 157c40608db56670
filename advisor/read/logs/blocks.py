"""A text stream as blocks of whole lines, each line cut at a length cap, in bounded memory.

``blocks(fh, cap)`` gives the lines that ``fh.readline(cap)`` would give (skipping the rest of a line longer than
the cap), joined in blocks of about ``BLOCK_CHARS`` characters, so that a reader can run one regex over many lines
at once. Every line of a block ends with ``"\\n"`` except the file's last one when the file does not end with a
newline, and a line cut at the cap, which comes alone as a block of its own with ``overlong`` set.

A file object that is not a text stream but only reads lines (``advisor.follow``'s growing file, which hands out
complete lines and waits at its end) is read with ``readline``, and its lines joined in blocks the same way.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TextIO

#: characters read at a time (less than the line cap, so that only the first line of a read can reach it)
BLOCK_CHARS = 32768


def blocks(fh: TextIO, cap: int) -> Iterator[tuple[str, bool]]:
    """(text, overlong) pieces of ``fh``: whole lines, or one line cut at ``cap`` characters (``overlong``)."""
    if not isinstance(fh, io.TextIOBase):
        yield from _by_lines(fh, cap)
        return
    assert BLOCK_CHARS < cap
    carry = ""  # the start of a line not yet ended (shorter than cap)
    skipping = False  # inside the rest of a line cut at the cap
    read = fh.read
    while True:
        chunk = read(BLOCK_CHARS)
        if not chunk:
            if carry:
                yield carry, False
            return
        if skipping:
            nl = chunk.find("\n")
            if nl < 0:
                continue
            chunk = chunk[nl + 1 :]
            skipping = False
        first = chunk.find("\n")
        if first < 0:  # no line ends in this chunk
            carry += chunk
            if len(carry) >= cap:
                yield carry[:cap], True
                carry, skipping = "", True
            continue
        if len(carry) + first >= cap:  # the line going on from the last chunk is too long
            yield (carry + chunk[:first])[:cap], True
            carry, chunk = "", chunk[first + 1 :]
            first = chunk.find("\n")
            if first < 0:
                carry = chunk
                continue
        cut = chunk.rfind("\n") + 1
        text = carry + chunk[:cut] if carry else chunk[:cut]
        carry = chunk[cut:]
        if text:
            yield text, False


def _by_lines(fh: TextIO, cap: int) -> Iterator[tuple[str, bool]]:
    """``blocks`` of a file object read with ``readline(cap)``."""
    readline = fh.readline
    lines: list[str] = []
    size = 0
    cut = False  # inside the rest of a line cut at the cap
    while True:
        line = readline(cap)
        if not line:
            break
        if cut:
            cut = not line.endswith("\n") and len(line) == cap
            continue
        if len(line) == cap and not line.endswith("\n"):
            if lines:
                yield "".join(lines), False
                lines, size = [], 0
            yield line, True
            cut = True
            continue
        lines.append(line)
        size += len(line)
        if size >= BLOCK_CHARS:
            yield "".join(lines), False
            lines, size = [], 0
    if lines:
        yield "".join(lines), False
