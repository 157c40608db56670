"""The pre-check stage: the run against its benchmark as a whole (the symptom the routine starts from)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact

GapMetric = Literal["train_loss", "eval_loss", "eval_score"]


class BenchmarkGap(Fact):
    """How far the run falls short of (or beats) its baseline, over every curve both sides logged."""

    kind: Literal["benchmark_gap"] = "benchmark_gap"
    is_worse: bool = Field(
        default=False,
        description="some metric ends worse than the baseline's by more than its noise band (loss above, score below)",
    )
    is_better: bool = Field(default=False, description="no metric worse, and some metric better beyond the band")
    worst_metric: GapMetric | None = Field(default=None, description="the metric with the largest relative shortfall")
    worst_rel_gap: float | None = Field(default=None, description="its relative shortfall at the end (0.83: 83% worse)")
    first_departure_metric: GapMetric | None = Field(default=None, description="the loss that left the band first")
    first_departure_step: int | None = Field(default=None, description="the step from which it stays outside the band")
    train_loss_rel_gap: float | None = Field(
        default=None,
        description="(run - baseline) / baseline train loss at the last aligned step (positive: run worse)",
    )
    eval_loss_rel_gap: float | None = Field(default=None, description="the same for the eval loss")
    score_name: str | None = Field(default=None, description="the eval score compared (accuracy, f1, wer, ...)")
    score_run: float | None = Field(default=None, description="the run's last eval score")
    score_baseline: float | None = Field(default=None, description="the baseline's last eval score")
    score_rel_gap: float | None = Field(
        default=None,
        description="relative shortfall of the run's final score (positive: run worse, in the score's direction)",
    )
    score_band: float | None = Field(default=None, description="relative score difference counted as noise")
    text: str = Field(default="", description="the gap in words: metric, size, step")
    doc = "the run against its baseline as a whole: where it leaves the noise band, by how much, on which metric"


class BaselineComparability(Fact):
    """Whether the baseline trains the same problem as the run: task, class count, model family.

    Only what both sides state is compared (an unknown on either side is not a difference). A baseline that
    differs in the problem it solves is no reference: its curves, settings and operator outputs are not
    compared with the run's (those facts are withheld) and the report says why."""

    kind: Literal["baseline_comparability"] = "baseline_comparability"
    comparable: bool = Field(description="nothing both sides state differs in the problem they solve")
    reasons: str = Field(default="", description="what differs, in words, '; '-joined")
    differences: int = Field(default=0, description="how many of task, class count and model family differ")
    task_run: str | None = Field(default=None, description="the run's task (binary, multiclass, regression, ...)")
    task_baseline: str | None = Field(default=None, description="the baseline's task")
    n_classes_run: int | None = Field(default=None, description="the run's class count")
    n_classes_baseline: int | None = Field(default=None, description="the baseline's class count")
    family_run: str | None = Field(default=None, description="the run's model family (advisor/knowledge/recipes.py)")
    family_baseline: str | None = Field(default=None, description="the baseline's model family")
    withheld: int = Field(default=0, description="comparison facts withheld because the baseline is no reference")
    doc = "whether the baseline trains the same problem as the run (task, class count, model family)"
