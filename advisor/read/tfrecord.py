"""The record framing of TensorFlow's event files, which MindSpore's summaries and tfdbg2 dumps use too: a
little-endian uint64 length, a 4-byte checksum of it, the data, a 4-byte checksum of the data. The checksums are
not verified (a damaged record fails to parse where it is decoded).

Every length is bounded by what is left in the file (a record announcing 2^64-1 bytes, or more than the file
holds, ends the read with a ``FramingError`` naming it), the bytes read from one file by ``max_bytes``, and a run
of empty records (the zeros of a sparse or preallocated file frame as endless empty records) by ``MAX_EMPTY_RUN``.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

#: empty records in a row that end the read: a writer never writes them, the zeros of a sparse file frame as them
MAX_EMPTY_RUN = 1000
#: bytes of records read from one file at most (records skipped unread do not count)
MAX_READ_BYTES = 4 << 30
HEADER_BYTES, TRAILER_BYTES = 12, 4


class FramingError(ValueError):
    """The framing cannot be read further; the message says where and why (the records before it were read)."""


@dataclass(frozen=True)
class Record:
    index: int  # from 1
    offset: int  # of its data in the file
    length: int  # of its data
    data: bytes | None  # None: longer than the caller's ``max_record``, not read


def framed(path: Path, max_record: int, max_bytes: int = MAX_READ_BYTES) -> Iterator[Record]:
    """``framed_stream`` of a file."""
    with path.open("rb") as fh:
        yield from framed_stream(fh, max_record, max_bytes)


def framed_stream(fh: BinaryIO, max_record: int, max_bytes: int = MAX_READ_BYTES) -> Iterator[Record]:
    """Each record of a seekable stream, from its current position; the data of a record longer than
    ``max_record`` is skipped, not read (None). Raises FramingError where the framing cannot be read further."""
    start = fh.tell()
    size = fh.seek(0, io.SEEK_END)
    fh.seek(start)
    pos, index, empty_run, spent = start, 0, 0, 0
    while True:
        head = fh.read(HEADER_BYTES)
        if not head:
            return
        index += 1
        length = _length(head, index, size - pos - HEADER_BYTES)
        empty_run = empty_run + 1 if length == 0 else 0
        if empty_run >= MAX_EMPTY_RUN:
            raise FramingError(
                f"{MAX_EMPTY_RUN} empty records in a row from record {index - MAX_EMPTY_RUN + 1} (zeros: a sparse or "
                "preallocated file); the rest of the file was not read"
            )
        data = None
        if length <= max_record:
            spent += HEADER_BYTES + length + TRAILER_BYTES
            if spent > max_bytes:
                raise FramingError(
                    f"read {max_bytes:,} bytes of records (advisor's limit per file); record {index} and the ones "
                    "after it were not read"
                )
            data = fh.read(length)
            fh.seek(TRAILER_BYTES, io.SEEK_CUR)
        else:
            fh.seek(length + TRAILER_BYTES, io.SEEK_CUR)
        yield Record(index, pos + HEADER_BYTES, length, data)
        pos += HEADER_BYTES + length + TRAILER_BYTES


def _length(head: bytes, index: int, left: int) -> int:
    """The data length a record header announces, checked against the ``left`` bytes after the header."""
    if len(head) < HEADER_BYTES:
        raise FramingError(f"the file ends inside record {index}'s header (a truncated write)")
    (length,) = struct.unpack("<Q", head[:8])
    if length > left:
        raise FramingError(
            f"record {index} announces {length:,} bytes, but {max(left, 0):,} are left in the file (a truncated "
            "write, or not a record); the rest of the file was not read"
        )
    return length
