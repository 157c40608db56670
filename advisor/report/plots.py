"""Chart data -> SVG geometry (numbers only; templates draw the shapes).

Every picture is inline SVG made from the report's data: no script, no
network. Long series are thinned to at most ``MAX_POINTS`` points. What a
template needs is decided here: pixel positions, tick labels, which points to
highlight, where marker labels go (staggered so they do not overlap), which
series cannot share the axis (a per-epoch eval loss on a per-step axis), and
the anomaly markers the extractors do not give but the data or the causes'
facts show (loss-scale drops, the start of a divergence).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from advisor.evidence_format import fmt_num
from advisor.chart_data import BAND_SUFFIX, Marker, Series
from advisor.report.model import Chart

WIDTH, HEIGHT = 480, 250  # drawn at its own size in a desktop column; scaled down on a phone
LEFT, RIGHT, TOP, BOTTOM = 70, 14, 14, 40
PW, PH = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
MAX_POINTS = 600
PALETTE = ("#1f6feb", "#bc4c00", "#1a7f37", "#8250df", "#9a6700", "#0a7a8a", "#6e7781")
#: finite values beyond this magnitude are drawn at it (their span would overflow the scale to inf)
MAX_DRAWN = 1e300
#: a positive series spanning more than this ratio is drawn on a log axis
AUTO_LOG_RATIO = 1e3
#: order of the pictures in the report; unknown charts come after, in their order
CHART_ORDER = (
    "loss",
    "metric",
    "lr",
    "loss_scale",
    "grad_norm",
    "weight_std",
    "op_error",
    "class_hist",
    "feature_range",
)
LABEL_ROWS = 3
CHAR_W = 6.2  # approximate width of one 11px character
MAX_LABEL = 34
MAX_MARKER_LINES = 8


@dataclass
class Line:
    label: str
    color: str
    segments: list[str]  # polyline point lists, broken where a value is missing or non-finite
    dashed: bool = False
    thin: bool = False


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
class Dot:
    x: float
    y: float
    label: str
    color: str
    r: float = 2.6
    highlight: bool = False


@dataclass
class MarkerView:
    x: float
    at: float  # the marker's position in data units (step, epoch, operator index)
    label: str  # shortened to fit the picture
    kind: str
    label_x: float
    label_y: float
    anchor: str = "start"
    tick_only: bool = False  # drawn as a short tick on the x axis (many events of one kind)
    shade: float = 0.0  # width of the shaded span right of the marker (values there are NaN/Inf)
    full: str = ""  # the whole label (tooltip, list of marked events)


@dataclass
class Tick:
    pos: float
    label: str


@dataclass
class LegendItem:
    label: str
    color: str
    dashed: bool = False
    band: bool = False


@dataclass
class PlotView:
    id: str
    title: str
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM
    lines: list[Line] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    bars: list[Bar] = field(default_factory=list)
    dots: list[Dot] = field(default_factory=list)
    markers: list[MarkerView] = field(default_factory=list)
    xticks: list[Tick] = field(default_factory=list)
    yticks: list[Tick] = field(default_factory=list)
    x_label: str = ""
    y_label: str = ""
    log_y: bool = False
    legend: list[LegendItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    empty: bool = False
    kind: str = "lines"  # lines | bars | points


# ---------------------------------------------------------------- helpers


def _arr(values: Iterable[Any]) -> np.ndarray:
    return np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)


def _thin(x: np.ndarray, *ys: np.ndarray) -> tuple[np.ndarray, ...]:
    if x.size <= MAX_POINTS:
        return (x, *ys)
    idx = np.unique(np.linspace(0, x.size - 1, MAX_POINTS).astype(int))
    return (x[idx], *(y[idx] for y in ys))


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values (1, 2, 5 x 10^k steps) covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    t = first
    while t <= hi + 1e-9 * step:
        out.append(0.0 if abs(t) < step * 1e-9 else t)
        t += step
    return out


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks of a log10 axis (values are exponents): whole powers when two or more fit."""
    whole = list(range(math.ceil(lo), math.floor(hi) + 1))
    if len(whole) >= 2:
        stride = max(1, math.ceil(len(whole) / 6))
        return [float(w) for w in whole[::stride]]
    return nice_ticks(lo, hi, 4)


