"""Training logs and metrics files -> curve facts (loss curve and floating-point stages).

Takes the logs read of each side (``RunRead.logs``: text logs, metrics CSV/JSONL,
trainer_state.json, TensorBoard events, found by content, not only by name, and
read with ``advisor.read.logs``), merges the files of a run without double counting, and
summarises: ``loss_curve`` (train and eval), ``generalization_gap``,
``grad_norm_trend``, ``lr_schedule``, ``loss_scale_trend``, ``overflow_events``,
``training_crash``, and with a baseline ``baseline_deviation``. No causes here.
"""

from __future__ import annotations

import math
import numpy as np

from advisor.knowledge.metrics import lower_is_better
from advisor.chart_data import Marker, Series
from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.extract.baseline_curves import baseline_deviation
from advisor.extract.chart_extras import baseline_band, loss_scale_drop_markers
from advisor.extract.options import read_group
from advisor.extract.curves import (
    CurveThresholds,
    diff_sigma,
    downsample,
    frozen_tail_points,
    running_median,
    shape,
)
from advisor.extract.chance import classes_at_level
from advisor.extract.view.curves import curve_xy, primary_loss, step_int
from advisor.facts.base import Source
from advisor.facts.loss_curve import GeneralizationGap, GradNormTrend, LossCurve, LrSchedule
from advisor.inventory import InputRecord
from advisor.read.logs.merge import MergedRun
from advisor.read.logs.records import LogRead, MetricSeries
from advisor.read.run import RunRead


X_LABEL = {"step": "step", "epoch": "epoch", "index": "logged value #"}


def _describe(read: LogRead) -> str:
    parts = [f"read as {', '.join(sorted(read.formats)) or 'text'}"]
    if read.bad_lines:
        ln, text = read.bad_examples[0]
        parts.append(f"{read.bad_lines} unreadable value(s), first at line {ln}: {text}")
    if read.overlong_lines:
        parts.append(f"{read.overlong_lines} line(s) longer than 64 KiB cut")
    parts.extend(read.notes)
    return "; ".join(parts)


def _read_side(run: RunRead, merged: MergedRun, out: Extraction) -> tuple[MergedRun, list[str]]:
    used: list[str] = []
    for log in run.logs:
        read, shown, kind = log.read, log.shown, log.kind
        if log.extra and not read.series:
            continue  # not a log after all: say nothing about it
        if read.problem is not None:
            out.inputs.append(InputRecord(path=shown, kind=kind, status="unreadable", why=read.problem, side=run.side))
            continue
        if not read.usable:
            if kind == "log" or log.rel.name == "trainer_state.json":
                out.inputs.append(
                    InputRecord(
                        path=shown,
                        kind=kind,
                        status="ignored",
                        side=run.side,
                        why=f"no loss, metric or loss-scale lines recognised in {read.lines} lines",
                    )
                )
            continue
        used.append(shown)  # log.is_used: merged into the side's curves
        out.inputs.append(InputRecord(path=shown, kind=kind, status="used", why=_describe(read), side=run.side))
    for name, dropped, kept in merged.duplicates:
        if name in ("train/loss", "eval/loss"):
            out.checks.append(
                CheckRun(
                    stage="loss_curve", inputs=[kept], note=f"{name} also in {dropped}; used {kept} (not counted twice)"
                )
            )
    return merged, used


# -- picking series ------------------------------------------------------------------
# -- facts ----------------------------------------------------------------------------
def is_window(x: np.ndarray, unit: str) -> bool:
    """Whether a curve starts mid-run: its first step (or epoch) lies well past where logging starts, i.e.
    more than two logging intervals (plus one, for counters from 1) after 0."""
    if unit not in ("step", "epoch") or x.size < 2 or not np.isfinite(x[0]):
        return False
    gaps = np.diff(x[np.isfinite(x)])
    gaps = gaps[gaps > 0]
    if gaps.size == 0:
        return False
    return bool(x[0] > 2.0 * float(np.median(gaps)) + 1.0)


#: an excerpt whose first point is past this epoch starts mid-run, whatever its step counter says
LATE_EPOCH = 3.0


#: moves (consecutive values that differ) a curve needs before the share of them that go down is read
MIN_MOVES = 7


def fall_share(y: np.ndarray) -> float | None:
    """Share of the moves of ``y`` that go down (a loss falling at every evaluation: 1.0; noise: about 0.5), or None
    with fewer than ``MIN_MOVES`` moves. Values printed at four decimals that repeat are no move."""
    d = np.diff(y)
    falls, rises = int((d < 0).sum()), int((d > 0).sum())
    return falls / (falls + rises) if falls + rises >= MIN_MOVES else None


