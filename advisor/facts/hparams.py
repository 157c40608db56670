"""Facts about hyper-parameters (stage: code and hyper-parameters)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class Hyperparameter(Fact):
    """One effective hyper-parameter of a run, under its canonical name."""

    kind: Literal["hyperparameter"] = "hyperparameter"
    name: str = Field(description="canonical name: learning_rate, batch_size, epochs, optimizer, loss_scale, ...")
    value: float | bool | str | None = Field(description="effective value (number, flag or name)")
    raw_key: str | None = Field(default=None, description="the key as written in the file, e.g. optimizer.lr")
    is_default: bool = Field(default=False, description="true when filled in from the framework's default")
    doc = "an effective hyper-parameter under its canonical name (learning_rate, batch_size, ...)"
