"""Report -> text, Markdown, HTML (jinja2 templates) or JSON. Templates never compute.

jinja2 is imported for the template formats only (a JSON report does without it), and the templates' compiled
code is kept in the user's cache folder (``templates/`` under advisor's cache folder, signed and checked as
report/templates.py says), so a report is not compiled from source on every run.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from advisor.evidence_format import FILTERS
from advisor.read.safe import shown
from advisor.report.model import Report
from advisor.report.templates import template_code_cache, templates_dir

if TYPE_CHECKING:
    from jinja2 import Environment

FORMATS = ("text", "json", "md", "html")


def md_escape(text: object) -> str:
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
        bytecode_cache=template_code_cache(),  # signed, this user's alone (templates.py)
    )
    env.filters.update(FILTERS, md=md_escape)
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