def starts_at_a_late_epoch(epochs: np.ndarray) -> bool:
    """Whether a curve's first point is logged past epoch ``LATE_EPOCH`` (``epoch:49 step: 0/19``: a counter of
    steps within the epoch starts again at 0 each epoch, so the step alone does not tell an excerpt)."""
    fin = epochs[np.isfinite(epochs)]
    return bool(fin.size and fin[0] > LATE_EPOCH)


def summarize(
    s: MetricSeries, split: str, th: CurveThresholds, side: str, classes: tuple[int, str] | None = None
) -> LossCurve:
    x, y, lines, unit, start = curve_xy(s)
    xs, ys = x[start:], y[start:]
    fin = np.isfinite(ys)
    xf, yf = xs[fin], ys[fin]
    nonfin = np.flatnonzero(~np.isfinite(y))
    first_nf = None
    if s.buf.first_nonfinite is not None:
        st, ep, _ = s.buf.first_nonfinite
        first_nf = st if unit == "step" and st == st else (ep if unit == "epoch" else None)
        if first_nf is None and nonfin.size:
            first_nf = x[nonfin[0]]
    sh = shape(xf, yf, th) if yf.size else None
    fields: dict = {}
    if sh is not None:
        fields = dict(
            start_level=sh.start_level,
            end_level=sh.end_level,
            drop_ratio=sh.drop_ratio,
            rise_from_min_ratio=sh.rise_from_min_ratio if math.isfinite(sh.rise_from_min_ratio) else None,
            noise_ratio=sh.noise_ratio,
            spike_count=sh.spike_count,
            spike_max_ratio=sh.spike_max_ratio,
            peak_over_start_ratio=sh.peak_over_start_ratio,
            frozen_tail_points=sh.frozen_tail_points,
            is_frozen_from_start=sh.frozen_tail_points == yf.size,
            end_change_ratio=sh.end_change_ratio,
            end_trend_t=sh.end_trend_t,
            is_still_falling=sh.is_still_falling,
            is_plateau=sh.is_plateau,
            is_stagnant=sh.is_stagnant,
            is_oscillating=sh.is_oscillating,
            is_slow=sh.is_slow,
            min_step=step_int(float(xf[sh.smooth_min_index])),
            plateau_start_step=step_int(float(xf[sh.plateau_start_index]))
            if sh.plateau_start_index is not None
            else None,
        )
    elif yf.size >= 3:  # too short for a shape, long enough to tell a loss that never changed
        tail = frozen_tail_points(yf)
        fields = dict(frozen_tail_points=tail, is_frozen_from_start=tail == yf.size)
    fields["fall_share"] = fall_share(yf)
    window = is_window(xs, unit) or starts_at_a_late_epoch(np.asarray(s.buf.epoch, dtype=np.float64)[start:])
    if window and fields:  # the start of training is not in the log: no "never fell from the start"
        fields.update(drop_ratio=None, is_stagnant=False, is_slow=False)
    diverged = first_nf is not None or bool(sh and sh.diverged_rise)
    div_step = (
        first_nf if first_nf is not None else (float(xf[sh.smooth_min_index]) if sh and sh.diverged_rise else None)
    )
    # chance level ln C
    if sh is not None and split == "train":
        cls = classes
        if cls is None and sh.is_plateau:
            k = classes_at_level(sh.end_level) if sh.end_level < 3.1 else 0
            if 2 <= k <= 20 and abs(sh.end_level / math.log(k) - 1) <= 0.01:
                cls = (k, "level")
        if cls is not None and cls[0] >= 2:
            ratio = sh.end_level / math.log(cls[0])
            fields.update(
                class_count=cls[0],
                class_count_source=cls[1],
                chance_ratio=ratio,
                is_at_chance=bool(abs(ratio - 1) <= th.chance_band and (sh.is_plateau or sh.is_stagnant)),
            )
    return LossCurve(
        split=split,
        metric_name=s.raw_key,
        x_unit=unit,
        points=int(s.buf.count),
        first_step=step_int(float(x[0])) if x.size else None,
        last_step=step_int(float(x[-1])) if x.size else None,
        first_value=float(y[np.isfinite(y)][0]) if np.isfinite(y).any() else None,
        last_value=float(y[np.isfinite(y)][-1]) if np.isfinite(y).any() else None,
        min_value=float(np.min(y[np.isfinite(y)])) if np.isfinite(y).any() else None,
        max_value=float(np.max(y[np.isfinite(y)])) if np.isfinite(y).any() else None,
        zero_count=int(np.count_nonzero(y == 0.0)),
        first_nonfinite_step=step_int(first_nf),
        nonfinite_count=int(s.buf.nonfinite),
        diverged=diverged,
        divergence_step=step_int(div_step),
        restarts=len(s.restarts),
        resumes=s.resumes,
        side=side,
        is_window=window,
        source=Source(path=s.path, line=int(lines[0]), line_end=int(lines[-1])) if lines.size else Source(path=s.path),
        **fields,
    )


