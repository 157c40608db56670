"""Training logs and metrics files -> ``LogRead`` (bounded series + events). No judgement.

One way in: ``read_file(path, shown)`` recognises the content (``sniff``) and
hands the file to the reader of its kind: text logs (every format family of
this package on every line), metrics CSV, JSONL, ``trainer_state.json``,
TensorBoard events. ``merge.merge_reads`` joins the files of one run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from advisor.read.bounded import MAX_LOG_BYTES, capped
from advisor.read.logs.records import LogRead
from advisor.read.logs.sniff import SAMPLE_BYTES, sniff, sniff_sample

#: set by ``advisor watch`` (advisor/follow.py) while it diagnoses: (path, shown) -> the LogRead of a log
#: it reads incrementally, or None to read the file here
override: Callable[[Path, str], LogRead | None] | None = None


def read_file(path: Path, shown: str | None = None, data: bytes | None = None, parsed: Any = None) -> LogRead:
    """Read one file of any supported kind; problems end up in ``LogRead.problem``, never raised.

    ``data``: the whole file, already read by the caller (then a ``trainer_state.json`` is not opened again;
    ``parsed``: its JSON, already parsed, or None). Files of the other kinds are read from ``path``."""
    return read_file_head(path, shown, 0, data, parsed)[0]


def read_file_head(
    path: Path, shown: str | None = None, head_bytes: int = 0, data: bytes | None = None, parsed: Any = None
) -> tuple[LogRead, bytes | None]:
    """``read_file``, and the first ``head_bytes`` bytes of the file read by the same open (for the searches of
    printed settings and models); None for the head when the file was not opened here (or could not be)."""
    if override is not None:
        pre = override(path, shown or path.name)
        if pre is not None:
            return pre, None
    from advisor.read.mindinsight import is_summary, read_summary

    shown = shown or path.name
    head: bytes | None = None
    stream: BinaryIO | None = None
    try:
        if is_summary(path.name):  # MindSpore summary events: binary records, never sniffed as text
            return read_summary(path, shown)[0], None
        if path.name.startswith("events.out.tfevents"):
            kind = sniff(path)
        elif data is not None:
            kind = sniff_sample(data)
        else:  # one open: the sample that tells the kind (and the head) is the start of the read
            stream = path.open("rb")
            head = stream.read(max(head_bytes, SAMPLE_BYTES))
            kind = sniff_sample(head)
        if kind.kind in ("empty", "binary"):
            read = LogRead(path=shown, problem=kind.why)
        elif kind.kind == "tfevents":
            from advisor.read.logs import tensorboard

            read = tensorboard.read_events(path, shown)
        elif kind.kind == "trainer_state":
            from advisor.read.logs import hf_trainer

            if data is None:
                read = hf_trainer.read_state(path, shown)
            else:
                read = hf_trainer.read_state_bytes(data, shown, parsed)
        else:  # csv, jsonl, text: read from the start of the open stream, or opened by path
            if stream is None:
                stream = path.open("rb")
            stream.seek(0)
            limited, cap = capped(stream, MAX_LOG_BYTES)
            read = _stream_reader(kind.kind)(path, shown, kind.encoding, limited)
            if cap.capped:
                read.notes.append(
                    f"read the first {MAX_LOG_BYTES >> 30} GiB only (advisor's limit per file); the rest was not read"
                )
        if kind.encoding not in ("utf-8", "binary"):
            read.notes.append(f"read as {kind.encoding}")
    except OSError as exc:
        read = LogRead(path=shown, problem=f"cannot read: {exc.strerror or exc}")
    finally:
        if stream is not None:
            stream.close()
    return read, (head[:head_bytes] if head is not None and head_bytes else None)


def _stream_reader(kind: str) -> Callable[[Path, str, str, BinaryIO], LogRead]:
    """The reader of a sniffed ``kind`` read from a stream (imported when a file of its kind is read)."""
    if kind == "csv":
        from advisor.read.logs.metrics_csv import read_csv

        return read_csv
    if kind == "jsonl":
        from advisor.read.logs.metrics_jsonl import read_jsonl

        return read_jsonl
    from advisor.read.logs.text import read_text

    return read_text


__all__ = ["LogRead", "read_file", "read_file_head", "sniff"]
