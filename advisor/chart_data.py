"""What a chart of the report shows, as extractors give it: lines, bands and bars (``Series``) and points of
interest (``Marker``). Extractors compute them; ``advisor/report/`` only lays them out, so the report layer
imports these from here, not from ``advisor/extract/``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from advisor.facts.base import Side

#: how a band's legend text ends: "<curve label>: baseline band ±N%" (the report colours it as its curve)
BAND_SUFFIX = ": baseline band ±"


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
