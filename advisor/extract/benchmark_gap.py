"""The run against its baseline as a whole -> one ``benchmark_gap`` fact (the routine's starting symptom); an
extractor of its own (the pre-check stage).

Built from the loss deviations (``baseline_deviation``: curves aligned by step,
a noise band from the baseline's own noise) and the final eval scores of both
sides. A score difference counts when it exceeds ``SCORE_BAND`` of the
baseline's score (relative): a final score carries no noise estimate of its own,
and 2 % is about the spread of reruns with other seeds on the small benchmarks
this is tested on (a user may widen it with ``--threshold benchmark.score_band=``).
"""

from __future__ import annotations

from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.extract.baseline_curves import baseline_deviation
from advisor.extract.curves import CurveThresholds
from advisor.extract.options import BenchmarkOptions, read_group
from advisor.extract.view.curves import FinalScore, final_score
from advisor.facts.base import Source
from advisor.facts.benchmark import BenchmarkGap, GapMetric
from advisor.facts.loss_curve import BaselineDeviation

SCORE_BAND = BenchmarkOptions.score_band
_LABEL = {"train_loss": "train loss", "eval_loss": "eval loss"}


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%" if abs(x) >= 0.095 else f"{x * 100:.1f}%"


def benchmark_gap(
    devs: list[BaselineDeviation],
    run_score: FinalScore | None,
    base_score: FinalScore | None,
    score_band: float = SCORE_BAND,
) -> BenchmarkGap | None:
    """None when nothing of the two runs can be set side by side."""
    fields: dict = {}
    worse: list[tuple[float, GapMetric]] = []
    better = False
    parts: list[str] = []
    departures: list[tuple[int, GapMetric]] = []
    path = ""
    for d in devs:
        metric: GapMetric = "train_loss" if d.split == "train" else "eval_loss"
        rel = d.rel_deviation_last
        fields[f"{metric}_rel_gap"] = rel
        path = path or (d.source.path if d.source else "")
        if d.run_diverged_alone:
            worse.append((float("inf"), metric))
            parts.append(f"{_LABEL[metric]} became NaN/Inf while the baseline's did not")
            continue
        if rel is None:
            continue
        if d.is_above_baseline:
            worse.append((rel, metric))
            if d.first_departure_step is not None:
                departures.append((d.first_departure_step, metric))
            at = f" from step {d.first_departure_step}" if d.first_departure_step is not None else " at the end"
            parts.append(
                f"{_LABEL[metric]} {_pct(rel)} above the baseline's{at} (noise band ±{_pct(d.noise_band_ratio or 0.0)})"
            )
        elif d.is_below_baseline:
            better = True
    if run_score is not None and base_score is not None and run_score.lower_better == base_score.lower_better:
        b, r = base_score.last, run_score.last
        rel = ((r - b) if run_score.lower_better else (b - r)) / abs(b) if b != 0 else None
        fields.update(
            score_name=run_score.name, score_run=r, score_baseline=b, score_rel_gap=rel, score_band=score_band
        )
        path = path or run_score.path
        if rel is not None and rel > score_band:
            worse.append((rel, "eval_score"))
            parts.append(f"final {run_score.name} {r:.4g} against the baseline's {b:.4g} ({_pct(rel)} worse)")
        elif rel is not None and rel < -score_band:
            better = True
    if not fields:
        return None
    if departures:
        step, metric = min(departures)
        fields.update(first_departure_step=step, first_departure_metric=metric)
    if worse:
        rel, metric = max(worse)
        fields.update(is_worse=True, worst_metric=metric, worst_rel_gap=rel if rel != float("inf") else None)
    else:
        fields.update(is_better=better)
    text = (
        "; ".join(parts)
        if parts
        else ("the run ends better than the baseline" if better else "the run stays within the baseline's noise band")
    )
    return BenchmarkGap(text=text, side="run", source=Source(path=path), **fields)


__all__ = ["SCORE_BAND", "FinalScore", "benchmark_gap"]


def extract(pair: RunPair) -> Extraction:
    """The benchmark gap of a run with a baseline: its loss deviations and both sides' final eval scores."""
    out = Extraction()
    if pair.baseline is None:
        return out
    th = read_group(CurveThresholds, pair.options)
    rview, bview = pair.view(pair.run), pair.view(pair.baseline)
    run, base = rview.curves, bview.curves
    devs = []
    for split in ("train", "eval"):
        r, b = rview.primary_loss(split), bview.primary_loss(split)
        if r is not None and b is not None:
            dev = baseline_deviation(r, b, split, th)
            if dev is not None:
                devs.append(dev)
    gap = benchmark_gap(
        devs, final_score(run), final_score(base), float(read_group(BenchmarkOptions, pair.options).score_band)
    )
    if gap is not None:
        out.facts.append(gap)
        out.checks.append(
            CheckRun(
                stage="pre_check",
                inputs=[gap.source.path] if gap.source else [],
                note="the run against its baseline: " + gap.text,
            )
        )
    return out
