"""What the run shows, before any cause: the symptom facts (stage: pre-check, the routine's first question).

An expert reads a run symptom first: did the loss go NaN, did it never leave its start, does it stop at the
loss of a uniform guess, is the held-out score at chance, is the run behind its benchmark? Only then do they
ask which causes explain it. ``symptom`` facts say what the run shows, each with the sentence a report leads
with; ``symptom_summary`` says whether the run shows anything at all, and whether it shows a healthy training
(so that a setting that often causes trouble, found in a run that trains well, is a warning and not a cause).

Symptom ids are public (the JSON report carries them, rules match them); docs/report-json.md lists them.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from advisor.facts.base import Fact

#: the symptom ids, most specific first
SymptomId = Literal[
    "nonfinite_loss_at_start",
    "nonfinite_loss",
    "loss_explodes",
    "nonfinite_eval_loss",
    "loss_at_chance",
    "loss_stuck",
    "loss_at_floor",
    "predictions_saturated",
    "loss_oscillates",
    "score_at_chance",
    "score_near_zero",
    "metric_inconsistent",
    "eval_worse_than_train",
    "nonfinite_gradients",
    "loss_scale_collapses",
    "crash",
    "baseline_gap",
    "target_gap",
    "slow_or_unfinished",
]

#: every symptom id, most specific first: the first one a run shows is its primary symptom
SYMPTOM_IDS: tuple[str, ...] = get_args(SymptomId)

#: a short title of each symptom (the report's and the rules' vocabulary)
SYMPTOM_TITLES: dict[str, str] = {
    "nonfinite_loss_at_start": "Loss NaN/Inf from the first step",
    "nonfinite_loss": "Loss became NaN/Inf",
    "loss_explodes": "Loss or gradients explode",
    "nonfinite_eval_loss": "Eval loss NaN/Inf",
    "loss_at_chance": "Loss stuck at chance level",
    "loss_stuck": "Loss never leaves its start",
    "loss_at_floor": "Loss levels off at a floor above what the task allows",
    "predictions_saturated": "Every prediction is a hard 0 or 1",
    "loss_oscillates": "Loss oscillates",
    "score_at_chance": "Eval score at chance",
    "score_near_zero": "Detection or segmentation score near zero",
    "metric_inconsistent": "The metric contradicts the loss",
    "eval_worse_than_train": "Eval much worse than train",
    "nonfinite_gradients": "Gradient norm NaN/Inf",
    "loss_scale_collapses": "Loss scale collapses",
    "crash": "The run stopped with an exception",
    "baseline_gap": "Worse than the baseline",
    "target_gap": "Below the stated target",
    "slow_or_unfinished": "Loss falls very slowly",
}


class Symptom(Fact):
    """One thing the run shows that a healthy training does not, with the sentence that says it."""

    kind: Literal["symptom"] = "symptom"
    name: SymptomId = Field(description="the symptom id (docs/report-json.md lists them)")
    text: str = Field(description="what the run shows, in one sentence (the report leads with it)")
    split: Literal["train", "eval"] | None = Field(default=None, description="the curve it was seen on, if one")
    metric_name: str | None = Field(default=None, description="the logged key it was seen on (loss, val_acc, ...)")
    step: float | None = Field(default=None, description="where it appeared, in x_unit")
    x_unit: Literal["step", "epoch", "index"] | None = Field(default=None, description="what step counts")
    updates_before: int | None = Field(
        default=None,
        description="optimizer updates made before it appeared (0: the first forward pass, before any update); None "
        "when the log does not say",
    )
    level: float | None = Field(default=None, description="the value the symptom is about (the plateau, the score)")
    reference: float | None = Field(
        default=None, description="what it is compared with (ln C, the chance accuracy, the baseline's, the target)"
    )
    rank: int = Field(default=0, description="position in SYMPTOM_IDS: lower is more specific")
    doc = "a symptom the run shows (NaN loss, stuck at its start, at chance, a gap to the baseline ...), in words"


class SymptomSummary(Fact):
    """Whether the run shows a symptom, shows a healthy training, or shows too little to tell."""

    kind: Literal["symptom_summary"] = "symptom_summary"
    status: Literal["symptom", "trains_well", "unclear", "no_evidence"] = Field(
        description="symptom: at least one symptom; trains_well: no symptom, and a loss that fell or a score well "
        "above chance; unclear: curves or scores, but too little to call it healthy; no_evidence: no curve or score"
    )
    primary: SymptomId | None = Field(default=None, description="the most specific symptom shown (SYMPTOM_IDS order)")
    names: str = Field(default="", description="every symptom shown, comma-separated, most specific first")
    count: int = Field(default=0, description="number of symptoms shown")
    health: str = Field(default="", description="for trains_well: what shows it, in words")
    at_ceiling: bool = Field(
        default=False,
        description="trains_well with a held-out accuracy of 0.99 or more: nothing left that training longer or "
        "faster could gain",
    )
    doc = "the run's symptoms at a glance: which is primary, or whether it trains well"
