"""Writing a file whole or not at all: a temporary file beside it, then renamed over it (``os.replace`` is
atomic on POSIX and Windows), so that a full disk or an interrupted write leaves the old file as it was."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator


@contextmanager
def open_atomic(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through, whole or not at all: what the ``with`` block writes replaces
    ``path`` when the block ends without an exception; otherwise (a full disk, an error of the writer) the
    temporary file is removed and the old ``path`` is left as it was. A path that is not a regular file
    (``/dev/stdout``, a FIFO) is written in place: renaming over it would replace it."""
    target = Path(path)
    if target.exists() and not target.is_file():
        with open(target, "wb") as fh:
            yield fh
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        try:
            fh = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            raise
        with fh:
            yield fh
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """``data`` to ``path``, whole (see ``open_atomic``); OSError when it cannot be written."""
    with open_atomic(path) as fh:
        fh.write(data)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    write_atomic(path, text.encode("utf-8"))