def _log_label(exponent: float) -> str:
    """Tick label of a log10 axis: 0.01, 0.1, 1, 10, 100, 1000, then 1e4, 1e-3..."""
    if float(exponent).is_integer():
        e = int(exponent)
        return fmt_num(float(10**e)) if -2 <= e <= 3 else f"1e{e}"
    return fmt_num(float(10**exponent), 2)


def _base_label(s: Series) -> str:
    """The legend name a colour belongs to: a baseline band takes the colour of its curve."""
    return s.label.split(BAND_SUFFIX)[0]


def _unit_of(s: Series) -> str:
    return s.x_label or "step"


def _clip_label(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


# ---------------------------------------------------------------- derived markers


def in_drawing_order(charts: list[Chart]) -> list[Chart]:
    """Charts in report order, band series (the baseline's noise band, computed by the loss-curve extractor) first,
    drawn under the curves."""
    out = []
    for c in sorted(charts, key=lambda c: CHART_ORDER.index(c.id) if c.id in CHART_ORDER else len(CHART_ORDER)):
        series = sorted(c.series, key=lambda s: s.style != "band")  # stable: bands under the curves
        out.append(c.model_copy(update={"series": series}))
    return out


# ---------------------------------------------------------------- layout of markers


def _place_markers(view: PlotView, markers: list[Marker], px, x0: float, x1: float) -> None:
    inside = sorted((m for m in markers if x0 <= m.x <= x1), key=lambda m: m.x)
    by_kind: dict[str, list[Marker]] = {}
    for m in inside:
        by_kind.setdefault(m.kind, []).append(m)
    # many events of one kind: a tick each on the axis, one labelled line for the first
    lines: list[Marker] = []
    for kind, ms in by_kind.items():
        if len(ms) > MAX_MARKER_LINES:
            for m in ms:
                view.markers.append(
                    MarkerView(
                        x=round(px(m.x), 1),
                        at=m.x,
                        label=m.label,
                        full=m.label,
                        kind=kind,
                        label_x=0,
                        label_y=0,
                        tick_only=True,
                    )
                )
            first = ms[0]
            lines.append(Marker(chart=first.chart, x=first.x, kind=kind, label=f"{first.label} ({len(ms)}x, first)"))
        else:
            lines.extend(ms)
    # one line per position; labels at one position are joined
    merged: dict[float, list[Marker]] = {}
    for m in sorted(lines, key=lambda m: m.x):
        merged.setdefault(round(px(m.x), 1), []).append(m)
    row_end = [-1e9] * LABEL_ROWS
    for i, (x, ms) in enumerate(merged.items()):
        full = " / ".join(dict.fromkeys(m.label for m in ms))
        label = _clip_label(full)
        w = len(label) * CHAR_W
        anchor = "end" if x + 4 + w > view.right and x - 4 - w >= view.left - 40 else "start"
        lo, hi = (x - 4 - w, x - 4) if anchor == "end" else (x + 4, x + 4 + w)
        row = next((r for r in range(LABEL_ROWS) if row_end[r] < lo), i % LABEL_ROWS)
        row_end[row] = hi + 6
        shade = round(view.right - x, 1) if any(m.kind == "nonfinite" for m in ms) and view.kind == "lines" else 0.0
        view.markers.append(
            MarkerView(
                x=x,
                at=ms[0].x,
                label=label,
                full=full,
                kind=ms[0].kind,
                anchor=anchor,
                shade=shade,
                label_x=round(x - 4 if anchor == "end" else x + 4, 1),
                label_y=TOP + 12 + 13 * row,
            )
        )


# ---------------------------------------------------------------- charts


def _y_values(view: PlotView, series: list[Series]) -> tuple[list, bool, np.ndarray] | None:
    """Each series' x, y (and a band's lower edge), clipped to what can be drawn and on a log axis when asked or
    when they span many decades; with every drawable y value. None (the view empty, with its reason) when there
    is nothing to draw."""
    # y values (upper and lower edges for bands), on a log axis when asked or when they span many decades
    data = []
    clipped = False
    for s in series:
        x, y = _arr(s.x), _arr(s.y)
        lo = _arr(s.y_low) if s.style == "band" and s.y_low is not None and len(s.y_low) == len(s.x) else None
        for a in (x, y, *([lo] if lo is not None else [])):
            big = np.isfinite(a) & (np.abs(a) > MAX_DRAWN)  # a span of +-1e308 overflows to inf: no coordinates
            if big.any():
                a[big] = np.sign(a[big]) * MAX_DRAWN
                clipped = True
        data.append((s, x, y, lo))
    if clipped:
        view.notes.append(f"values beyond +-{MAX_DRAWN:g} drawn at that edge")
    ally = np.concatenate([y for _, _, y, _ in data] + [lo for *_, lo in data if lo is not None])
    fin = ally[np.isfinite(ally)]
    if fin.size == 0:
        view.empty = True
        view.notes.append("no finite values to draw")
        return None
    log_y = any(s.log_y for s in series)
    if not log_y and fin.min() > 0 and fin.max() / fin.min() > AUTO_LOG_RATIO:
        log_y = True
        view.notes.append("values span many orders of magnitude: log scale")
    if log_y:

        def tr(a: np.ndarray) -> np.ndarray:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(a > 0, np.log10(np.where(a > 0, a, 1.0)), np.nan)

        data = [(s, x, tr(y), None if lo is None else tr(lo)) for s, x, y, lo in data]
    view.log_y = log_y
    ys = np.concatenate([y for _, _, y, _ in data] + [lo for *_, lo in data if lo is not None])
    ys = ys[np.isfinite(ys)]
    if ys.size == 0:
        view.empty = True
        view.notes.append("no positive values to draw on a log scale")
        return None
    return data, log_y, ys


def _draw_series(view: PlotView, data: list, log_y: bool, px, py) -> None:
    """Bands, lines and dots of each series, one colour per base label, the baseline dashed."""
    colors: dict[str, str] = {}
    points_style = any(s.style == "points" for s, *_ in data)
    view.kind = "points" if points_style else "lines"
    for s, x, y, lo in data:
        color = colors.setdefault(_base_label(s), PALETTE[len(colors) % len(PALETTE)])
        baseline = s.side == "baseline"
        label = s.label + (" (baseline)" if baseline else "")
        if s.style == "band" and lo is not None:
            x, y, lo = _thin(x, y, lo)
            ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(lo)
            if ok.any():
                top = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(x[ok], y[ok]))
                bottom = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(x[ok][::-1], lo[ok][::-1]))
                view.bands.append(Band(label=s.label, color=color, path=f"M{top} L{bottom} Z"))
                if not baseline:  # a data band's middle line (mean); a baseline band surrounds its own curve
                    mid = (y + lo) / 2 if not log_y else np.log10((10**y + 10**lo) / 2)
                    view.lines.append(Line(label=label, color=color, segments=_segments(x, mid, px, py), thin=True))
                view.legend.append(LegendItem(label=s.label, color=color, band=True))
            continue
        x, y = _thin(x, y)
        if s.style == "points":
            ok = np.isfinite(x) & np.isfinite(y)
            for a, b in zip(x[ok], y[ok]):
                view.dots.append(
                    Dot(
                        x=round(px(a), 1),
                        y=round(py(b), 1),
                        color=color,
                        label=f"#{fmt_num(float(a))}: {fmt_num(float(10**b if log_y else b))}",
                    )
                )
        else:
            segs = _segments(x, y, px, py)
            view.lines.append(Line(label=label, color=color, segments=[g for g in segs if " " in g], dashed=baseline))
            for g in segs:  # a lone finite value (one evaluation) is a dot, not an invisible line
                if " " not in g:
                    gx, gy = g.split(",")
                    view.dots.append(Dot(x=float(gx), y=float(gy), color=color, label=label, r=3.2))
        view.legend.append(LegendItem(label=label, color=color, dashed=baseline))


