"""What the templates show, prepared from a ``Report`` (templates only loop and branch).

Nothing here decides a cause: it groups, orders and splits text for display.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from advisor.evidence_format import fmt_num, fmt_pct
from advisor.inventory import InputRecord
from advisor.report.model import CauseReport, CheckReport, Report
from advisor.report.plots import PlotView, build_all

_CODE = re.compile(r"`([^`]+)`")


@dataclass
class TextPart:
    kind: Literal["text", "code", "block"]
    text: str = ""
    lines: list[str] = field(default_factory=list)
    space_before: bool = False  # the text starts/ends with a space (Markdown's filter trims it)
    space_after: bool = False


def split_code(text: str | None) -> list[TextPart]:
    """'save `x` then `a; b`' -> text / inline code / code block parts.

    A code span holding several statements (``import ...; cap = ...``) becomes a
    block with one statement a line, ready to paste into a training script.
    """
    parts: list[TextPart] = []
    pos = 0
    for m in _CODE.finditer(text or ""):
        if m.start() > pos:
            parts.append(_text(text[pos : m.start()]))
        code = m.group(1)
        stmts = [s.strip() for s in code.split("; ")]
        if len(stmts) > 1 and stmts[0].startswith(("from ", "import ")):
            parts.append(TextPart("block", lines=stmts))
        else:
            parts.append(TextPart("code", code))
        pos = m.end()
    if pos < len(text or ""):
        parts.append(_text(text[pos:]))
    return parts


def _text(s: str) -> TextPart:
    return TextPart("text", s, space_before=s[:1].isspace(), space_after=s[-1:].isspace())


@dataclass
class CheckView:
    stage: str
    title: str
    status: str
    inputs: list[str]
    why: str | None
    enable: list[TextPart]


@dataclass
class Anomaly:
    chart: str
    label: str
    x: str
    unit: str


@dataclass
class ReportView:
    plots: list[PlotView]
    checks: list[CheckView]
    ran: int
    skipped: int
    found: list[CauseReport]
    weak: list[CauseReport]
    used: list[InputRecord]
    unreadable: list[InputRecord]
    ignored: list[InputRecord]
    noted: list  # used inputs that come with a note (a duplicated key, a setting another file overrides)
    anomalies: list[Anomaly]
    top_confidence: str | None
    top_confidence_width: str | None


def checks_view(checks: list[CheckReport]) -> list[CheckView]:
    return [
        CheckView(
            stage=c.stage,
            title=c.title,
            status=c.status,
            inputs=list(c.inputs),
            why=c.why,
            enable=split_code(c.enable) if c.status == "skipped" else [],
        )
        for c in checks
    ]


def anomalies(plots: list[PlotView]) -> list[Anomaly]:
    """The marked events of the pictures, as text (for Markdown and for readers without pictures)."""
    out: list[Anomaly] = []
    for p in plots:
        unit = "operator #" if p.x_label.startswith("operator") else p.x_label
        seen: dict[str, Anomaly] = {}
        counts: dict[str, int] = {}
        for m in sorted((m for m in p.markers if not m.tick_only), key=lambda m: m.at):
            counts[m.full] = counts.get(m.full, 0) + 1
            seen.setdefault(m.full, Anomaly(chart=p.title, label=m.full, x=fmt_num(m.at), unit=unit))
        for label, a in seen.items():  # one line per kind of event: the first, with how many there were
            if counts[label] > 1:
                a.label = f"{label} ({counts[label]}x, first)"
            out.append(a)
    return out


def noted_inputs(report: Report) -> list[InputRecord]:
    """Inputs used with a note to act on (a duplicated key, a setting another file overrides); the
    readers' descriptive 'read as <format>' is not one."""
    return [i for i in report.inputs if i.status == "used" and i.why and not i.why.startswith("read as ")]


def build_view(report: Report) -> ReportView:
    t = report.summary.top_confidence
    plots = build_all(report.charts)
    return ReportView(
        plots=plots,
        checks=checks_view(report.checks),
        ran=sum(c.status == "ran" for c in report.checks),
        skipped=sum(c.status == "skipped" for c in report.checks),
        found=report.found(),
        weak=[c for c in report.causes if c.confidence < report.report_threshold],
        used=[i for i in report.inputs if i.status == "used"],
        unreadable=[i for i in report.inputs if i.status == "unreadable"],
        ignored=[i for i in report.inputs if i.status == "ignored"],
        noted=noted_inputs(report),
        anomalies=anomalies(plots),
        top_confidence=fmt_pct(t, 0) if t is not None else None,
        top_confidence_width=f"{max(0.0, min(1.0, t)) * 100:.0f}%" if t is not None else None,
    )
