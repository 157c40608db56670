"""A log given on standard input (``RUN`` is ``-``): held in memory, never saved anywhere.

``read_stdin()`` reads at most ``MAX_STDIN_BYTES``; ``MemoryFile`` gives the
readers the few ``Path`` methods they use (``open``, ``stat``, ``read_bytes``,
``name``, ``suffix``), so the log readers need no second code path.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from typing import IO, BinaryIO

#: the most standard input read (a pasted excerpt or a piped log; a bigger log can be passed as a file)
MAX_STDIN_BYTES = 256 * 1024 * 1024
STDIN_NAME = "stdin"


class StdinTooLarge(ValueError):
    pass


def read_stdin(stream: BinaryIO | None = None, limit: int = MAX_STDIN_BYTES) -> bytes:
    """All of standard input (bytes), or ``StdinTooLarge`` past ``limit`` bytes."""
    src = stream if stream is not None else sys.stdin.buffer
    data = src.read(limit + 1)
    if len(data) > limit:
        raise StdinTooLarge(
            f"standard input holds more than {limit // (1024 * 1024)} MiB; "
            "save the log to a file and pass the file as RUN"
        )
    return data


@dataclass(frozen=True)
class _Stat:
    st_size: int


class MemoryFile:
    """A read-only file held in memory, with the ``Path`` methods the readers call."""

    def __init__(self, name: str, data: bytes):
        self.name = name
        self.data = data

    @property
    def suffix(self) -> str:
        dot = self.name.rfind(".")
        return self.name[dot:] if dot > 0 else ""

    @property
    def stem(self) -> str:
        return self.name[: len(self.name) - len(self.suffix)]

    def stat(self) -> _Stat:
        return _Stat(len(self.data))

    def read_bytes(self) -> bytes:
        return self.data

    def open(
        self, mode: str = "r", encoding: str | None = None, errors: str | None = None, newline: str | None = None
    ) -> IO:
        if "w" in mode or "a" in mode or "+" in mode:
            raise PermissionError(f"{self.name} is read-only")
        raw = io.BytesIO(self.data)
        if "b" in mode:
            return raw
        return io.TextIOWrapper(raw, encoding=encoding or "utf-8", errors=errors, newline=newline)

    def as_posix(self) -> str:
        return self.name

    def __fspath__(self) -> str:  # pragma: no cover - only reached by a reader that needs a real file
        raise OSError(f"{self.name} is held in memory (standard input), not a file on disk")

    def __repr__(self) -> str:
        return f"MemoryFile({self.name!r}, {len(self.data)} bytes)"