def _ticks(view: PlotView, x0: float, x1: float, y0: float, y1: float, log_y: bool, px, py) -> None:
    """The axes' ticks within the drawn range."""
    xt = nice_ticks(x0, x1, 6)
    view.xticks = [
        Tick(round(px(t), 1), fmt_num(t if abs(t) < 1e6 and not float(t).is_integer() else float(round(t))))
        for t in xt
        if x0 <= t <= x1
    ]
    yt = _log_ticks(y0, y1) if log_y else nice_ticks(y0, y1, 5)
    view.yticks = [Tick(round(py(t), 1), _log_label(t) if log_y else fmt_num(float(t), 3)) for t in yt if y0 <= t <= y1]


def _limits(data: list, ys: np.ndarray, markers: list[Marker], log_y: bool) -> tuple[float, float, float, float]:
    """The drawn x and y ranges: the data's, widened to the markers just outside it, a constant centred, a margin
    above and below."""
    xs = np.concatenate([x[np.isfinite(x)] for _, x, _, _ in data])
    x0, x1 = float(xs.min()), float(xs.max())
    for m in markers:  # markers just outside the data still belong to the picture (first NaN after the last value)
        if x0 - 0.02 * (x1 - x0) <= m.x <= x1 + 0.1 * max(x1 - x0, 1):
            x0, x1 = min(x0, m.x), max(x1, m.x)
    if x1 == x0:
        x0, x1 = x0 - 0.5, x1 + 0.5
    y0, y1 = float(ys.min()), float(ys.max())
    if y1 == y0:  # a constant (a fixed learning rate): centre it, with a margin of 10% of its value
        d = 0.1 * abs(y0) if y0 != 0 and not log_y else 0.5
        y0, y1 = y0 - d, y1 + d
    pad = 0.06 * (y1 - y0)
    return x0, x1, y0 - pad, y1 + pad


