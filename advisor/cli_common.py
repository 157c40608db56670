"""What the command-line modules share (cli.py, cli_rules.py, cli_sweep.py): imports out of the garbage
collector's reach, the report's format and place (-o), NAME=VALUE flags, diagnose's extractor options and
the rule engine of --engine. A usage problem raises ``advisor.errors.UsageError``: ``cli.main`` prints it on
one line and exits 2.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from advisor.errors import UsageError
from advisor.read.safe import shown

#: True when the process is the ``advisor`` command's own (``cli.run``), not a caller of ``main`` (tests, scripts)
OWN_PROCESS = False


def mark_own_process() -> None:
    """Record that this process is the ``advisor`` command's own (``cli.run``): see ``long_lived_imports``."""
    global OWN_PROCESS
    OWN_PROCESS = True


@contextmanager
def long_lived_imports() -> Iterator[None]:
    """Imports made with the cyclic garbage collector off, their objects then put out of its reach.

    Importing a diagnosis's modules makes a few hundred thousand objects that live as long as the process
    (classes, pydantic schemas, regexes, the rule base's code). With the collector on, about a hundred young,
    ten middle and one full collection walk them again and again during a diagnosis and free almost nothing
    (~50 ms of a ~0.6 s run); ``gc.freeze`` moves them to the permanent generation and the collector is on
    again for the diagnosis itself. Only in the command's own process: a caller of ``main`` keeps its collector
    as it was (freezing would keep its pending garbage for ever).
    """
    if not OWN_PROCESS or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


_EXT_FORMATS = {".html": "html", ".htm": "html", ".json": "json", ".md": "md", ".txt": "text", ".text": "text"}


def format_from_path(path: str | None, fmt: str | None) -> str:
    """The report format: --format where given, else from -o's extension, else text."""
    if fmt:
        return fmt
    if path:
        ext = Path(path).suffix.lower()
        if ext not in _EXT_FORMATS:
            raise UsageError(f"-o '{path}': name it .html, .json, .md or .txt, or give --format")
        return _EXT_FORMATS[ext]
    return "text"


def check_output(out: str | None, folders: list[tuple[str | None, str]]) -> None:
    """-o must land in an existing folder, outside the run and baseline folders (never written), and name
    nothing but a regular file the user may write (``advisor.atomic.target_problem``)."""
    if not out:
        return
    from advisor.atomic import target_problem
    from advisor.inventory import output_problem

    problem = target_problem(out) or output_problem(out, folders)
    if problem:
        raise UsageError(f"-o '{out}': {problem}")


def write_report(text: str, out: str | None) -> None:
    """The report to ``out`` (a temporary file beside it, then renamed: a full disk leaves an old report whole),
    or to standard output."""
    if out:
        from advisor.atomic import write_text_atomic

        try:  # a folder, an unwritable place or a full disk: one line, exit 2
            write_text_atomic(out, text)
        except OSError as exc:
            raise UsageError(f"-o '{shown(out)}': cannot write the report ({exc.strerror or exc})") from None
    else:
        sys.stdout.write(text)


def parse_assignments(values: list[str], flag: str = "--param") -> dict[str, Any]:
    """The NAME=VALUE flags (--param, --threshold) as a dict, each value read as JSON where it parses, else text."""
    out: dict[str, Any] = {}
    for v in values or []:
        key, sep, raw = v.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} needs NAME=VALUE, got '{v}'")
        try:
            import json

            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


def cluster_runner(scheduler: str | None, workers: int | None = None, trusted: bool = False) -> Any:
    """The comparison runner of --scheduler (``advisor.compare.dask_runner.ClusterRunner``: it connects on first
    use, and compares in this process with a note when the cluster cannot be used), or None without it. A value
    that is not a Dask address, or one off this machine without TLS and without --trust-scheduler, is a usage
    error before anything connects."""
    if scheduler is None:
        return None
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise UsageError('--scheduler needs dask.distributed: pip install "accuracy-advisor[dask]"')
    from advisor.compare.dask_runner import ClusterRunner, SchedulerAddressError

    try:
        return ClusterRunner(scheduler, workers, trusted)
    except SchedulerAddressError as exc:
        raise UsageError(f"--scheduler {exc}") from None


def print_notes(runner: Any) -> None:
    """What a cluster runner has to say (the cluster could not be used, workers capped), on stderr."""
    for note in getattr(runner, "notes", ()):
        print(shown(f"advisor: note: {note}"), file=sys.stderr)


def diagnose_options(args: argparse.Namespace) -> dict[str, Any]:
    """The extractor options of diagnose's flags: --threshold, --baseline-kind (--scheduler is a runner:
    ``cluster_runner``)."""
    options = parse_assignments(args.threshold, "--threshold")
    if args.baseline_kind != "auto":
        options["compare.baseline_kind"] = args.baseline_kind
    return options


def chosen_engine(args: argparse.Namespace) -> str:
    """The rule engine back-end for --engine (advisor/rulebase/backends.py chooses), or a usage error."""
    from advisor.rulebase.backends import EngineUnavailable, choose

    try:
        return choose(getattr(args, "engine", None))
    except (ValueError, EngineUnavailable) as exc:
        raise UsageError(f"--engine: {exc}") from None
