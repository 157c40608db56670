"""The interface every extractor implements.

An extractor is a plain function ``extract(pair: RunPair) -> Extraction``.
It finds its artifacts in the run (and baseline) folder through
``RunFolder``, reads them with the modules of ``advisor/read/`` (file formats
-> raw records, no judgement), turns the records into facts with pure
functions (numbers -> summaries, no causes), and returns everything in one
``Extraction``. It never raises on bad user data: an unreadable file becomes
an ``InputRecord(status="unreadable", why=...)`` and the rest goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from pydantic import BaseModel, Field

from advisor.facts.base import Fact, Side
from advisor.inventory import InputRecord, RunFolder


@dataclass
class RunPair:
    """What extractors see: the run, the optional baseline, and options."""

    run: RunFolder
    baseline: RunFolder | None = None
    #: user overrides of documented thresholds, e.g. {"loss_curve.spike_z": 8}
    options: dict[str, Any] = field(default_factory=dict)

    def sides(self) -> list[RunFolder]:
        return [self.run] + ([self.baseline] if self.baseline is not None else [])


class CheckRun(BaseModel):
    """A stage of the tuning routine that an extractor ran, and on what."""

    stage: str = Field(description="a stage id of advisor.stages")
    inputs: list[str] = Field(default_factory=list, description="files the stage used")
    note: str | None = None


class Series(BaseModel):
    """Data for a picture in the report (the report draws it; extractors only give numbers)."""

    chart: str = Field(
        description="which chart: loss, lr, loss_scale, grad_norm, op_error, class_hist, feature_range, ..."
    )
    label: str = Field(description="legend text, e.g. 'train loss'")
    side: Side = "run"
    style: Literal["line", "band", "bar", "points"] = "line"
    x: list[float] = Field(default_factory=list)
    y: list[float | None] = Field(default_factory=list, description="None for a non-finite value")
    y_low: list[float] | None = Field(default=None, description="lower edge, for style=band")
    categories: list[str] | None = Field(default=None, description="category names, for style=bar")
    x_label: str = "step"
    y_label: str = ""
    log_y: bool = False


class Marker(BaseModel):
    """A point of interest on a chart: first NaN, divergence start, source operator..."""

    chart: str
    x: float
    label: str
    kind: str = "event"


class Extraction(BaseModel):
    """What one extractor returns."""

    facts: list[Fact] = Field(default_factory=list)
    inputs: list[InputRecord] = Field(default_factory=list)
    checks: list[CheckRun] = Field(default_factory=list)
    series: list[Series] = Field(default_factory=list)
    markers: list[Marker] = Field(default_factory=list)

    def merge(self, other: "Extraction") -> None:
        self.facts.extend(other.facts)
        self.inputs.extend(other.inputs)
        self.checks.extend(other.checks)
        self.series.extend(other.series)
        self.markers.extend(other.markers)


Extractor = Callable[[RunPair], Extraction]
