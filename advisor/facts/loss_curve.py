"""Facts about loss curves (stage: loss curve)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class LossCurve(Fact):
    """Summary of one loss series (train or eval) of a run."""

    kind: Literal["loss_curve"] = "loss_curve"
    split: Literal["train", "eval"] = Field(description="train or eval loss")
    points: int = Field(default=0, description="number of logged values")
    first_step: int | None = Field(default=None, description="step of the first value")
    last_step: int | None = Field(default=None, description="step of the last value")
    first_value: float | None = Field(default=None, description="first finite loss value")
    last_value: float | None = Field(default=None, description="last finite loss value")
    min_value: float | None = Field(default=None, description="smallest finite loss value")
    first_nonfinite_step: int | None = Field(default=None, description="step of the first NaN/Inf loss, if any")
    diverged: bool = Field(default=False, description="loss became non-finite or rose far above its start")
    doc = "summary of a train or eval loss series: values, divergence"
