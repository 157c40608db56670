"""Read a growing text log once, not again at every look: for ``advisor watch``.

A reader process runs the ordinary text-log reader (``read.logs.text.read_text``)
over the log as it grows: its "file" hands out complete lines and, at the end
of the data, waits for more. When the watcher wants what has been read so far,
the reader process forks; in the copy the file reports its end, so the reader
finishes exactly as it would on a file that ended there (same parsing, same
end-of-file handling), and the copy sends the result back through a pipe.
Each look then costs a fork and a copy of the bounded series, not a re-read of
the whole log. Where ``os.fork`` is missing, logs are read again every time.

The result comes from our own forked process (pickle over a private pipe),
never from the user's files.
"""

from __future__ import annotations

import codecs
import io
import os
import pickle
import select
import signal
import struct
from pathlib import Path
from typing import Any

#: logs below this size are simply read again (a process per small log is not worth it)
FOLLOW_MIN_BYTES = 1 << 20
#: the longest wait for a snapshot (a reader that has fallen far behind)
SNAPSHOT_TIMEOUT_S = 120.0
_CHUNK = 1 << 20


class _TailFile:
    """The open "file" that read_text reads: complete lines; at the end, wait for more or for a snapshot."""

    def __init__(self, path: str, encoding: str, requests: int):
        self._fh = open(path, "rb")  # noqa: SIM115 (lives as long as the reader process)
        self._dec = io.IncrementalNewlineDecoder(
            codecs.getincrementaldecoder(encoding)(errors="replace"), translate=True
        )
        self._buf = ""
        self._pos = 0
        self._requests = requests
        self.ended = False  # in a snapshot copy: the file ends here
        self._asked = False

    def __enter__(self):  # what open() returns: this object
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def readline(self, limit: int = -1) -> str:
        while True:
            buf, pos = self._buf, self._pos
            i = buf.find("\n", pos)
            if i >= 0 and (limit < 0 or i - pos < limit):
                self._pos = i + 1
                return buf[pos : i + 1]
            if limit >= 0 and len(buf) - pos >= limit:
                self._pos = pos + limit
                return buf[pos : pos + limit]
            if self.ended:
                return ""  # a line still being written is not part of the snapshot
            data = self._fh.read(_CHUNK)
            if data:
                self._buf = buf[pos:] + self._dec.decode(data)
                self._pos = 0
                continue
            if self._asked:  # everything written before the request has been read: take the snapshot
                self._asked = False
                if os.fork() == 0:
                    self.ended = True
                continue
            ready, _, _ = select.select([self._requests], [], [], 0.05)
            if ready:
                if not os.read(self._requests, 1):  # the watcher is gone
                    os._exit(0)
                self._asked = True  # read to the end of the file first


class _PathShim:
    """A Path whose open() gives the tail file (read_text opens what it is given)."""

    def __init__(self, path: Path, tail: _TailFile):
        self._path = path
        self._tail = tail

    def open(self, *args: Any, **kwargs: Any) -> _TailFile:
        return self._tail

    def __getattr__(self, name: str) -> Any:
        return getattr(self._path, name)


def _reader(path: str, shown: str, encoding: str, requests: int, results: int) -> None:
    """The reader process: returns from read_text only in a snapshot copy, which sends the LogRead and exits."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # snapshot copies are reaped by the system
    from advisor.read.logs import text

    tail = _TailFile(path, encoding, requests)
    try:
        read = text.read_text(_PathShim(Path(path), tail), shown, encoding)  # type: ignore[arg-type]
        data = pickle.dumps(read, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 (reported to the watcher, which reads the file itself)
        data = pickle.dumps(exc.__class__.__name__)
    view = memoryview(struct.pack("<Q", len(data)) + data)
    while view:
        view = view[os.write(results, view) :]
    os._exit(0)


class Follower:
    """One growing text log, read incrementally by a reader process."""

    def __init__(self, path: Path, shown: str, encoding: str):
        self.path = path
        st = path.stat()
        self.identity = (st.st_dev, st.st_ino)
        self.size = st.st_size
        req_r, self._req_w = os.pipe()
        self._res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the reader process
            try:
                os.close(self._req_w)
                os.close(self._res_r)
                _reader(str(path), shown, encoding, req_r, res_w)
            finally:
                os._exit(1)
        os.close(req_r)
        os.close(res_w)
        self.pid = pid

    def snapshot(self) -> Any:
        """What has been read so far (a LogRead); None when the reader failed."""
        os.write(self._req_w, b"s")
        head = self._read(8)
        if head is None:
            return None
        data = self._read(struct.unpack("<Q", head)[0])
        result = pickle.loads(data) if data is not None else None
        return result if not isinstance(result, str) else None

    def _read(self, n: int) -> bytes | None:
        out = bytearray()
        while len(out) < n:
            ready, _, _ = select.select([self._res_r], [], [], SNAPSHOT_TIMEOUT_S)
            if not ready:
                return None
            chunk = os.read(self._res_r, n - len(out))
            if not chunk:
                return None
            out += chunk
        return bytes(out)

    def close(self) -> None:
        for fd in (self._req_w, self._res_r):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        except (OSError, ChildProcessError):
            pass


class Followers:
    """The text logs of a run folder that are followed; ``read(path, shown)`` is read_file's override."""

    def __init__(self) -> None:
        self._by_path: dict[Path, Follower] = {}
        self.available = hasattr(os, "fork")

    def read(self, path: Path, shown: str) -> Any:
        if not self.available:
            return None
        from advisor.read.logs.sniff import sniff

        try:
            st = path.stat()
        except OSError:
            return None
        f = self._by_path.get(path)
        if f is not None and (f.identity != (st.st_dev, st.st_ino) or st.st_size < f.size):
            f.close()  # replaced or truncated: start again
            f = None
            del self._by_path[path]
        if f is None:
            if st.st_size < FOLLOW_MIN_BYTES:
                return None
            kind = sniff(path)
            if kind.kind != "text":
                return None
            f = self._by_path[path] = Follower(path, shown, kind.encoding)
            f.encoding = kind.encoding  # type: ignore[attr-defined]
        f.size = st.st_size
        read = f.snapshot()
        if read is None:
            f.close()
            del self._by_path[path]
            return None
        if getattr(f, "encoding", "utf-8") not in ("utf-8", "binary"):
            read.notes.append(f"read as {f.encoding}")  # type: ignore[attr-defined]
        return read

    def close(self) -> None:
        for f in self._by_path.values():
            f.close()
        self._by_path.clear()
