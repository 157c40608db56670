"""Facts of the operator-level stages: network-wide comparison, random errors,
fusion and the operator side of floating-point exceptions.

Summaries only: one ``op_comparison_summary`` per compared dump pair, one
``op_comparison`` per *interesting* operator (the source, independent sources,
the first differing operator, and a capped number of propagated ones), and one
``op_anomaly`` per kind of anomaly found in the run's dump (its first
occurrence in execution order).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class OpComparison(Fact):
    """One operator's outputs compared with the baseline's (its worst output tensor)."""

    kind: Literal["op_comparison"] = "op_comparison"
    op: str = Field(description="operator call as dumped, e.g. Functional.gelu.0.forward or layer1.conv.forward")
    op_type: str | None = Field(default=None, description="operator type: gelu, conv2d, LayerNorm, ...")
    order_index: int = Field(description="0-based position of the operator in the run's execution order")
    position: Literal["source", "independent_source", "propagated", "other"] = Field(
        description="source: first deviating operator whose inputs match; independent_source: a later one "
        "whose inputs match too; propagated: deviates only because its inputs do"
    )
    is_first_difference: bool = Field(
        default=False, description="the first operator whose outputs are not bit-identical"
    )
    verdict: Literal["pass", "warning", "error", "skipped"] = Field(description="verdict of its worst output tensor")
    reason: str = Field(default="", description="the metric that decided the verdict, with its threshold")
    mode: Literal["tensor", "statistics", "none"] = Field(
        default="tensor", description="compared on tensors or on recorded statistics"
    )
    tensor: str | None = Field(default=None, description="name of the worst output tensor")
    cosine: float | None = Field(default=None, description="cosine similarity of run and baseline (1 = same direction)")
    max_abs_err: float | None = Field(default=None, description="largest absolute difference")
    euclid_rel_dist: float | None = Field(default=None, description="||run - baseline|| / ||baseline||")
    max_rel_err: float | None = Field(default=None, description="largest per-element relative error")
    rel_err_over_1e3_ratio: float | None = Field(
        default=None, description="share of elements with relative error > 1/1000"
    )
    stat_rel_diff: float | None = Field(
        default=None, description="statistics mode: largest relative difference of Max/Min/Mean/Norm"
    )
    threshold: float | None = Field(
        default=None, description="the error threshold of euclid_rel_dist (or of stat_rel_diff) for its dtype"
    )
    dtype_run: str | None = Field(default=None, description="dtype of the run's output tensor")
    dtype_baseline: str | None = Field(default=None, description="dtype of the baseline's output tensor")
    is_dtype_changed: bool = Field(default=False, description="the run's output dtype differs from the baseline's")
    is_fused_op: bool = Field(
        default=False,
        description="the operator name looks like a fused kernel (fused_*, *fusion*, flash attention, ...)",
    )
    inputs_match: bool | None = Field(default=None, description="all compared inputs of the operator pass")
    spans_baseline: str | None = Field(
        default=None,
        description="when this run operator stands for several baseline operators (matched as a span: its inputs "
        "with the first one's, its outputs with the last one's, as a fused kernel is): 'first -> last' of the "
        "baseline operators it covers",
    )
    differing_args: str | None = Field(
        default=None,
        description="its non-tensor arguments that differ from the "
        "baseline's (approximate, eps, dim, keepdim ...), "
        "in words; None: equal or not recorded",
    )
    doc = "one operator's outputs compared with the benchmark's: verdict, metrics, and whether it is the source or inherits the error"


class OpComparisonSummary(Fact):
    """The comparison of a run's dump with the baseline's, as a whole."""

    kind: Literal["op_comparison_summary"] = "op_comparison_summary"
    mode: Literal["tensor", "statistics"] = Field(description="tensor data or recorded statistics only")
    tensors_compared: int = Field(description="tensor pairs with a verdict")
    tensors_error: int = Field(default=0, description="tensor pairs judged error")
    tensors_warning: int = Field(default=0, description="tensor pairs judged warning")
    tensors_skipped: int = Field(
        default=0, description="matched pairs that could not be compared (shape differs, unreadable, empty)"
    )
    tensors_differing: int = Field(
        default=0, description="tensor pairs that are not bit-identical (any difference at all)"
    )
    unmatched_run: int = Field(default=0, description="run tensors with no baseline counterpart")
    unmatched_baseline: int = Field(default=0, description="baseline tensors with no run counterpart")
    ops_compared: int = Field(default=0, description="operators with at least one compared output")
    ops_deviating: int = Field(default=0, description="operators with an output judged warning or error")
    source_op: str | None = Field(
        default=None, description="first deviating operator whose inputs match (None: no deviation)"
    )
    source_op_type: str | None = Field(default=None, description="type of the source operator")
    source_verdict: str | None = Field(default=None, description="verdict of the source operator's worst output")
    independent_sources: int = Field(default=0, description="further deviating operators whose inputs match")
    propagated_ops: int = Field(default=0, description="deviating operators that only inherit the error")
    first_difference_op: str | None = Field(
        default=None, description="first operator whose outputs are not bit-identical"
    )
    differing_ops: int = Field(default=0, description="operators with an output that is not bit-identical")
    max_euclid_rel_dist: float | None = Field(
        default=None, description="largest euclid_rel_dist over all output tensors"
    )
    is_same_config: bool | None = Field(
        default=None,
        description="read as two runs of one configuration (a rerun: "
        "differences are random errors); False: the "
        "hyper-parameter files differ; None: unknown or "
        "read as a port",
    )
    baseline_kind: Literal["rerun", "port"] | None = Field(
        default=None, description="how the pair was read (--baseline-kind, or auto from the dumps): rerun or port"
    )
    baseline_kind_why: str | None = Field(default=None, description="why it was read so, in words")
    first_difference_op_kind: Literal["random", "nondeterministic", "gpu_nondeterministic", "deterministic"] | None = (
        Field(
            default=None,
            description="kind of the first differing operator: random (dropout ...), nondeterministic "
            "(atomics: scatter_add, index_add, ...), gpu_nondeterministic (matmul, conv, "
            "reductions: split-K/atomics on accelerators), deterministic (elementwise, "
            "activations, norms, softmax)",
        )
    )
    ops_with_differing_args: int = Field(default=0, description="operators whose non-tensor arguments differ")
    removed_ops: int = Field(
        default=0,
        description="baseline operators with no counterpart in the run (none of "
        "their tensors matched by name, order, shape or span)",
    )
    first_removed_op: str | None = Field(default=None, description="the first of them in the baseline's order")
    first_deviation_after_removed: str | None = Field(
        default=None,
        description="the first run tensor judged warning/error whose baseline counterpart comes after "
        "the first removed operator",
    )
    first_deviation_after_removed_op: str | None = Field(default=None, description="its operator")
    first_arg_difference_op: str | None = Field(default=None, description="the first of them in execution order")
    first_difference_inputs_identical: bool | None = Field(
        default=None, description="the first differing operator's compared inputs are bit-identical (None: none dumped)"
    )
    fused_ops_run: int = Field(default=0, description="operators of the run whose names look fused")
    fused_ops_baseline: int = Field(default=0, description="operators of the baseline whose names look fused")
    first_dtype_change_op: str | None = Field(
        default=None, description="first operator whose output dtype differs from the baseline's"
    )
    doc = "summary of the network-wide comparison of the run's dump with the baseline's"


class OpAnomaly(Fact):
    """The first operator (in execution order) showing one kind of numerical anomaly in the run's dump."""

    kind: Literal["op_anomaly"] = "op_anomaly"
    anomaly: Literal[
        "nonfinite_from_finite", "beyond_fp16_range", "grows_by_orders", "integer_valued_output", "underflow_to_zero"
    ] = Field(
        description="nonfinite_from_finite: NaN/Inf out of finite inputs; beyond_fp16_range: |x| > 65504 out of "
        "inputs within it; grows_by_orders: a finite output at least 1000x its inputs' largest |value| and within "
        "fp16's range (the first operator that does so); integer_valued_output: float output of whole numbers from non-integer inputs (or, from a normaliser, from a wider range of whole numbers); "
        "underflow_to_zero: a float16/bfloat16 output all zero where the baseline's is nonzero but "
        "below that type's smallest normal value"
    )
    op: str = Field(description="the operator call, e.g. Functional.div.0.forward")
    op_type: str | None = Field(default=None, description="operator type")
    order_index: int = Field(description="0-based position in execution order")
    tensor: str = Field(description="the output tensor that shows it")
    dtype: str | None = Field(default=None, description="dtype of that output")
    nan_count: int | None = Field(default=None, description="NaN elements in the output (statistics mode: 1 = some)")
    inf_count: int | None = Field(default=None, description="Inf elements in the output (statistics mode: 1 = some)")
    abs_max: float | None = Field(default=None, description="largest finite |value| of the output")
    integer_ratio: float | None = Field(
        default=None, description="share of finite output elements that are whole numbers"
    )
    is_all_zero: bool = Field(
        default=False, description="the output is all zeros (truncated) while the baseline's is not"
    )
    from_integer_inputs: bool = Field(
        default=False,
        description="integer_valued_output of a normalising operator whose inputs were whole numbers too, over a "
        "wider range (an affine normalisation cannot narrow whole numbers to whole numbers without rounding)",
    )
    baseline_integer_ratio: float | None = Field(
        default=None, description="the same for the baseline's output (None: no baseline)"
    )
    baseline_has_nonfinite: bool | None = Field(
        default=None, description="the baseline's output has NaN/Inf too (None: no baseline)"
    )
    baseline_abs_max: float | None = Field(default=None, description="largest finite |value| of the baseline's output")
    compute_dtype: str | None = Field(
        default=None,
        description="underflow_to_zero: the half-precision type the operator computes in (float16, bfloat16)",
    )
    is_absorbed: bool = Field(
        default=False,
        description="nonfinite_from_finite only: no later operator outputs NaN/Inf "
        "(e.g. a -inf attention mask absorbed by softmax)",
    )
    growth_ratio: float | None = Field(
        default=None, description="grows_by_orders: the output's largest |value| over its inputs'"
    )
    ops_affected: int | None = Field(
        default=None,
        description="operators of the run with the same anomaly (for NaN/Inf: all with non-finite outputs)",
    )
    doc = "the first operator of the run's dump that produces NaN/Inf, fp16-overflowing values or integer-valued floats"


