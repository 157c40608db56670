"""The record framing of TensorFlow's event files, which MindSpore's summaries and tfdbg2 dumps use too: a
little-endian uint64 length, a 4-byte checksum of it, the data, a 4-byte checksum of the data. The checksums are
not verified (a damaged record fails to parse where it is decoded)."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


class FramingError(ValueError):
    """The file ends inside a record."""


def framed(path: Path, max_record: int) -> Iterator[tuple[int, int, bytes | None]]:
    """``framed_stream`` of a file."""
    with path.open("rb") as fh:
        yield from framed_stream(fh, max_record)


def framed_stream(fh: BinaryIO, max_record: int) -> Iterator[tuple[int, int, bytes | None]]:
    """(record number from 1, offset of its data, its data) of each record; the data of a record longer than
    ``max_record`` is not read (None). Raises FramingError at a truncated end, naming the record."""
    pos, index = 0, 0
    while True:
        head = fh.read(12)
        if not head:
            return
        index += 1
        if len(head) < 12:
            raise FramingError(f"the file ends inside record {index}'s header (a truncated write)")
        (length,) = struct.unpack("<Q", head[:8])
        if length > max_record:
            fh.seek(length + 4, 1)
            data = None
        else:
            data = fh.read(length)
            if len(data) < length:
                raise FramingError(f"the file ends inside record {index} (a truncated write)")
            fh.read(4)
        yield index, pos + 12, data
        pos += 16 + length
