"""The protocol-buffer wire format, decoded without the message definitions (no protobuf dependency).

For files whose schema is small and stable (MindSpore's summary and lineage events): a message is a sequence of
(field number, wire type, value); ``fields`` yields them and the caller knows what each number means. Every length
is checked against the buffer, so a truncated or hostile file raises ``WireError``, never reads past its end.

A buffer is ``bytes`` or a ``memoryview`` (of a memory-mapped file: a length-delimited field is then a slice of the
map, never a copy). A ``Budget`` shared by every ``fields`` call on one file bounds the fields decoded, so a file of
millions of empty fields ends with a ``WireError`` instead of a long loop.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

#: what the decoder reads: bytes, or a view of a memory-mapped file
Data: TypeAlias = bytes | memoryview

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
#: a varint longer than this is not one (10 bytes hold 64 bits)
MAX_VARINT_BYTES = 10


class WireError(ValueError):
    """The bytes are not a well-formed protocol-buffer message."""


class Budget:
    """How many more fields the decoding of one file may meet: past ``limit``, ``OverBudget``."""

    def __init__(self, limit: int) -> None:
        self.limit, self.left = limit, limit

    def exceeded(self) -> OverBudget:
        return OverBudget(f"more than {self.limit:,} protocol-buffer fields (advisor's limit per file)")


class OverBudget(WireError):
    """A file holds more fields than its reader decodes (a well-formed file may: the message says it is a limit)."""


def varint(buf: Data, pos: int) -> tuple[int, int]:
    """(value, position after it) of the varint at ``pos``."""
    if pos < len(buf) and buf[pos] < 0x80:  # one byte: most lengths and small values
        return buf[pos], pos + 1
    value = shift = 0
    for i in range(MAX_VARINT_BYTES):
        if pos + i >= len(buf):
            raise WireError("truncated varint")
        b = buf[pos + i]
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos + i + 1
        shift += 7
    raise WireError("varint longer than 10 bytes")


def fields(buf: Data, budget: Budget | None = None) -> Iterator[tuple[int, int, int | Data]]:
    """(field number, wire type, value) of each field of a message: an int for a varint, the raw bytes (or a view)
    of a length-delimited field, the raw 8 or 4 bytes of a fixed-width one. Groups (wire types 3, 4) are refused.
    ``budget``: spent by one for each field."""
    pos, end = 0, len(buf)
    while pos < end:
        if budget is not None:
            budget.left -= 1
            if budget.left < 0:
                raise budget.exceeded()
        key = buf[pos]
        if key < 0x80:  # a one-byte key: fields 1 to 15, the common case
            pos += 1
        else:
            key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if wire == LENGTH:
            n, pos = varint(buf, pos)
            if pos + n > end:
                raise WireError(f"field {number}: {n} bytes announced, {end - pos} left")
            yield number, wire, buf[pos : pos + n]
            pos += n
        elif wire == VARINT:
            value, pos = varint(buf, pos)
            yield number, wire, value
        elif wire in (FIXED64, FIXED32):
            n = 8 if wire == FIXED64 else 4
            if pos + n > end:
                raise WireError(f"field {number}: truncated fixed-width value")
            yield number, wire, buf[pos : pos + n]
            pos += n
        else:
            raise WireError(f"field {number}: wire type {wire} is not read")


def double(raw: int | Data) -> float:
    if isinstance(raw, int) or len(raw) != 8:
        raise WireError("not a double")
    return float(struct.unpack("<d", raw)[0])


def single(raw: int | Data) -> float:
    if isinstance(raw, int) or len(raw) != 4:
        raise WireError("not a float")
    return float(struct.unpack("<f", raw)[0])


def int64(raw: int | Data) -> int:
    """A varint read as a signed 64-bit integer (int32/int64 fields: negatives are 10-byte two's complement)."""
    if not isinstance(raw, int):
        raise WireError("not a varint")
    return raw - (1 << 64) if raw >= 1 << 63 else raw


def text(raw: int | Data, limit: int = 10_000) -> str:
    if isinstance(raw, int):
        raise WireError("not a string")
    return bytes(raw[:limit]).decode("utf-8", errors="replace")


def sub(raw: int | Data) -> Data:
    if isinstance(raw, int):
        raise WireError("not a message")
    return raw


#: how ``message`` decodes a field: the last value of a scalar field wins; "all" keeps every raw value (repeated)
_DECODERS: dict[str, Callable[[int | Data], Any]] = {
    "text": text,
    "int": int64,
    "double": double,
    "float": single,
    "bytes": sub,
}


def message(buf: Data, schema: dict[int, str], budget: Budget | None = None) -> dict[int, Any]:
    """The fields of ``buf`` that ``schema`` names (field number -> "text", "int", "double", "float", "bytes" or
    "all"), decoded; fields it does not name are skipped. Raises WireError."""
    out: dict[int, Any] = {}
    for number, _wire, raw in fields(buf, budget):
        how = schema.get(number)
        if how == "all":
            out.setdefault(number, []).append(raw)
        elif how is not None:
            out[number] = _DECODERS[how](raw)
    return out