class RankDivergence(Fact):
    """Which rank and which step of a distributed run's dump tree first diverged (advisor/compare/ranks.py)."""

    kind: Literal["rank_divergence"] = "rank_divergence"
    pattern: Literal[
        "none", "single_rank", "one_rank", "some_ranks", "every_rank_same_operator", "every_rank_different_operators"
    ] = Field(
        description="at the first step where anything deviates: one_rank / some_ranks: only they deviate (or the "
        "others only from a collective that carries their error); every_rank_same_operator: all ranks at one "
        "operator; every_rank_different_operators: all ranks, nothing singled out; single_rank: one rank compared"
    )
    ranks_total: int = Field(description="ranks compared")
    steps_compared: int = Field(description="steps compared")
    pairs_compared: int = Field(description="step x rank pairs compared")
    pairs_not_compared: int = Field(default=0, description="pairs that could not be compared (a dump not readable)")
    first_step: int | None = Field(default=None, description="the first step where a rank deviates")
    ranks_deviating: int = Field(default=0, description="ranks that deviate first (at first_step)")
    deviating_ranks: str = Field(default="", description="those ranks, e.g. '5' or '2, 3'")
    first_op: str | None = Field(default=None, description="the first deviating operator of the first such rank")
    first_op_kind: Literal["communication", "data", "compute"] | None = Field(
        default=None,
        description="communication: a collective (all-reduce, all-gather, broadcast, HCCL/NCCL); data: the model's "
        "first operator already gets other inputs; compute: any other operator",
    )
    spread: str = Field(default="", description="what later steps show, e.g. 'every rank deviates from step 4'")
    text: str = Field(description="what the step x rank table shows, in words")
    doc = "which rank and which step of a multi-card run's dumps first deviate from the baseline, and at which operator"
