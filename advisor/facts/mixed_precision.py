"""Facts about mixed-precision training as the logs show it (stage: floating-point exceptions)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class LossScaleTrend(Fact):
    """History of the dynamic loss scale (from loss_scale values or scaler messages)."""

    kind: Literal["loss_scale_trend"] = "loss_scale_trend"
    points: int = Field(description="number of loss-scale values seen")
    initial_value: float | None = Field(default=None, description="first loss scale")
    final_value: float | None = Field(default=None, description="last loss scale")
    min_value: float | None = Field(default=None, description="smallest loss scale")
    reductions: int = Field(default=0, description="times the scale went down")
    late_reductions: int = Field(
        default=0,
        description="reductions after the start-up calibration (the first calibration_share of the logged steps)",
    )
    reached_one: bool = Field(default=False, description="the scale fell to 1 or below (no more headroom)")
    final_to_initial_ratio: float | None = Field(default=None, description="final / initial scale")
    is_constant: bool = Field(default=False, description="every logged value is the same (a fixed scale)")
    doc = "dynamic loss-scale history: reductions, minimum, fell to 1"


class OverflowEvents(Fact):
    """Overflow / skipped-step messages of the loss scaler."""

    kind: Literal["overflow_events"] = "overflow_events"
    count: int = Field(description="overflow messages (the file with the most, when several logs repeat them)")
    first_step: int | None = Field(default=None, description="step of the first overflow")
    last_step: int | None = Field(default=None, description="step of the last overflow")
    steps_logged: int | None = Field(default=None, description="training steps the log spans")
    rate: float | None = Field(default=None, description="overflows per training step (count / steps_logged)")
    late_count: int = Field(default=0, description="overflows after the start-up calibration window")
    late_rate: float | None = Field(default=None, description="late_count / steps after the calibration window")
    doc = "loss-scaler overflow messages: count, rate per step, and how many after start-up calibration"


class TrainingCrash(Fact):
    """A Python traceback or an explicit non-finite-loss message in a log."""

    kind: Literal["training_crash"] = "training_crash"
    exception: str = Field(description="the exception line, e.g. 'FloatingPointError: Loss became infinite or NaN'")
    step: int | None = Field(default=None, description="the last step logged before it")
    is_nonfinite: bool = Field(default=False, description="the message is about a NaN/Inf loss or gradient")
    is_api_change: bool = Field(
        default=False,
        description="the exception says an attribute, argument or import name is not there, deprecated or removed "
        "(the error an API change between library versions raises)",
    )
    doc = "a traceback or non-finite-loss message found in a training log"
