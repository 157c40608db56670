"""Chart data -> SVG geometry (numbers only; templates draw the shapes).

Every picture is inline SVG made from the report's data: no script, no
network. Long series are thinned to at most ``MAX_POINTS`` points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from advisor.evidence_format import fmt_num
from advisor.report.model import Chart

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 36
MAX_POINTS = 600
PALETTE = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bc4c00", "#0a7a8a")


@dataclass
class Line:
    label: str
    color: str
    points: str
    dashed: bool = False


@dataclass
class Band:
    label: str
    color: str
    path: str


@dataclass
class Bar:
    x: float
    y: float
    w: float
    h: float
    label: str
    color: str


@dataclass
class MarkerView:
    x: float
    label: str
    kind: str


@dataclass
class Tick:
    pos: float
    label: str


@dataclass
class PlotView:
    id: str
    title: str
    width: int = WIDTH
    height: int = HEIGHT
    lines: list[Line] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    bars: list[Bar] = field(default_factory=list)
    markers: list[MarkerView] = field(default_factory=list)
    xticks: list[Tick] = field(default_factory=list)
    yticks: list[Tick] = field(default_factory=list)
    x_label: str = ""
    y_label: str = ""
    legend: list[tuple[str, str]] = field(default_factory=list)
    empty: bool = False


def _thin(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if x.size <= MAX_POINTS:
        return x, y
    idx = np.unique(np.linspace(0, x.size - 1, MAX_POINTS).astype(int))
    return x[idx], y[idx]


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    return list(np.linspace(lo, hi, n))


def build(chart: Chart) -> PlotView:
    view = PlotView(id=chart.id, title=chart.title)
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    bars = [s for s in chart.series if s.style == "bar"]
    if bars:
        return _bars(view, chart, pw, ph)
    log_y = any(s.log_y for s in chart.series)
    xs, ys = [], []
    for s in chart.series:
        x = np.asarray(s.x, dtype=np.float64)
        y = np.asarray([np.nan if v is None else v for v in s.y], dtype=np.float64)
        if log_y:
            y = np.where(y > 0, y, np.nan)
            y = np.log10(y)
        xs.append(x)
        ys.append(y)
        if s.y_low is not None:
            lo = np.asarray(s.y_low, dtype=np.float64)
            ys.append(np.log10(np.where(lo > 0, lo, np.nan)) if log_y else lo)
            xs.append(x)
    allx = np.concatenate(xs) if xs else np.array([])
    ally = np.concatenate(ys) if ys else np.array([])
    fin = np.isfinite(ally)
    if allx.size == 0 or not fin.any():
        view.empty = True
        return view
    x0, x1 = float(np.nanmin(allx)), float(np.nanmax(allx))
    y0, y1 = float(np.min(ally[fin])), float(np.max(ally[fin]))
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y0, y1 = y0 - 0.5, y1 + 0.5
    pad = 0.05 * (y1 - y0)
    y0, y1 = y0 - pad, y1 + pad

    def px(x):
        return LEFT + (x - x0) / (x1 - x0) * pw

    def py(y):
        return TOP + (1 - (y - y0) / (y1 - y0)) * ph

    for i, s in enumerate(chart.series):
        color = PALETTE[i % len(PALETTE)]
        x = np.asarray(s.x, dtype=np.float64)
        y = np.asarray([np.nan if v is None else v for v in s.y], dtype=np.float64)
        if log_y:
            y = np.log10(np.where(y > 0, y, np.nan))
        x, y = _thin(x, y)
        if s.style == "band" and s.y_low is not None:
            lo = np.asarray(s.y_low, dtype=np.float64)
            if log_y:
                lo = np.log10(np.where(lo > 0, lo, np.nan))
            xl, lo = _thin(np.asarray(s.x, dtype=np.float64), lo)
            ok = np.isfinite(y) & np.isfinite(lo)
            if ok.any():
                top = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(x[ok], y[ok]))
                bottom = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(x[ok][::-1], lo[ok][::-1]))
                view.bands.append(Band(label=s.label, color=color, path=f"M{top} L{bottom} Z"))
                view.legend.append((s.label, color))
            continue
        ok = np.isfinite(y)
        pts = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(x[ok], y[ok]))
        view.lines.append(Line(label=f"{s.label}" + (" (baseline)" if s.side == "baseline" else ""), color=color,
                               points=pts, dashed=s.side == "baseline"))
        view.legend.append((view.lines[-1].label, color))
    for m in chart.markers:
        if x0 <= m.x <= x1:
            view.markers.append(MarkerView(x=round(px(m.x), 1), label=m.label, kind=m.kind))
    view.xticks = [Tick(round(px(t), 1), fmt_num(round(t))) for t in _ticks(x0, x1)]
    view.yticks = [Tick(round(py(t), 1), fmt_num(10 ** t if log_y else t, 3)) for t in _ticks(y0, y1)]
    view.x_label = chart.series[0].x_label if chart.series else ""
    view.y_label = chart.series[0].y_label if chart.series else ""
    return view


def _bars(view: PlotView, chart: Chart, pw: float, ph: float) -> PlotView:
    s = next(s for s in chart.series if s.style == "bar")
    vals = [0.0 if v is None or not math.isfinite(v) else float(v) for v in s.y]
    if not vals:
        view.empty = True
        return view
    cats = s.categories or [fmt_num(x) for x in s.x]
    top = max(max(vals), 1e-12)
    n = len(vals)
    w = pw / n
    for i, v in enumerate(vals):
        h = v / top * ph
        view.bars.append(Bar(x=round(LEFT + i * w + 0.1 * w, 1), y=round(TOP + ph - h, 1), w=round(0.8 * w, 1),
                             h=round(h, 1), label=f"{cats[i] if i < len(cats) else i}: {fmt_num(v)}", color=PALETTE[0]))
    step = max(1, n // 10)
    view.xticks = [Tick(round(LEFT + (i + 0.5) * w, 1), str(cats[i] if i < len(cats) else i)) for i in range(0, n, step)]
    view.yticks = [Tick(round(TOP + ph - t / top * ph, 1), fmt_num(t, 3)) for t in _ticks(0, top)]
    view.legend.append((s.label, PALETTE[0]))
    return view


def build_all(charts: list[Chart]) -> list[PlotView]:
    return [build(c) for c in charts]
