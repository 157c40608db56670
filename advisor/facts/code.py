"""Facts about the training script: what its code does, read without running it.

``code_finding``: one place in a script where the training code does something known to spoil training (a loop
that never resets its gradients, a softmax fed to a loss that applies its own), with the check's id
(``advisor/extract/code/checks.py`` lists them), the line and its text. A finding is a smell: it explains a
symptom the run shows, and is a warning when the run shows none.

``code_summary``: what was read of the scripts (their training loop, the framework's training call), so that a
rule can tell "no finding" from "no script".
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact

CodeCheckId = Literal[
    "zero_grad_missing",
    "zero_grad_between_backward_and_step",
    "eval_mode_never_undone",
    "activation_before_logits_loss",
    "probabilities_into_nll_loss",
    "logits_into_probability_loss",
    "loss_input_not_differentiable",
    "integer_division_in_metric",
    "training_data_not_shuffled",
    "validation_split_of_unshuffled_data",
    "loss_average_over_wrong_count",
    "class_loss_with_float_labels",
    "regression_loss_for_classes",
    "grad_accumulation_loss_not_divided",
    "grad_scaler_step_bypassed",
    "no_grad_around_training",
]


Framework = Literal["torch", "keras", "lightning", "transformers", "other"]


class CodeFinding(Fact):
    """A place in a training script that is known to spoil training (advisor/extract/code/checks.py)."""

    kind: Literal["code_finding"] = "code_finding"
    check: CodeCheckId = Field(description="the check that found it (docs/code-checks.md lists them)")
    script: str = Field(description="the script, as the report shows its path")
    line: int = Field(description="the line (1-based) the finding points at")
    code: str = Field(description="that line's text, stripped (at most 200 characters)")
    detail: str = Field(description="what the code does there, in one sentence")
    framework: Framework = Field(default="other", description="the framework whose API the finding is about")
    doc = "a line of the training script known to spoil training (a missing zero_grad, a softmax before the loss)"


class CodeSummary(Fact):
    """What was read of the run's Python scripts."""

    kind: Literal["code_summary"] = "code_summary"
    scripts: int = Field(default=0, description="scripts parsed")
    has_training_loop: bool = Field(default=False, description="a hand-written loop that calls backward()")
    high_level_api: str = Field(
        default="", description="the framework's training call the code uses (keras_fit, lightning, hf_trainer), or ''"
    )
    findings: int = Field(default=0, description="code findings")
    doc = "what was read of the run's training scripts (their loop, the framework's training call, the findings)"