def build(chart: Chart) -> PlotView:
    view = PlotView(id=chart.id, title=chart.title)
    if any(s.style == "bar" for s in chart.series):
        view.kind = "bars"
        return _bars(view, [s for s in chart.series if s.style == "bar"])
    series = [s for s in chart.series if s.x]
    if not series:
        view.empty = True
        return view
    # one x unit per picture: the first series' (a per-epoch eval loss cannot share a per-step axis)
    unit = _unit_of(series[0])
    dropped = [s for s in series if _unit_of(s) != unit]
    series = [s for s in series if _unit_of(s) == unit]
    for s in dropped:
        view.notes.append(
            f"{s.label}{' (baseline)' if s.side == 'baseline' else ''} is logged per "
            f"{_unit_of(s)}, not per {unit}: not drawn here"
        )
    dropped_words = {w for s in dropped for w in ("train", "eval") if s.label.startswith(w)} - {
        w for s in series for w in ("train", "eval") if s.label.startswith(w)
    }
    markers = [m for m in chart.markers if not any(w in m.label.split() for w in dropped_words)]

    got = _y_values(view, series)
    if got is None:
        return view
    data, log_y, ys = got
    x0, x1, y0, y1 = _limits(data, ys, markers, log_y)

    def px(v):
        return LEFT + (v - x0) / (x1 - x0) * PW

    def py(v):
        return TOP + (1 - (v - y0) / (y1 - y0)) * PH

    _draw_series(view, data, log_y, px, py)
    # the operator a marker names (source of the error, first NaN) is drawn larger
    for m in markers:
        for d in view.dots:
            if abs(d.x - px(m.x)) < 0.05:
                d.highlight, d.r = True, 5.0
    _place_markers(view, markers, px, x0, x1)
    _ticks(view, x0, x1, y0, y1, log_y, px, py)
    view.x_label = unit
    view.y_label = (series[0].y_label or "") + (" (log)" if log_y else "")
    if chart.id == "loss":
        view.y_label = "loss" + (" (log)" if log_y else "")
    return view


