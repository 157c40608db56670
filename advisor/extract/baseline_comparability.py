"""Is the baseline a reference for this run at all? The same task, class count and model family, where both
sides state them; a baseline that solves another problem gets its comparisons withheld.

A BERT binary classifier "compared" with a ten-class digits MLP differs in every setting and every curve; each
difference would become evidence of a port fault (``hparam_mismatch`` at 94 %) though none of them is one. The
routine's pre-check (routine.md: the benchmark must be a valid reference) comes first: such a pair gets one
``baseline_comparability`` fact, ``comparable: false`` with the reasons, and the facts that compare the two
sides (``COMPARISON_KINDS``) are withheld, so no rule reads them.
"""

from __future__ import annotations

from collections.abc import Sequence

from advisor.facts.base import Fact
from advisor.facts.benchmark import BaselineComparability
from advisor.facts.model import Task
from advisor.facts.recipe import ModelFamily

#: facts that read the run against the baseline: meaningless when the baseline trains another problem
COMPARISON_KINDS = frozenset(
    {
        "hparam_diff",
        "setting_diff",
        "benchmark_gap",
        "pipeline_compare",
        "op_comparison",
        "op_comparison_summary",
        "structure_diff",
        "rank_divergence",
    }
)


def _one(facts: Sequence[Fact], cls, side: str):
    return next((f for f in facts if isinstance(f, cls) and f.side == side), None)


def _task_kind(task: Task) -> str:
    """binary and a two-class multiclass are one problem (a sigmoid or a two-way softmax)."""
    if task.task_type == "multiclass" and task.n_classes == 2:
        return "binary"
    return task.task_type


def _family(f: ModelFamily) -> str:
    """A model zoo's row of a family is the family (MindSpore's ResNet is a ResNet: the port is the point)."""
    return f.family.removeprefix("ms_")


def comparability(facts: Sequence[Fact]) -> BaselineComparability | None:
    """The fact for a run with a baseline (None without one)."""
    if not any(f.side == "baseline" for f in facts):
        return None
    run_task, base_task = _one(facts, Task, "run"), _one(facts, Task, "baseline")
    run_fam, base_fam = _one(facts, ModelFamily, "run"), _one(facts, ModelFamily, "baseline")
    reasons: list[str] = []
    if run_task is not None and base_task is not None:
        decided = not (run_task.is_from_metric or base_task.is_from_metric)  # metric names alone are weak
        if decided and _task_kind(run_task) != _task_kind(base_task):
            reasons.append(
                f"the run is a {run_task.task_type} task ({run_task.decided_from}), the baseline a "
                f"{base_task.task_type} one ({base_task.decided_from})"
            )
        elif run_task.n_classes and base_task.n_classes and run_task.n_classes != base_task.n_classes:
            reasons.append(
                f"the run has {run_task.n_classes} classes ({run_task.decided_from}), the baseline "
                f"{base_task.n_classes} ({base_task.decided_from})"
            )
    if run_fam is not None and base_fam is not None and _family(run_fam) != _family(base_fam):
        reasons.append(
            f"the run trains a {run_fam.title} ({run_fam.recognised_from}), the baseline a {base_fam.title} "
            f"({base_fam.recognised_from})"
        )
    return BaselineComparability(
        comparable=not reasons,
        reasons="; ".join(reasons),
        differences=len(reasons),
        task_run=run_task.task_type if run_task else None,
        task_baseline=base_task.task_type if base_task else None,
        n_classes_run=run_task.n_classes if run_task else None,
        n_classes_baseline=base_task.n_classes if base_task else None,
        family_run=run_fam.family if run_fam else None,
        family_baseline=base_fam.family if base_fam else None,
    )


def gate(facts: Sequence[Fact]) -> list[Fact]:
    """``facts`` with the comparability fact added and, for a baseline that is no reference, the comparisons
    withheld."""
    fact = comparability(facts)
    if fact is None:
        return list(facts)
    if fact.comparable:
        return [*facts, fact]
    kept = [f for f in facts if f.kind not in COMPARISON_KINDS]
    return [*kept, fact.model_copy(update={"withheld": len(facts) - len(kept)})]
