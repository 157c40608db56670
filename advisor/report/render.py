"""Report -> text, Markdown, HTML (jinja2 templates) or JSON. Templates never compute."""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from advisor.evidence_format import fmt_num, fmt_pct, fmt_step
from advisor.report.model import Report
from advisor.rulebase import templates_dir

FORMATS = ("text", "json", "md", "html")


def _md_escape(text: object) -> str:
    """Markdown-safe inline text: no raw HTML, no table breaks."""
    s = str(text)
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("`", "'")):
        s = s.replace(a, b)
    return " ".join(s.split())


@lru_cache(maxsize=2)
def _env(html: bool) -> Environment:
    env = Environment(loader=FileSystemLoader(str(templates_dir())), undefined=StrictUndefined,
                      autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default=html),
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=fmt_num, pct=fmt_pct, step=fmt_step, md=_md_escape)
    return env


def render(report: Report, fmt: str = "text", color: bool = False) -> str:
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
