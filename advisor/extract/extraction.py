"""What an extractor returns: its facts, the inputs it recorded, the stages of the routine it ran, and its chart
data. A module of its own so that the run view and its interpreters (advisor/extract/view/) record what they read
without importing the extractors' interface (advisor/extract/base.py)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from advisor.chart_data import Marker, Series
from advisor.facts.base import Fact
from advisor.inventory import InputRecord


class CheckRun(BaseModel):
    """A stage of the tuning routine that an extractor ran, and on what."""

    stage: str = Field(description="a stage id of advisor.stages")
    inputs: list[str] = Field(default_factory=list, description="files the stage used")
    note: str | None = None


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
