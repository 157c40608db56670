"""Findings: intermediate conclusions asserted by rules (chained inference)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class Finding(Fact):
    """A conclusion a rule drew that other rules can match (``finding: {id: ...}``)."""

    kind: Literal["finding"] = "finding"
    id: str = Field(description="the finding's id, e.g. loss_diverged")
    rule: str | None = Field(default=None, description="id of the rule that concluded it")
    confidence: float | None = Field(default=None, description="confidence of the concluding rule, -1..1")
    text: str | None = Field(default=None, description="the rendered evidence of the concluding rule")
    doc = "an intermediate conclusion drawn by a rule, for chained inference"
