"""Safe reading of untrusted files: the checks every reader makes before and while it parses.

A run folder is written by someone else's program (or by someone hostile), so
every file it names may be a symbolic-link loop, a FIFO that blocks forever, a
device, a name holding a NUL byte or bytes that are not UTF-8, JSON nested
thousands of levels deep, or numbers of thousands of digits. The functions
here turn each of these into a *reason* (a short text naming the problem)
instead of an exception or a hang, so the reader can report the file as
unreadable, or the value as cut, and the rest of the diagnosis goes on.

- ``file_problem(path)``: why a path may not be opened (None: it may).
- ``resolve_within(root, rel)``: a path named inside a file (manifest, dump.json),
  resolved inside ``root``; refuses NUL bytes, loops and escapes.
- ``loads_json(text, notes)``: ``json.loads`` with a depth limit and out-of-range
  numbers mapped to +-inf with a note.
- ``parse_number(text)``: one number, or a note saying why it is not one.
- ``shown(text)``: text safe to print on a terminal, in a report or a CSV cell
  (control characters and undecodable bytes escaped).

See docs/untrusted-input.md for what advisor promises about untrusted input.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

#: nesting deeper than this is refused (a metrics record or config has a handful of levels)
MAX_JSON_DEPTH = 64
#: integers with more digits than this are out of the float range anyway (1.8e308)
MAX_INT_DIGITS = 308
#: the same in bits (a YAML integer may be written in hexadecimal, binary or base 60)
MAX_INT_BITS = 1024


class UnsafeInput(ValueError):
    """A file or value that advisor refuses to read; the message names the problem."""


# -- names -----------------------------------------------------------------------------------
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape_char(m: re.Match) -> str:
    c = m.group(0)
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): show the byte
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def shown(text: object, newlines: bool = True) -> str:
    """``text`` with control characters (terminal escapes, NUL, bidi overrides) and bytes that
    were not UTF-8 written as ``\\xNN``; tabs kept, newlines kept unless ``newlines`` is False."""
    s = str(text)
    out = _CONTROL.sub(_escape_char, s)
    if not newlines:
        out = out.replace("\n", "\\n").replace("\r", "\\r")
    return out


#: terminal escape sequences: CSI (colours, cursor moves), OSC (titles, links), and single-character escapes
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")


def clean_log_line(line: str) -> str:
    """A log line without terminal colour codes and NUL bytes (a coloured ``loss \x1b[32m0.5\x1b[0m``
    reads as ``loss 0.5``)."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    return line.replace("\x00", "") if "\x00" in line else line


def name_problem(name: str) -> str | None:
    """Why a file name cannot be shown as it is (None: it can)."""
    if "\x00" in name:
        return "its name holds a NUL byte"
    return None


# -- files -----------------------------------------------------------------------------------
def file_problem(path: str | os.PathLike, max_bytes: int | None = None) -> str | None:
    """Why ``path`` may not be opened as a regular file (None: it may).

    Follows symbolic links (a loop is a problem); refuses FIFOs (opening one blocks),
    devices and sockets; with ``max_bytes``, refuses larger files.
    """
    p = os.fspath(path)
    if "\x00" in p:
        return "its name holds a NUL byte"
    try:
        st = os.stat(p)
    except OSError as exc:
        if exc.errno == 40 or "loop" in str(exc).lower():  # ELOOP
            return "a symbolic-link loop"
        if os.path.islink(p):
            return "a symbolic link to nothing"
        return f"cannot be read ({exc.strerror or exc})"
    except ValueError as exc:
        return f"cannot be read ({exc})"
    if stat.S_ISFIFO(st.st_mode):
        return "a named pipe (FIFO), not a file: opening it could block forever"
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        return "a device, not a file"
    if stat.S_ISSOCK(st.st_mode):
        return "a socket, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if max_bytes is not None and st.st_size > max_bytes:
        return f"{st.st_size} bytes, above the {max_bytes}-byte limit for this kind of file"
    return None


def resolve(path: str | os.PathLike) -> Path | None:
    """``Path(path).resolve()``, or None for a symbolic-link loop or an impossible name."""
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError, ValueError):
        return None


def resolve_within(root: str | os.PathLike, rel: str, what: str = "folder", real_root: Path | None = None) -> Path:
    """``root / rel`` resolved; raises UnsafeInput when ``rel`` holds a NUL byte, is a link loop,
    or leads outside ``root``. ``real_root``: ``root`` already resolved (a caller resolving many names
    under one root passes it once)."""
    if not isinstance(rel, str):
        raise UnsafeInput("a file name that is not text")
    if "\x00" in rel:
        raise UnsafeInput(f"'{shown(rel)}' holds a NUL byte")
    try:  # os.path on strings: a dump index resolves 10^5 names
        candidate = os.path.realpath(os.path.join(os.fspath(root), rel), strict=False)
    except (OSError, ValueError):
        candidate = None
    if candidate is None or os.path.islink(candidate):  # realpath stops on a link loop, without raising
        raise UnsafeInput(f"'{shown(rel)}' is a symbolic-link loop")
    real_root = real_root or resolve(root)
    top = os.fspath(real_root) if real_root is not None else None
    if top is None or not (candidate == top or candidate.startswith(top.rstrip(os.sep) + os.sep)):
        raise UnsafeInput(f"'{shown(rel)}' points outside the {what}")
    return Path(candidate)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(value: Any) -> Any:
    """A CSV cell that a spreadsheet will not run: text starting with ``= + - @``, tab or CR gets a
    leading apostrophe (OWASP's CSV-injection rule); control characters escaped; numbers unchanged."""
    if not isinstance(value, str):
        return value
    value = shown(value, newlines=False)
    return "'" + value if value.startswith(_FORMULA_START) else value


# -- numbers ---------------------------------------------------------------------------------
def parse_number(text: str) -> tuple[float | int | None, str | None]:
    """(value, None) for a number; (None, why) for text that is not one; (+-inf, why) for a
    number out of the float range (``1e999``, an integer of thousands of digits).

    NaN and infinities spelled out (``nan``, ``inf``, ``-Infinity``) are read as such with no note.
    """
    s = str(text).strip()
    if not s or len(s) > 10_000:
        return None, "not a number" if s else "empty"
    body = s.lstrip("+-")
    if body.isdigit():
        if len(body) > MAX_INT_DIGITS:
            return (-math.inf if s.startswith("-") else math.inf), (
                f"an integer of {len(body)} digits, out of range; read as {'-' if s.startswith('-') else ''}inf"
            )
        return int(s), None
    try:
        value = float(s)
    except (ValueError, OverflowError):
        return None, f"'{shown(s[:40], newlines=False)}' is not a number"
    if math.isinf(value) and "inf" not in body.lower():
        return value, f"{shown(s[:40], newlines=False)} is out of the float range; read as {value}"
    return value, None


def number_parsers(notes: list[str]):
    """(parse_int, parse_float) hooks for ``json.loads`` that note out-of-range numbers (kept cheap:
    they run for every number of a dump.json)."""

    def parse_int(s: str):
        if len(s) <= MAX_INT_DIGITS:
            return int(s)
        value, note = parse_number(s)
        notes.append(note or "")
        return value

    def parse_float(s: str):
        value = float(s)
        if value in (math.inf, -math.inf):
            notes.append(f"{s[:40]} is out of the float range; read as {value}")
        return value

    return parse_int, parse_float


def finite_float(value: Any) -> float | None:
    """``float(value)`` for ints and floats, with huge ints as +-inf; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


# -- JSON ------------------------------------------------------------------------------------


def too_deep(value: Any, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """Whether parsed JSON nests lists/mappings deeper than ``max_depth`` (iterative: no recursion)."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def loads_json(text: str | bytes, notes: list[str] | None = None, max_depth: int = MAX_JSON_DEPTH, **kw: Any) -> Any:
    """``json.loads`` that raises UnsafeInput (a ValueError) for nesting deeper than ``max_depth``,
    and reads numbers out of the float range as +-inf with a note in ``notes``.

    Other syntax errors raise ``json.JSONDecodeError`` (also a ValueError), as ``json.loads`` does.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    notes = notes if notes is not None else []
    parse_int, parse_float = number_parsers(notes)
    try:  # json's C scanner raises RecursionError (catchable) near Python's recursion limit
        value = json.loads(text, parse_int=parse_int, parse_float=parse_float, **kw)
    except RecursionError:
        raise UnsafeInput(f"JSON nested deeper than the limit of {max_depth} levels") from None
    if too_deep(value, max_depth):
        raise UnsafeInput(f"JSON nested deeper than the limit of {max_depth} levels")
    return value


# -- YAML ------------------------------------------------------------------------------------
def yaml_int(loader: Any, node: Any) -> Any:
    """A YAML int constructor (for SafeLoader subclasses) that reads an integer beyond the float range (hundreds of
    decimal digits, a long hexadecimal, binary or sexagesimal one) as +-inf, with a note on the loader's ``notes``
    list when it has one: a setting is a number a rule can compare, never a value of thousands of digits."""
    text = str(node.value).replace("_", "")
    body = text.lstrip("+-")
    negative = text.startswith("-")
    if body.isdigit() and len(body) > MAX_INT_DIGITS:
        return _out_of_range(loader, node, f"an integer of {len(body)} digits", negative)
    import yaml

    value = yaml.SafeLoader.construct_yaml_int(loader, node)
    if abs(value).bit_length() > MAX_INT_BITS:
        return _out_of_range(loader, node, f"an integer of {abs(value).bit_length()} bits", value < 0)
    return value


def _out_of_range(loader: Any, node: Any, what: str, negative: bool) -> float:
    notes = getattr(loader, "notes", None)
    if isinstance(notes, list):
        notes.append(f"line {node.start_mark.line + 1}: {what}, out of range; read as {'-' if negative else ''}inf")
    return -math.inf if negative else math.inf