def generalization(
    train: MetricSeries, ev: MetricSeries, score: MetricSeries | None, th: CurveThresholds, side: str
) -> GeneralizationGap | None:
    tx, ty, _, tunit, tstart = curve_xy(train)
    ex, ey, elines, eunit, estart = curve_xy(ev)
    tx, ty, ex, ey = tx[tstart:], ty[tstart:], ex[estart:], ey[estart:]
    tf, ef = np.isfinite(ty), np.isfinite(ey)
    tx, ty, ex, ey = tx[tf], ty[tf], ex[ef], ey[ef]
    if ey.size < 2 or ty.size < 2:
        return None
    w = max(3, ty.size // 10)
    t_start, t_end = float(np.median(ty[:w])), float(np.median(ty[-w:]))
    imin = int(np.argmin(ey))
    emin, elast = float(ey[imin]), float(ey[-1])
    rise = elast / emin - 1 if emin > 0 else None
    after = int(ey.size - 1 - imin)
    drop_after = None
    if tunit == eunit:
        t_at = float(np.interp(ex[imin], tx, running_median(ty, min(max(3, ty.size // 20), 101))))
        drop_after = (t_at - t_end) / t_at if t_at > 0 else None
    # judged on the smoothed eval curve (running median of 3 from 10 evaluations): one lucky evaluation is not a best
    es = running_median(ey, 3) if ey.size >= 10 else ey
    smin_i = int(np.argmin(es))
    smin, send = float(es[smin_i]), float(es[-1])
    fell = float(np.max(es[: smin_i + 1])) - smin  # what the eval loss removed before its best
    rise_of_range = (send - smin) / fell if fell > 0 else (math.inf if send > smin else 0.0)
    tail = es[smin_i + 1 :]
    rising = bool(
        rise is not None
        and smin > 0
        and send / smin - 1 >= th.eval_rise
        and ey.size - 1 - smin_i >= 2
        and np.all(tail[-2:] >= smin * (1 + th.eval_rise / 2))
        and rise_of_range >= th.eval_rise_of_range
        and (drop_after is None or drop_after > 0)
    )
    end_drop_share, drop_beyond_noise = _end_gain_share(ex, -es, th)
    fields: dict = dict(
        eval_end_drop_share=end_drop_share,
        eval_rise_of_range_ratio=(rise_of_range if math.isfinite(rise_of_range) else None),
    )
    score_share, score_beyond_noise, score_points = None, True, 0
    if score is not None:
        scx, sy, _, _, sstart = curve_xy(score)
        fin = np.isfinite(sy[sstart:])
        scx, sy = scx[sstart:][fin], sy[sstart:][fin]
        score_points = int(sy.size)
        if sy.size:
            lower_better = lower_is_better(score.key.base)
            best = float(sy.min() if lower_better else sy.max())
            ss = running_median(sy, 3) if sy.size >= 10 else sy
            score_share, score_beyond_noise = _end_gain_share(scx, -ss if lower_better else ss, th)
            fields.update(
                score_name=score.raw_key,
                score_best=best,
                score_last=float(sy[-1]),
                is_score_at_best=bool(abs(float(sy[-1]) - best) <= 0.01 * abs(best)),
                score_end_gain_share=score_share,
                is_score_stalled=bool(sy.size >= 3 and (score_share is None or score_share < th.stalled_share)),
            )
    at_best = ey.size - 1 - smin_i == 0 or send <= smin * (1 + th.eval_rise / 2)
    fields["is_eval_still_improving"] = bool(
        end_drop_share is not None
        and end_drop_share >= th.improving_share
        and drop_beyond_noise
        and at_best
        and (score_points < 2 or (score_share is not None and score_share >= th.improving_share and score_beyond_noise))
    )  # a score that never improved is not improving
    return GeneralizationGap(
        eval_points=int(ev.buf.count),
        train_last=t_end,
        eval_last=elast,
        eval_min=emin,
        eval_min_step=step_int(float(ex[imin])),
        eval_rise_ratio=rise,
        evals_after_min=after,
        train_drop_after_turn_ratio=drop_after,
        train_drop_ratio=(t_start - t_end) / t_start if t_start > 0 else None,
        gap_ratio=(elast - t_end) / elast if elast > 0 else None,
        is_eval_rising=rising,
        is_train_near_zero=bool(t_start > 0 and t_end <= 0.05 * t_start),
        side=side,
        source=Source(path=ev.path, line=int(elines[0]), line_end=int(elines[-1])),
        **fields,
    )


def _end_gain_share(x: np.ndarray, gain: np.ndarray, th: CurveThresholds) -> tuple[float | None, bool]:
    """(share of a curve's whole improvement made in the end window, whether that gain is beyond the noise).

    ``gain`` grows when the curve improves (the negated loss, or the score); the whole improvement runs from
    the first value to the best. The end window is the last ``end_share`` of the evaluations' steps (the
    curve interpolated at its start). The noise is the spread of first differences over the curve's second
    half (from 6 points; shorter curves cannot tell noise and count as beyond it). None when it never improved.
    """
    n = gain.size
    if n < 2:
        return None, False
    total = float(np.max(gain) - gain[0])
    if not total > 0:
        return None, False
    cut = x[-1] - th.end_share * (x[-1] - x[0])
    at_cut = float(np.interp(cut, x, gain)) if np.all(np.diff(x) > 0) else float(gain[-2])
    end_gain = float(gain[-1] - at_cut)
    beyond = n < 6 or end_gain > 2.0 * diff_sigma(gain[n // 2 :])
    return end_gain / total, bool(beyond)


def grad_norm_trend(s: MetricSeries, side: str) -> GradNormTrend:
    x, y, lines, _, start = curve_xy(s)
    x, y = x[start:], y[start:]
    fin = np.isfinite(y)
    xf, yf = x[fin], y[fin]
    common = dict(
        points=int(s.buf.count),
        nonfinite_count=int(s.buf.nonfinite),
        first_nonfinite_step=step_int(float(x[np.flatnonzero(~fin)[0]])) if (~fin).any() else None,
        is_nonfinite_at_end=bool(y.size and not fin[-1]),
        side=side,
        source=Source(path=s.path, line=int(lines[0]), line_end=int(lines[-1])) if lines.size else None,
    )
    if yf.size == 0:
        return GradNormTrend(**common)
    imax = int(np.argmax(yf))
    common.update(max_value=float(yf[imax]), max_step=step_int(float(xf[imax])))
    if yf.size < 3:
        return GradNormTrend(**common)
    w = max(3, yf.size // 10)
    start_level = float(np.median(yf[:w]))
    sm = running_median(yf, min(max(3, yf.size // 20), 101))
    return GradNormTrend(
        start_level=start_level,
        end_level=float(np.median(yf[-w:])),
        growth_ratio=float(sm.max() / start_level) if start_level > 0 else None,
        spike_count=int((yf > 10 * np.maximum(sm, 1e-30)).sum()),
        **common,
    )


def lr_schedule(s: MetricSeries, side: str) -> LrSchedule | None:
    _, y, lines, _, _ = curve_xy(s)
    y = y[np.isfinite(y)]
    if y.size == 0:
        return None
    peak = float(y.max())
    tail = y[-max(2, y.size // 4) :]
    rising = y.size >= 4 and bool(np.all(np.diff(tail) > 0)) and float(y[-1]) >= peak
    return LrSchedule(
        points=int(s.buf.count),
        first_value=float(y[0]),
        max_value=peak,
        last_value=float(y[-1]),
        last_to_max_ratio=float(y[-1] / peak) if peak > 0 else None,
        peak_over_first_ratio=float(peak / y[0]) if y[0] > 0 else None,
        is_rising_at_end=rising,
        side=side,
        source=Source(path=s.path, line=int(lines[0]), line_end=int(lines[-1])),
    )


# -- the extractor ----------------------------------------------------------------------
_CHART_METRICS = (
    ("train/lr", "lr", "learning rate", False),
    ("train/grad_norm", "grad_norm", "gradient norm", True),
    ("train/loss_scale", "loss_scale", "loss scale", True),
)


def _series(out: Extraction, s: MetricSeries, chart: str, label: str, side: str, log_y: bool = False) -> None:
    x, y, _, unit, _ = curve_xy(s)
    x, y = downsample(x, y)
    out.series.append(
        Series(
            chart=chart,
            label=label,
            side=side,
            x=[float(v) for v in x],
            y=[float(v) if math.isfinite(v) else None for v in y],
            x_label=X_LABEL[unit],
            y_label=label,
            log_y=log_y,
        )
    )


def _updates(curve: LossCurve, steps_per_epoch: int | None) -> int | None:
    """Optimizer updates up to the curve's last point, when the log says: its step, or epochs x steps per epoch."""
    if curve.last_step is None or curve.is_window:
        return None
    if curve.x_unit == "step":
        return curve.last_step
    if curve.x_unit == "epoch" and steps_per_epoch:
        return curve.last_step * steps_per_epoch
    return None


def _side_facts(
    run: RunRead,
    merged: MergedRun,
    used: list[str],
    th: CurveThresholds,
    out: Extraction,
    classes: tuple[int, str] | None,
) -> None:
    side = run.side
    train = primary_loss(merged, "train")
    ev = primary_loss(merged, "eval")
    stages = set()
    crash_steps = [e.step for e in merged.events if e.kind == "nonfinite_message"]
    for split, s in (("train", train), ("eval", ev)):
        if s is None:
            continue
        fact = summarize(s, split, th, side, classes)
        updates = _updates(fact, merged.steps_per_epoch)
        if updates is not None:
            fact = fact.model_copy(update={"updates": updates})
        if split == "train" and crash_steps and fact.first_nonfinite_step is None:
            # "Loss became infinite or NaN at iteration=N": the run stopped before logging the value
            at = step_int(crash_steps[0]) if crash_steps[0] is not None else fact.last_step
            fact = fact.model_copy(update=dict(diverged=True, first_nonfinite_step=at, divergence_step=at))
        out.facts.append(fact)
        stages.add("loss_curve")
        _series(out, s, "loss", f"{split} loss ({s.raw_key})", side)
        if side == "run" and fact.first_nonfinite_step is not None:
            out.markers.append(
                Marker(
                    chart="loss",
                    x=float(fact.first_nonfinite_step),
                    label=f"first non-finite {split} loss",
                    kind="nonfinite",
                )
            )
        elif side == "run" and fact.diverged and fact.divergence_step is not None:
            out.markers.append(
                Marker(
                    chart="loss", x=float(fact.divergence_step), label=f"{split} loss starts to rise", kind="divergence"
                )
            )
    if train is not None and ev is not None:
        score = next(
            (
                s
                for s in sorted(merged.series.values(), key=lambda s: s.order)
                if s.key.split == "eval" and s.key.metric == "score"
            ),
            None,
        )
        if score is not None:
            _series(out, score, "metric", f"eval {score.raw_key}", side)
        gap = generalization(train, ev, score, th, side)
        if gap is not None:
            out.facts.append(gap)
            if side == "run" and gap.is_eval_rising and gap.eval_min_step is not None:
                out.markers.append(
                    Marker(
                        chart="loss", x=float(gap.eval_min_step), label="best eval loss (turning step)", kind="turning"
                    )
                )
    for name, chart, label, log_y in _CHART_METRICS:
        s = merged.series.get(name)
        if s is None:
            continue
        _series(out, s, chart, label, side, log_y)
        if name == "train/loss_scale" and side == "run":
            out.markers.extend(loss_scale_drop_markers(out.series[-1]))
        if name == "train/lr":
            lr = lr_schedule(s, side)
            if lr is not None:
                out.facts.append(lr)
        elif name == "train/grad_norm":
            out.facts.append(grad_norm_trend(s, side))
    if side == "run":
        for stage in sorted(stages):
            out.checks.append(CheckRun(stage=stage, inputs=used))


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    th = read_group(CurveThresholds, pair.options)
    merged_by_side: dict[str, MergedRun] = {}
    for side_read in pair.sides():
        merged, used = _read_side(side_read, pair.view(side_read).curves, out)
        merged_by_side[side_read.side] = merged
        _side_facts(side_read, merged, used, th, out, pair.view(side_read).class_count)
    if "baseline" in merged_by_side:
        devs = []
        for split in ("train", "eval"):
            r = primary_loss(merged_by_side["run"], split)
            b = primary_loss(merged_by_side["baseline"], split)
            if r is None or b is None:
                continue
            dev = baseline_deviation(r, b, split, th)
            if dev is not None:
                devs.append(dev)
                out.facts.append(dev)
                if dev.first_departure_step is not None:
                    out.markers.append(
                        Marker(
                            chart="loss",
                            x=float(dev.first_departure_step),
                            label=f"{split} loss leaves the baseline's band",
                            kind="baseline",
                        )
                    )
        ratios = {d.split: d.noise_band_ratio for d in devs}
        for s in [s for s in out.series if s.chart == "loss" and s.side == "baseline" and s.style == "line"]:
            band = baseline_band(s, ratios.get(s.label.split()[0]), th.min_band)
            if band is not None:
                out.series.append(band)
    return out
