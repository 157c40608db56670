"""Writing a file whole or not at all: a temporary file beside it, then renamed over it (``os.replace`` is
atomic on POSIX and Windows), so that a full disk or an interrupted write leaves the old file as it was.
Only a regular file is written or replaced: ``target_problem`` says why a path is not one advisor writes (a
FIFO, a device, a socket, a read-only file)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator


@contextmanager
def open_atomic(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through, whole or not at all: what the ``with`` block writes replaces
    ``path`` when the block ends without an exception; otherwise (a full disk, an error of the writer) the
    temporary file is removed and the old ``path`` is left as it was. A path that is something else than a
    regular file (a FIFO, whose opening blocks; a device; a socket) is refused with an OSError."""
    target = Path(path)
    kind = special_kind(target)
    if kind:
        raise OSError(errno.EINVAL, f"it is {kind}, not a regular file", str(target))
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


#: what a path is when it is neither a regular file nor a folder, by the file type bits of its mode
_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(path: str | os.PathLike) -> str | None:
    """ "a FIFO (named pipe)", "a character device"... for a path that is one (links followed; nothing is
    opened), else None (a regular file, a folder, nothing there)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return next((kind for test, kind in _SPECIAL_KINDS if test(mode)), None)


def target_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` may not be written as a report (None: it may): a FIFO (opening it would block until a
    reader comes), a device or a socket; or an existing file nobody may write (no write permission bit, or one
    the user cannot write), which advisor does not replace, as ``rm`` asks before removing one."""
    kind = special_kind(path)
    if kind:
        return f"is {kind}, not a regular file; name a file to write the report to"
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None  # nothing there yet (or a path the folder checks name)
    if stat.S_ISREG(st.st_mode) and not (st.st_mode & 0o222 and os.access(path, os.W_OK)):
        return (
            "is a read-only file; advisor does not replace a file you cannot write (make it writable or name another)"
        )
    return None


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """``data`` to ``path``, whole (see ``open_atomic``); OSError when it cannot be written."""
    with open_atomic(path) as fh:
        fh.write(data)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    write_atomic(path, text.encode("utf-8"))
