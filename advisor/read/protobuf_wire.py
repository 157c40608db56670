"""The protocol-buffer wire format, decoded without the message definitions (no protobuf dependency).

For files whose schema is small and stable (MindSpore's summary and lineage events): a message is a sequence of
(field number, wire type, value); ``fields`` yields them and the caller knows what each number means. Every length
is checked against the buffer, so a truncated or hostile file raises ``WireError``, never reads past its end.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
#: a varint longer than this is not one (10 bytes hold 64 bits)
MAX_VARINT_BYTES = 10


class WireError(ValueError):
    """The bytes are not a well-formed protocol-buffer message."""


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it) of the varint at ``pos``."""
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


def fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field of a message: an int for a varint, the raw bytes of a
    length-delimited field, the raw 8 or 4 bytes of a fixed-width one. Groups (wire types 3, 4) are refused."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if wire == VARINT:
            value, pos = varint(buf, pos)
            yield number, wire, value
        elif wire == LENGTH:
            n, pos = varint(buf, pos)
            if pos + n > end:
                raise WireError(f"field {number}: {n} bytes announced, {end - pos} left")
            yield number, wire, buf[pos : pos + n]
            pos += n
        elif wire in (FIXED64, FIXED32):
            n = 8 if wire == FIXED64 else 4
            if pos + n > end:
                raise WireError(f"field {number}: truncated fixed-width value")
            yield number, wire, buf[pos : pos + n]
            pos += n
        else:
            raise WireError(f"field {number}: wire type {wire} is not read")


def double(raw: int | bytes) -> float:
    if not isinstance(raw, bytes) or len(raw) != 8:
        raise WireError("not a double")
    return float(struct.unpack("<d", raw)[0])


def single(raw: int | bytes) -> float:
    if not isinstance(raw, bytes) or len(raw) != 4:
        raise WireError("not a float")
    return float(struct.unpack("<f", raw)[0])


def int64(raw: int | bytes) -> int:
    """A varint read as a signed 64-bit integer (int32/int64 fields: negatives are 10-byte two's complement)."""
    if not isinstance(raw, int):
        raise WireError("not a varint")
    return raw - (1 << 64) if raw >= 1 << 63 else raw


def text(raw: int | bytes, limit: int = 10_000) -> str:
    if not isinstance(raw, bytes):
        raise WireError("not a string")
    return raw[:limit].decode("utf-8", errors="replace")


def sub(raw: int | bytes) -> bytes:
    if not isinstance(raw, bytes):
        raise WireError("not a message")
    return raw


#: how ``message`` decodes a field: the last value of a scalar field wins; "all" keeps every raw value (repeated)
_DECODERS: dict[str, Callable[[int | bytes], Any]] = {
    "text": text,
    "int": int64,
    "double": double,
    "float": single,
    "bytes": sub,
}


def message(buf: bytes, schema: dict[int, str]) -> dict[int, Any]:
    """The fields of ``buf`` that ``schema`` names (field number -> "text", "int", "double", "float", "bytes" or
    "all"), decoded; fields it does not name are skipped. Raises WireError."""
    out: dict[int, Any] = {}
    for number, _wire, raw in fields(buf):
        how = schema.get(number)
        if how == "all":
            out.setdefault(number, []).append(raw)
        elif how is not None:
            out[number] = _DECODERS[how](raw)
    return out
