"""The report as one typed object. It *is* the JSON contract (docs/report-json.md):
``--format json`` writes ``report.model_dump_json()``; templates receive only it.
Fields only grow.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from advisor.chart_data import Marker, Series
from advisor.inventory import InputRecord


class EvidenceItem(BaseModel):
    rule: str = Field(description="id of the rule that fired")
    text: str = Field(description="the rule's evidence, filled with the observed values")
    confidence: float = Field(description="the rule's own confidence, -1..1")
    source: str | None = Field(default=None, description="where the matched facts came from (file:line, step)")
    facts: dict[str, Any] = Field(default_factory=dict, description="the matched facts, by name")
    code: str | None = Field(default=None, description="the line of the training script the evidence points at")
    code_line: int | None = Field(default=None, description="that line's number (1-based)")


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
    is_smell: bool = Field(
        default=False,
        description="every supporting rule reads only settings, structure or data (a setting that often causes "
        "trouble), none a curve, score, tensor or dump of the run: a cause only if the run shows a symptom it explains",
    )
    user_rules_only: bool = Field(
        default=False,
        description="every rule behind the cause is the user's (--rules): its confidence is what those rules "
        "say, combined as docs/writing-rules.md describes, neither calibrated nor weighed against a prior",
    )
    rule_confidence: float | None = Field(
        default=None,
        description="the rules' calibrated confidence before it was weighed against the symptom's prior "
        "(None when the cause comes from the prior alone)",
    )
    prior: float | None = Field(
        default=None,
        description="the share of this cause among real runs with the run's symptom (advisor/knowledge/symptom_priors.py)",
    )
    explains: list[str] = Field(default_factory=list, description="the run's symptoms this cause can produce")
    derived_from: str | None = Field(
        default=None,
        description="the cause whose mechanism produces this cause's evidence in this run (a rate far above its "
        "band produces saturation and exploding gradients): this one is its consequence and is weighed by its "
        "prior alone (advisor/knowledge/cause_chains.py)",
    )
    derived_note: str | None = Field(default=None, description="derived_from in words, for the report")
    warning_note: str | None = Field(
        default=None,
        description="for a warning (report.smells): why it is not a cause of this run's problem, in words (the run "
        "trains well, keeps up with its benchmark, or shows a symptom this cause does not produce)",
    )
    check: str | None = Field(default=None, description="the cheapest check that confirms or rules out this cause")


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


class SymptomReport(BaseModel):
    """One thing the run shows (a ``symptom`` fact), as the report leads with it."""

    id: str = Field(description="the symptom id (docs/report-json.md lists them)")
    title: str
    text: str = Field(description="what the run shows, in one sentence")
    step: float | None = None
    updates_before: int | None = Field(default=None, description="optimizer updates made before it appeared")
    source: str | None = Field(default=None, description="where it was read (file:line)")


class DifferentialItem(BaseModel):
    """A candidate cause of the run's symptom when none reached the report threshold, with its cheapest check."""

    id: str
    title: str
    confidence: float
    check: str | None = None


class Summary(BaseModel):
    verdict: Literal["cause_found", "differential", "weak_signals", "nothing_found", "no_input"]
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
    symptoms: list[SymptomReport] = Field(
        default_factory=list, description="what the run shows, most specific first (empty: no symptom)"
    )
    symptom_status: Literal["symptom", "trains_well", "unclear", "no_evidence"] | None = Field(
        default=None,
        description="symptom; trains_well (no symptom, and plainly a model that works); unclear (curves or "
        "scores, too little to call it healthy); no_evidence (nothing that shows how training went)",
    )
    health: str | None = Field(default=None, description="for trains_well: what shows it")
    differential: list[DifferentialItem] = Field(
        default_factory=list,
        description="when the run shows a symptom and no cause reached the threshold: the candidate causes in "
        "order, each with the one cheapest check that confirms or rules it out",
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
    smells: list[CauseReport] = Field(
        default_factory=list,
        description="warnings: settings or structures that often cause trouble, found in a run that shows no "
        "symptom they would produce; worth fixing, not the cause of a problem this run shows",
    )
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
