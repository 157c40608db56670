"""Training logs and metrics files -> ``LogRead`` (bounded series + events). No judgement.

One way in: ``read_file(path, shown)`` recognises the content (``sniff``) and
hands the file to the reader of its kind: text logs (every format family of
this package on every line), metrics CSV, JSONL, ``trainer_state.json``,
TensorBoard events. ``merge.merge_reads`` joins the files of one run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from advisor.read.logs.records import LogRead
from advisor.read.logs.sniff import sniff

#: set by ``advisor watch`` (advisor/follow.py) while it diagnoses: (path, shown) -> the LogRead of a log
#: it reads incrementally, or None to read the file here
override: Callable[[Path, str], LogRead | None] | None = None


def read_file(path: Path, shown: str | None = None) -> LogRead:
    """Read one file of any supported kind; problems end up in ``LogRead.problem``, never raised."""
    if override is not None:
        pre = override(path, shown or path.name)
        if pre is not None:
            return pre
    from advisor.read.logs import metrics_csv, metrics_jsonl, tensorboard
    from advisor.read.logs import hf_trainer, text

    shown = shown or path.name
    try:
        kind = sniff(path)
        if kind.kind in ("empty", "binary"):
            read = LogRead(path=shown, problem=kind.why)
        elif kind.kind == "tfevents":
            read = tensorboard.read_events(path, shown)
        elif kind.kind == "trainer_state":
            read = hf_trainer.read_state(path, shown)
        elif kind.kind == "csv":
            read = metrics_csv.read_csv(path, shown, kind.encoding)
        elif kind.kind == "jsonl":
            read = metrics_jsonl.read_jsonl(path, shown, kind.encoding)
        else:
            read = text.read_text(path, shown, kind.encoding)
        if kind.encoding not in ("utf-8", "binary"):
            read.notes.append(f"read as {kind.encoding}")
    except OSError as exc:
        read = LogRead(path=shown, problem=f"cannot read: {exc.strerror or exc}")
    return read


__all__ = ["LogRead", "read_file", "sniff"]