def _segments(x: np.ndarray, y: np.ndarray, px, py) -> list[str]:
    """Polylines of the finite points; a new one after a gap (NaN/Inf) or where the steps go back (a restart)."""
    ok = np.isfinite(x) & np.isfinite(y)
    segs, cur = [], []
    last = -math.inf
    for a, b, good in zip(x, y, ok):
        if good and a < last and cur:
            segs.append(" ".join(cur))
            cur = []
        if good:
            last = a
            cur.append(f"{px(a):.1f},{py(b):.1f}")
        elif cur:
            segs.append(" ".join(cur))
            cur = []
    if cur:
        segs.append(" ".join(cur))
    return segs


def _category_key(c: str) -> tuple[int, float, str]:
    try:
        return (0, float(c), c)
    except ValueError:
        return (1, 0.0, c)


def _bars(view: PlotView, series: list[Series]) -> PlotView:
    """Grouped bars: one group per category (union over the series), one bar per series."""
    per = []
    cats: list[str] = []
    for s in series:
        names = s.categories or [fmt_num(x) for x in s.x]
        vals = {}
        for i, v in enumerate(s.y):
            name = names[i] if i < len(names) else str(i)
            vals[name] = float(v) if v is not None and math.isfinite(v) else 0.0
            if name not in cats:
                cats.append(name)
        per.append((s, vals))
    if not cats:
        view.empty = True
        return view
    cats.sort(key=_category_key)
    top = max((max(v.values(), default=0.0) for _, v in per), default=0.0)
    if top <= 0:
        top = 1.0
    yt = nice_ticks(0, top, 5)
    if len(yt) > 1 and yt[-1] < top:  # the axis ends on the tick above the tallest bar
        yt.append(yt[-1] + (yt[1] - yt[0]))
    top = max(top, yt[-1])
    n, k = len(cats), len(per)
    gw = PW / n
    bw = gw * (0.8 if n > 1 else 0.5) / k
    for j, (s, vals) in enumerate(per):
        color = PALETTE[j % len(PALETTE)]
        for i, c in enumerate(cats):
            v = vals.get(c)
            if v is None:
                continue
            h = v / top * PH
            view.bars.append(
                Bar(
                    x=round(LEFT + i * gw + (gw - bw * k) / 2 + j * bw, 1),
                    y=round(TOP + PH - h, 1),
                    w=round(max(bw - 0.5, 0.5), 1),
                    h=round(h, 1),
                    color=color,
                    label=f"{s.label}: class {c}: {fmt_num(v)}",
                )
            )
        view.legend.append(LegendItem(label=s.label, color=color))
        missing = [c for c in cats if c not in vals]
        if missing:
            view.notes.append(
                f"{s.label}: no samples of class {', '.join(missing[:10])}"
                + (f" (+{len(missing) - 10} more)" if len(missing) > 10 else "")
            )
    stride = max(1, math.ceil(n / 12))
    view.xticks = [Tick(round(LEFT + (i + 0.5) * gw, 1), _clip_label(cats[i])[:12]) for i in range(0, n, stride)]
    view.yticks = [Tick(round(TOP + PH - t / top * PH, 1), fmt_num(t, 3)) for t in yt]
    view.x_label = series[0].x_label
    view.y_label = series[0].y_label
    return view


def build_all(charts: list[Chart]) -> list[PlotView]:
    return [build(c) for c in in_drawing_order(charts)]
