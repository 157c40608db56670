"""msprobe's ``dump.json``, read member by member: its ``data`` mapping (one member per operator call) is never
built whole.

``json.loads`` of a 190 MB dump.json of 700,000 operator calls holds 1.5 GB of Python objects before the first
record is made. Here each member of the top-level object, and each operator call of ``data``, is decoded on its own
(``json.JSONDecoder.raw_decode`` at its position, with the same number hooks and depth limit as
``advisor.read.safe.loads_json``), and only the first ``max_calls`` calls are decoded: the rest of ``data`` is
skipped by a scan of its strings and brackets, and ``DumpJson.more`` says it was there.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # json's C string scanner
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from advisor.read.safe import number_parsers, too_deep

_BLANK = re.compile(r"[ \t\n\r]*")
#: what skips a value: the C scanner's speed, with objects and numbers dropped as they are read
_SKIP = json.JSONDecoder(
    object_pairs_hook=lambda _pairs: None, parse_float=lambda _s: None, parse_int=lambda _s: None
).scan_once  # type: ignore[attr-defined]  # the C scanner behind raw_decode


class DumpJsonError(ValueError):
    """Not a JSON object, nested too deep or too big; the message, a phrase after the file's name, says where."""


@dataclass
class DumpJson:
    """The members of dump.json other than ``data``, the first operator calls of ``data``, and whether it has more."""

    meta: dict[str, Any] = field(default_factory=dict)
    calls: dict[str, Any] | None = None  # None: no ``data`` member, or one that is not a mapping
    more: bool = False  # ``data`` holds more calls than were decoded
    notes: list[str] = field(default_factory=list)  # numbers out of range


class _Cursor:
    """A position in the text and the decoders that read values there (the C scanner's ``scan_once``, called
    directly: a dump.json has hundreds of thousands of members)."""

    def __init__(self, text: str, max_depth: int, notes: list[str]) -> None:
        parse_int, parse_float = number_parsers(notes)
        self.text, self.pos, self.max_depth = text, 0, max_depth
        self._scan = json.JSONDecoder(parse_int=parse_int, parse_float=parse_float).scan_once  # type: ignore[attr-defined]  # the C scanner behind raw_decode

    def peek(self) -> str:
        """The next character after blanks (the cursor moved to it); '' at the end."""
        self.pos = _BLANK.match(self.text, self.pos).end()  # type: ignore[union-attr]
        return self.text[self.pos : self.pos + 1]

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise DumpJsonError(f"is not valid JSON: expected '{char}' at character {self.pos}")
        self.pos += 1

    def value(self, depth: int) -> Any:
        """The value at the cursor (``depth``: the levels above it), decoded."""
        value = self._run(self._scan)
        if too_deep(value, self.max_depth - depth):
            raise DumpJsonError(f"nests deeper than the limit of {self.max_depth} levels")
        return value

    def skip(self) -> None:
        """Past the value at the cursor: parsed by the C scanner, every object and number dropped as it is read."""
        self._run(_SKIP)

    def _run(self, scan: Any) -> Any:
        self.peek()
        try:
            value, self.pos = scan(self.text, self.pos)
        except StopIteration:
            raise DumpJsonError(f"is not valid JSON: expected a value at character {self.pos}") from None
        except RecursionError:
            raise DumpJsonError(f"nests deeper than the limit of {self.max_depth} levels") from None
        except json.JSONDecodeError as exc:
            raise DumpJsonError(f"is not valid JSON: {str(exc).splitlines()[0]}") from None
        return value

    def key(self) -> str:
        if self.peek() != '"':
            raise DumpJsonError(f"is not valid JSON: expected a key at character {self.pos}")
        try:
            key, self.pos = scanstring(self.text, self.pos + 1)
        except json.JSONDecodeError as exc:
            raise DumpJsonError(f"is not valid JSON: {str(exc).splitlines()[0]}") from None
        self.expect(":")
        return key

    def members(self) -> Iterator[str]:
        """The keys of the object at the cursor; after each, the caller decodes or skips its value."""
        self.expect("{")
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            yield self.key()
            if self.peek() != ",":
                self.expect("}")
                return
            self.pos += 1


def read_calls(text: str, max_calls: int, max_depth: int) -> DumpJson:
    """The top-level object of a dump.json ``text``, with at most ``max_calls`` members of its ``data``. Raises
    DumpJsonError."""
    out = DumpJson()
    cur = _Cursor(text, max_depth, out.notes)
    if cur.peek() != "{":  # JSON of another kind (a list): no calls; or not JSON at all
        cur.value(0)
        _check_end(cur)
        return out
    for key in cur.members():
        if key != "data":
            out.meta[key] = cur.value(1)
        elif cur.peek() != "{":
            out.calls, out.more = None, False
            cur.skip()
        else:  # a later "data" member wins, as with json.loads
            out.calls, out.more = _calls(cur, max_calls)
    _check_end(cur)
    return out


def _check_end(cur: _Cursor) -> None:
    if cur.peek():
        raise DumpJsonError(f"is not valid JSON: extra data at character {cur.pos}")


def _calls(cur: _Cursor, max_calls: int) -> tuple[dict[str, Any], bool]:
    calls: dict[str, Any] = {}
    members = cur.members()
    for op in members:
        if len(calls) >= max_calls and op not in calls:
            cur.skip()
            for _op in members:
                cur.skip()
            return calls, True
        calls[op] = cur.value(2)
    return calls, False


def read_dump_calls(path: Path, max_calls: int, max_depth: int, max_bytes: int) -> DumpJson:
    """``read_calls`` of a dump.json file of at most ``max_bytes``. Raises DumpJsonError, UnicodeDecodeError or
    OSError."""
    size = path.stat().st_size
    if size > max_bytes:
        raise DumpJsonError(f"is {size} bytes, above the {max_bytes}-byte limit")
    return read_calls(path.read_bytes().decode("utf-8"), max_calls, max_depth)
