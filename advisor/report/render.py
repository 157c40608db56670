"""Report -> text, Markdown, HTML (jinja2 templates) or JSON. Templates never compute.

jinja2 is imported for the template formats only (a JSON report does without it), and the templates' compiled
code is kept in the user's cache folder (``templates/`` under advisor's cache folder: ``marshal`` data checked
against the template's source and the jinja and Python versions, the same trust as Python's ``__pycache__``),
so a report is not compiled from source on every run.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from advisor.evidence_format import FILTERS
from advisor.read.safe import shown
from advisor.report.model import Report
from advisor.report.templates import templates_dir

if TYPE_CHECKING:
    from jinja2 import BytecodeCache, Environment

FORMATS = ("text", "json", "md", "html")


def _md_escape(text: object) -> str:
    """Markdown-safe inline text: no raw HTML, no table breaks."""
    s = str(text)
    # no raw HTML, no table breaks, no code-span breaks, and no link/image syntax ([text](url), ![](url),
    # [ref]: url): a log line or a rule text never becomes a live link or a remote image
    for a, b in (
        ("\\", "\\\\"),
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ("|", "\\|"),
        ("`", "'"),
        ("[", "\\["),
        ("]", "\\]"),
    ):
        s = s.replace(a, b)
    return " ".join(s.split())


def _bytecode_cache() -> BytecodeCache | None:
    """A file cache of compiled templates in advisor's cache folder; None when the cache is off.

    Each file holds a header (this format, jinja's and Python's versions), the SHA-1 of the template's source as
    jinja computes it, then the compiled code as ``marshal`` writes it: no pickle (jinja's own
    ``FileSystemBytecodeCache`` unpickles its checksum). A file whose header or checksum differs is compiled again
    and rewritten; a folder that cannot be read or written only means compiling from source, as without a cache.
    """
    import marshal
    import pathlib
    import sys

    import jinja2
    from jinja2 import BytecodeCache

    from advisor.rulebase.cache import trusted, usable_cache_dir

    root = usable_cache_dir("templates")  # this user's alone: marshal data is code
    if root is None:
        return None
    folder = str(root)
    header = f"advisor-template 1 jinja {jinja2.__version__} python {sys.version_info[0]}.{sys.version_info[1]}\n"

    class TemplateCodeCache(BytecodeCache):
        def _path(self, bucket: Any) -> str:
            return os.path.join(folder, f"{bucket.key}.code")

        def load_bytecode(self, bucket: Any) -> None:
            try:
                if not trusted(pathlib.Path(self._path(bucket))):  # written by someone else: compile from source
                    raise OSError("untrusted cache file")
                with open(self._path(bucket), "rb") as fh:
                    data = fh.read()
                head, checksum, code = data.split(b"\n", 2)
                if head + b"\n" == header.encode() and checksum.decode() == bucket.checksum:
                    bucket.code = marshal.loads(code)
            except (OSError, ValueError, EOFError, TypeError, UnicodeDecodeError):  # absent or damaged
                bucket.reset()

        def dump_bytecode(self, bucket: Any) -> None:
            path = self._path(bucket)
            tmp = f"{path}.{os.getpid()}.tmp"
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(tmp, "wb") as fh:
                    fh.write(header.encode() + bucket.checksum.encode() + b"\n" + marshal.dumps(bucket.code))
                os.replace(tmp, path)
            except OSError:
                try:
                    os.remove(tmp)
                except OSError:
                    pass

    return TemplateCodeCache()


@lru_cache(maxsize=2)
def _env(html: bool) -> Environment:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default=html),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=_bytecode_cache(),
    )
    env.filters.update(FILTERS, md=_md_escape)
    return env


def escaped(value: Any) -> Any:
    """Every string of a dumped report with control characters and undecodable bytes escaped."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {escaped(k): escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [escaped(v) for v in value]
    return value


def safe_report(report: Report) -> Report:
    """The report with every user-controlled text made safe to print: terminal escape sequences,
    NUL bytes and bytes that were not UTF-8 (file names) become visible ``\\xNN`` text."""
    return Report.model_validate(escaped(report.model_dump()))


def render(report: Report, fmt: str = "text", color: bool = False) -> str:
    report = safe_report(report)
    if fmt == "json":
        return report.model_dump_json(indent=2) + "\n"
    if fmt == "html":
        from advisor.report.view import build_view

        view = build_view(report)
        return _env(True).get_template("report.html.j2").render(report=report, view=view, plots=view.plots)
    if fmt == "md":
        from advisor.report.view import build_view

        return _env(False).get_template("report.md.j2").render(report=report, view=build_view(report))
    if fmt == "text":
        from advisor.report.view import noted_inputs

        return _env(False).get_template("report.txt.j2").render(report=report, color=color, noted=noted_inputs(report))
    raise ValueError(f"unknown format '{fmt}' (expected one of: {', '.join(FORMATS)})")
