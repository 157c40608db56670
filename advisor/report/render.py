"""Report -> text, Markdown, HTML (jinja2 templates) or JSON. Templates never compute."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from advisor.evidence_format import fmt_num, fmt_pct, fmt_step
from advisor.read.safe import shown
from advisor.report.model import Report
from advisor.rulebase import templates_dir

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


@lru_cache(maxsize=2)
def _env(html: bool) -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default=html),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(num=fmt_num, pct=fmt_pct, step=fmt_step, md=_md_escape)
    return env


def _escaped(value: Any) -> Any:
    """Every string of a dumped report with control characters and undecodable bytes escaped."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    return value


def safe_report(report: Report) -> Report:
    """The report with every user-controlled text made safe to print: terminal escape sequences,
    NUL bytes and bytes that were not UTF-8 (file names) become visible ``\\xNN`` text."""
    return Report.model_validate(_escaped(report.model_dump()))


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
