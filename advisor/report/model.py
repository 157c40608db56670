"""The report as one typed object. It *is* the JSON contract (docs/report-json.md):
``--format json`` writes ``report.model_dump_json()``; templates receive only it.
Fields only grow.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from advisor.extract.base import Marker, Series
from advisor.inventory import InputRecord


class EvidenceItem(BaseModel):
    rule: str = Field(description="id of the rule that fired")
    text: str = Field(description="the rule's evidence, filled with the observed values")
    confidence: float = Field(description="the rule's own confidence, -1..1")
    source: str | None = Field(default=None, description="where the matched facts came from (file:line, step)")
    facts: dict[str, Any] = Field(default_factory=dict, description="the matched facts, by name")


class CauseReport(BaseModel):
    id: str
    title: str
    stage: str | None = None
    confidence: float = Field(description="combined confidence in [0, 1]")
    raw_confidence: float = Field(
        description="combined certainty factor in [-1, 1], before clipping and before "
        "the calibration map turned it into the confidence"
    )
    severity: Literal["low", "medium", "high"]
    evidence: list[EvidenceItem] = Field(default_factory=list, description="rules supporting the cause")
    opposing: list[EvidenceItem] = Field(default_factory=list, description="rules arguing against it")
    remedies: list[str] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=list)


class FindingReport(BaseModel):
    id: str
    source: str | None = Field(default=None, description="the rule that concluded it")
    text: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class CheckReport(BaseModel):
    stage: str
    title: str
    status: Literal["ran", "skipped"]
    inputs: list[str] = Field(default_factory=list)
    why: str | None = None
    enable: str | None = Field(default=None, description="for a skipped stage: what to collect to run it")
    notes: list[str] = Field(
        default_factory=list,
        description="for a stage that ran: what it found out about its "
        "inputs (e.g. how a dump pair was read: rerun or port)",
    )


class Summary(BaseModel):
    verdict: Literal["cause_found", "weak_signals", "nothing_found", "no_input"]
    headline: str
    top_cause: str | None = None
    top_confidence: float | None = None
    first_remedies: list[str] = Field(
        default_factory=list,
        description="the top cause's first remedies; empty when no cause reached the report threshold",
    )
    certainty: str = Field(description="how sure the advisor is overall, in words")
    benchmark_gap: str | None = Field(
        default=None,
        description="with a baseline: how the run falls short of it "
        "(metric, size, step), or that it keeps up; shown "
        "first",
    )
    next_step: str | None = Field(default=None, description="the routine's next step when no cause explains the gap")
    next_steps: list[str] = Field(
        default_factory=list,
        description="when no cause was found: what to collect so that the checks that could not run can run",
    )


class CrashReport(BaseModel):
    """A traceback or non-finite-loss abort found in a log (the training_crash fact), shown as it was read."""

    exception: str
    step: int | None = None
    is_nonfinite: bool = False
    source: str | None = None


class Chart(BaseModel):
    """Data of one picture (geometry is computed in report/plots.py at render time)."""

    id: str
    title: str
    series: list[Series] = Field(default_factory=list)
    markers: list[Marker] = Field(default_factory=list)


class Report(BaseModel):
    advisor_version: str
    run: str
    baseline: str | None = None
    summary: Summary
    causes: list[CauseReport] = Field(default_factory=list)
    ruled_out: list[CauseReport] = Field(default_factory=list, description="causes that rules argued away")
    findings: list[FindingReport] = Field(default_factory=list)
    crashes: list[CrashReport] = Field(default_factory=list, description="the run stopped with an exception")
    checks: list[CheckReport] = Field(default_factory=list)
    inputs: list[InputRecord] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    facts_count: int = 0
    rules_count: int = 0
    rule_errors: int = Field(default=0, description="errors in the rule files given (--rules): those rules did not run")
    charts: list[Chart] = Field(default_factory=list)
    report_threshold: float = Field(default=0.5, description="confidence from which a cause counts as found")

    def found(self, min_confidence: float | None = None) -> list[CauseReport]:
        t = self.report_threshold if min_confidence is None else min_confidence
        return [c for c in self.causes if c.confidence >= t]


#: the Python API name (issue 2: ``advisor.diagnose(...) -> Diagnosis``)
Diagnosis = Report
