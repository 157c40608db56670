"""Per-operator dumps -> ``op_comparison``, ``op_comparison_summary`` and ``op_anomaly`` facts.

Runs when the run folder holds a dump (``dump/`` with .npy files, or an
msprobe ``dump.json``). With a baseline dump too, every tensor is compared
and the source operator located; when the run's and the baseline's
hyper-parameter files are equal (the same configuration run twice), the
summary says so (``is_same_config``), and the rules read differences as
random errors; unless the dumps themselves say otherwise (``_not_a_rerun``:
another framework, or differences from the very first operator, which is how
a port to another device or framework with an unchanged config file looks). Without a baseline only the run's own anomalies are looked
for (NaN/Inf born in an operator, fp16 range, integer-valued floats).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from advisor.compare.engine import Comparison, compare_dumps, scan_dump
from advisor.compare.chart import op_error_series
from advisor.compare.localise import (
    Localisation,
    OpView,
    flushed_to_zero,
    half_dtype,
    localise,
    normaliser_narrows_whole_numbers,
)
from advisor.compare.op_kinds import op_kind
from advisor.compare.tolerances import tolerance_for
from advisor.extract.options import CompareOptions, OpCompareOptions, group_options, read_group
from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.facts.base import Fact, Source
from advisor.facts.ops import OpAnomaly, OpComparison, OpComparisonSummary
from advisor.inventory import InputRecord
from advisor.read.dumps import Dump, split_name
from advisor.read.run import RunRead

#: operator names that look like fused kernels
FUSED_NAME = re.compile(
    r"fus(ed|ion)|flash_?att|scaled_dot_product|npu_(rms_?norm|rotary|swiglu|geglu)|"
    r"fastgelu|fast_gelu|matmul_?add|conv_?bn|addmm_act",
    re.IGNORECASE,
)
#: at most this many propagated operators become facts (the summary counts them all)
MAX_PROPAGATED_FACTS = 20


def is_fused(op: str, op_type: str | None = None) -> bool:
    """The operator's name or recorded type looks like a fused kernel."""
    return bool(FUSED_NAME.search(op) or (op_type and FUSED_NAME.search(op_type)))


def _fused_ops(d: Dump) -> int:
    types: dict[str, str | None] = {}
    for r in d.records:
        types.setdefault(r.op, r.op_type)
    return sum(is_fused(op, t) for op, t in types.items())


def _read_side(folder: RunRead, out: Extraction) -> list[tuple[str, Dump]]:
    dumps: list[tuple[str, Dump]] = []
    for got in folder.dumps:
        shown, dump = got.shown, got.dump
        if dump is None:
            out.inputs.append(
                InputRecord(
                    path=f"{shown}/dump.json", kind="dump", status="unreadable", why=got.problem, side=folder.side
                )
            )
            continue
        for f, why in dump.problems:
            out.inputs.append(
                InputRecord(path=f"{shown}/{f}", kind="dump", status="unreadable", why=why, side=folder.side)
            )
        bad = {r.rel_file for r in dump.records if r.problem}
        for r in dump.records:
            if r.problem:
                out.inputs.append(
                    InputRecord(
                        path=f"{shown}/{r.rel_file or r.name}",
                        kind="dump",
                        status="unreadable",
                        why=r.problem,
                        side=folder.side,
                    )
                )
        used = len([r for r in dump.records if r.rel_file not in bad])
        main = f"{shown}/dump.json" if dump.layout == "msprobe" else shown
        out.inputs.append(
            InputRecord(
                path=main,
                kind="dump",
                status="used",
                side=folder.side,
                why=f"{dump.layout} layout, {dump.mode} mode, {used} tensors",
            )
        )
        dumps.append((shown, dump))
    return dumps


def _pair_dumps(run: list[tuple[str, Dump]], base: list[tuple[str, Dump]]) -> list[tuple[str, Dump, Dump]]:
    base_by = dict(base)
    if all(k in base_by for k, _ in run):
        return [(k, d, base_by[k]) for k, d in run]
    return [(k, d, b) for (k, d), (_, b) in zip(run, base)]


def _same_config(pair: RunPair) -> bool | None:
    stated = read_group(OpCompareOptions, pair.options).same_config
    if stated is not None:
        return bool(stated)
    if pair.baseline is None:
        return None
    flat: list[dict[str, Any]] = []
    for folder in (pair.run, pair.baseline):
        if not folder.hparams or any(f.data is None for f in folder.hparams):
            return None
        merged: dict[str, Any] = {}
        for src in pair.view(folder).flat_settings:
            if not src.printed:
                merged.update({f"{src.name}:{k}": v for k, v in src.values.items()})
        flat.append(merged)
    return flat[0] == flat[1]


#: --baseline-kind values (option ``compare.baseline_kind``)
BASELINE_KINDS = ("auto", "rerun", "port")


def _inputs_identical(v: OpView) -> bool | None:
    """All compared inputs of the operator bit-identical (None: no input was compared)."""
    inputs = [r for r in v.inputs if r.verdict != "skipped"]
    if not inputs:
        return None
    return all((r.metrics.identical if r.metrics is not None else r.stat_rel_diff == 0) for r in inputs)


@dataclass
class Reading:
    """How the dump pair is read: a rerun (differences are random errors) or a port (accuracy differences)."""

    kind: str | None  # rerun | port | None (nothing to decide on)
    why: str
    op_kind: str | None = None  # kind of the first differing operator (op_kinds.op_kind)
    inputs_identical: bool | None = None
    forced: bool = False


def read_pair(choice: str, same: bool | None, rd: Dump, bd: Dump, loc: Localisation) -> Reading:
    """Rerun or port, from what the dumps say (``choice`` auto) or as the user forces it.

    A rerun is bit-identical until its first nondeterministic or random operator; a deterministic
    operator that computes other outputs from bit-identical inputs computes something else (a port).
    Equal configuration files alone decide nothing: a port keeps its script and config files.
    """
    fd = loc.first_difference
    same_device = rd.device and bd.device and rd.device.split(":")[0].lower() == bd.device.split(":")[0].lower()
    kind = op_kind(fd.op, fd.op_type, rd.device if same_device else None) if fd else None
    ident = _inputs_identical(fd) if fd else None
    if choice in ("rerun", "port"):
        return Reading(choice, f"--baseline-kind {choice} given", kind, ident, forced=True)
    if rd.framework and bd.framework and rd.framework.lower() != bd.framework.lower():
        return Reading("port", f"the dumps come from {rd.framework} and {bd.framework}", kind, ident)
    if rd.device and bd.device and not same_device:
        return Reading("port", f"the dumps come from the devices {rd.device} and {bd.device}", kind, ident)
    changed = next((r for r in (fd.outputs if fd else []) if r.dtype_changed), None)
    if changed is not None:
        return Reading(
            "port",
            f"the first difference is at {fd.op}, which outputs {changed.dtype_run} in the run "  # type: ignore[union-attr]
            f"and {changed.dtype_baseline} in the baseline (another precision)",
            kind,
            ident,
        )
    if fd is None:
        return Reading("rerun" if same else None, "no operator output differs", kind, ident)
    at = f"the first difference is at {fd.op}" + (f" ({fd.op_type})" if fd.op_type else "")
    if same is False:
        return Reading("port", "the hyper-parameter files differ", kind, ident)
    if kind in ("random", "nondeterministic"):
        what = (
            "a random operator" if kind == "random" else "an operator with atomics-based (order-dependent) accumulation"
        )
        return Reading("rerun", f"{at}, {what}, as in two runs of one configuration", kind, ident)
    if ident and kind == "deterministic":
        return Reading(
            "port",
            f"{at}, a deterministic operator that computes other outputs from bit-identical "
            "inputs (a rerun is bit-identical until its first nondeterministic operator)",
            kind,
            ident,
        )
    if ident:  # a matmul / convolution / reduction: split-K or atomics on an accelerator, deterministic on CPU
        return Reading(
            "rerun" if same else None,
            f"{at}, a reduction whose result may depend on the kernel's "
            "accumulation order on an accelerator, from bit-identical inputs",
            kind,
            ident,
        )
    if same:
        return Reading(
            "rerun",
            f"equal hyper-parameter files and {at}, whose inputs already differ (an unseeded "
            "input pipeline or initialisation)",
            kind,
            ident,
        )
    return Reading(None, "no hyper-parameter files to compare and no operator kind that decides", kind, ident)


_MISSING = object()


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0) or (math.isnan(a) and math.isnan(float(b)))
    return type(a) is type(b) and a == b


def arg_differences(run_args: dict[str, Any], base_args: dict[str, Any]) -> list[str]:
    """Non-tensor arguments that differ, in words: ``approximate='tanh' in the run, not given in the baseline``."""
    out = []
    for key in sorted(set(run_args) | set(base_args)):
        r, b = run_args.get(key, _MISSING), base_args.get(key, _MISSING)
        if r is not _MISSING and b is not _MISSING and _same_value(r, b):
            continue
        shown_r = "not given (default)" if r is _MISSING else repr(r)
        shown_b = "not given (default)" if b is _MISSING else repr(b)
        out.append(f"{key}={shown_r} in the run, {shown_b} in the baseline")
    return out


def arg_diffs(loc: Localisation, rd: Dump, bd: Dump) -> dict[str, str]:
    """Operator (run name) -> its differing non-tensor arguments, for dumps that record them (msprobe)."""
    out: dict[str, str] = {}
    if not rd.args and not bd.args:
        return out
    for v in loc.ops:
        row = next(iter(v.outputs + v.inputs), None)
        base_op = split_name(row.baseline_name)[0] if row is not None and row.baseline_name else v.op
        diffs = arg_differences(rd.args.get(v.op, {}), bd.args.get(base_op, {}))
        if diffs:
            out[v.op] = "; ".join(diffs)
    return out


def removed_ops(comp: Comparison, loc: Localisation, bd: Dump) -> tuple[list[str], str | None, str | None]:
    """(baseline operators with no counterpart in the run, in order; the first tensor that deviates after the
    first of them; its operator) -- an operator eliminated or renamed beyond matching by a model conversion."""
    base_order = {r.name: r.order for r in bd.records}
    gone: dict[str, int] = {}
    for r in sorted(comp.unmatched_baseline, key=lambda r: r.order):
        gone.setdefault(r.op, r.order)
    matched_ops = {split_name(row.baseline_name)[0] for row in comp.rows if row.baseline_name}
    gone = {op: o for op, o in gone.items() if op not in matched_ops}  # a span's inner tensors are not removals
    if not gone:
        return [], None, None
    first_gone = min(gone.values())
    for v in judging_order_of(loc):
        for row in v.inputs + v.outputs:
            if row.verdict in ("warning", "error") and base_order.get(row.baseline_name or "", -1) > first_gone:
                return list(gone), row.name, v.op
    return list(gone), None, None


def judging_order_of(loc: Localisation) -> list[OpView]:
    from advisor.compare.localise import judging_order

    return judging_order(loc.ops)


def _num(x: float | None) -> float | None:
    if x is None:
        return None
    return float(x) if math.isfinite(x) else None


def _span_of(v: OpView) -> str | None:
    """'first -> last' baseline operator of a run operator matched as a span (one kernel for several)."""
    outs = [r for r in v.outputs if r.matched_by == "span" and r.baseline_name]
    ins = [r for r in v.inputs if r.matched_by == "span" and r.baseline_name]
    if not outs:
        return None
    last = split_name(outs[0].baseline_name or "")[0]
    first = split_name(ins[0].baseline_name or "")[0] if ins else None
    return f"{first} -> {last}" if first and first != last else None


def _op_fact(
    v: OpView,
    position: str,
    first_diff: OpView | None,
    options: dict[str, Any],
    source: Source,
    args: dict[str, str] | None = None,
) -> OpComparison:
    w = v.worst_output()
    m = w.metrics if w else None
    tol = tolerance_for(w.dtype_run if w else None, w.dtype_baseline if w else None, options)
    return OpComparison(
        op=v.op,
        op_type=v.op_type,
        order_index=v.order,
        position=position,  # type: ignore[arg-type]
        is_first_difference=first_diff is v,
        verdict=v.verdict,  # type: ignore[arg-type]
        reason=w.reason if w else "",
        mode=w.mode if w else "none",
        tensor=w.name if w else None,  # type: ignore[arg-type]
        cosine=_num(m.cosine) if m else None,
        max_abs_err=_num(m.max_abs_err) if m else None,
        euclid_rel_dist=_num(m.euclid_rel_dist) if m else None,
        max_rel_err=_num(m.max_rel_err) if m else None,
        rel_err_over_1e3_ratio=_num(m.rel_err_over_1e3_ratio) if m else None,
        stat_rel_diff=_num(w.stat_rel_diff) if w else None,
        threshold=tol.rel_dist_error if (w and w.mode == "tensor") else tol.stat_error,
        dtype_run=w.dtype_run if w else None,
        dtype_baseline=w.dtype_baseline if w else None,
        is_dtype_changed=bool(w and w.dtype_changed),
        is_fused_op=is_fused(v.op, v.op_type),
        inputs_match=v.inputs_match if v.inputs else None,
        spans_baseline=_span_of(v),
        differing_args=(args or {}).get(v.op),
        source=source,
    )


def comparison_facts(
    comp: Comparison,
    loc: Localisation,
    same_config: bool | None,
    options: dict[str, Any],
    source: Source,
    fused_baseline: int,
    reading: Reading | None = None,
    args: dict[str, str] | None = None,
    removed: tuple[list[str], str | None, str | None] | None = None,
) -> list[Fact]:
    """Facts of one compared dump pair: the interesting operators and one summary."""
    facts: list[Fact] = []
    chosen: list[tuple[OpView, str]] = []
    if loc.source:
        chosen.append((loc.source, "source"))
    chosen += [(v, "independent_source") for v in loc.independent_sources[:MAX_PROPAGATED_FACTS]]
    chosen += [(v, "propagated") for v in loc.propagated[:MAX_PROPAGATED_FACTS]]
    if loc.first_difference and all(v is not loc.first_difference for v, _ in chosen):
        chosen.append((loc.first_difference, "other"))
    for v, position in chosen:
        facts.append(_op_fact(v, position, loc.first_difference, options, source, args))
    rows = comp.rows
    dists = [
        r.metrics.euclid_rel_dist
        for r in rows
        if r.role == "output"
        and r.metrics
        and r.metrics.euclid_rel_dist is not None
        and math.isfinite(r.metrics.euclid_rel_dist)
    ]
    src_worst = loc.source.worst_output() if loc.source else None
    facts.append(
        OpComparisonSummary(
            mode="tensor" if comp.mode == "tensor" else "statistics",
            tensors_compared=sum(r.verdict != "skipped" for r in rows),
            tensors_error=sum(r.verdict == "error" for r in rows),
            tensors_warning=sum(r.verdict == "warning" for r in rows),
            tensors_skipped=sum(r.verdict == "skipped" for r in rows),
            tensors_differing=sum(
                bool((r.metrics and not r.metrics.identical) or (r.metrics is None and r.stat_rel_diff)) for r in rows
            ),
            unmatched_run=len(comp.unmatched_run),
            unmatched_baseline=len(comp.unmatched_baseline),
            ops_compared=sum(any(r.verdict != "skipped" for r in v.outputs) for v in loc.ops),
            ops_deviating=sum(v.deviates for v in loc.ops),
            source_op=loc.source.op if loc.source else None,
            source_op_type=loc.source.op_type if loc.source else None,
            source_verdict=src_worst.verdict if src_worst else None,
            independent_sources=len(loc.independent_sources),
            propagated_ops=len(loc.propagated),
            first_difference_op=loc.first_difference.op if loc.first_difference else None,
            differing_ops=loc.differing_ops,
            max_euclid_rel_dist=max(dists) if dists else None,
            is_same_config=same_config,
            fused_ops_run=sum(is_fused(v.op, v.op_type) for v in loc.ops),
            fused_ops_baseline=fused_baseline,
            first_dtype_change_op=loc.first_dtype_change.op if loc.first_dtype_change else None,
            baseline_kind=reading.kind if reading else None,
            baseline_kind_why=reading.why if reading else None,
            first_difference_op_kind=reading.op_kind if reading else None,
            first_difference_inputs_identical=reading.inputs_identical if reading else None,
            ops_with_differing_args=len(args or {}),
            removed_ops=len(removed[0]) if removed else 0,
            first_removed_op=removed[0][0] if removed and removed[0] else None,
            first_deviation_after_removed=removed[1] if removed else None,
            first_deviation_after_removed_op=removed[2] if removed else None,
            first_arg_difference_op=next((v.op for v in loc.ops if v.op in (args or {})), None),
            source=source,
        )
    )
    return facts


def anomaly_facts(loc: Localisation, source: Source) -> list[Fact]:
    facts: list[Fact] = []
    for anomaly, v in (
        ("nonfinite_from_finite", loc.nonfinite_source),
        ("beyond_fp16_range", loc.fp16_overflow),
        ("grows_by_orders", loc.growth),
        ("integer_valued_output", loc.integer_valued),
        ("underflow_to_zero", loc.underflow),
    ):
        if v is None:
            continue
        outs = v.outputs
        if anomaly == "nonfinite_from_finite":
            w = next(r for r in outs if r.run_side.has_nonfinite)
        elif anomaly in ("beyond_fp16_range", "grows_by_orders"):
            w = max(outs, key=lambda r: r.run_side.abs_max or 0.0)
        elif anomaly == "underflow_to_zero":
            w = next(r for r in outs if flushed_to_zero(v, r))
        else:
            w = max(outs, key=lambda r: (r.run_side.abs_max == 0.0, r.run_side.integer_ratio or 0.0))
        s, b = w.run_side, w.base_side
        all_zero = anomaly == "integer_valued_output" and s.abs_max == 0.0
        facts.append(
            OpAnomaly(
                anomaly=anomaly,
                op=v.op,
                op_type=v.op_type,
                order_index=v.order,
                tensor=w.name,  # type: ignore[arg-type]
                dtype=w.dtype_run,
                nan_count=s.nan,
                inf_count=s.inf,
                abs_max=_num(s.abs_max),
                integer_ratio=1.0 if all_zero else _num(s.integer_ratio),
                is_all_zero=all_zero,
                from_integer_inputs=anomaly == "integer_valued_output" and normaliser_narrows_whole_numbers(v),
                baseline_integer_ratio=_num(b.integer_ratio),
                baseline_has_nonfinite=b.has_nonfinite,
                baseline_abs_max=_num(b.abs_max),
                compute_dtype=half_dtype(v, w) if anomaly == "underflow_to_zero" else None,
                is_absorbed=anomaly == "nonfinite_from_finite" and loc.nonfinite_absorbed,
                ops_affected=loc.nonfinite_ops if anomaly == "nonfinite_from_finite" else None,
                growth_ratio=_num(loc.growth_ratio) if anomaly == "grows_by_orders" else None,
                source=source,
            )
        )
    return facts


def _pair_facts(
    pair: RunPair,
    out: Extraction,
    same: bool | None,
    shown: str,
    rd: Dump,
    bd: Dump,
    comp: Comparison,
    loc: Localisation,
) -> None:
    """The facts, series and checks of one compared dump pair."""
    for why, count in comp.fallbacks.items():
        out.inputs.append(
            InputRecord(
                path=f"{shown}/dump_tensor_data",
                kind="dump",
                status="unreadable",
                why=f"{count} tensor pairs: {why}",
            )
        )
    src = Source(path=f"{shown}/dump.json" if rd.layout == "msprobe" else shown)
    fused_base = _fused_ops(bd)
    choice = str(read_group(CompareOptions, pair.options).baseline_kind).lower()
    same_config = read_group(OpCompareOptions, pair.options).same_config
    if same_config is not None and "baseline_kind" not in group_options(CompareOptions, pair.options):
        choice = "rerun" if same_config else "port"
    reading = read_pair(choice, same, rd, bd, loc)
    rerun = True if reading.kind == "rerun" else (False if same is False else None)
    other = "port" if reading.kind == "rerun" else "rerun"
    note = f"; read as {reading.kind or 'undecided'}: {reading.why}" + (
        f" (--baseline-kind {other} reads it the other way)" if reading.kind else ""
    )
    out.facts.extend(
        comparison_facts(
            comp,
            loc,
            rerun,
            pair.options,
            src,
            fused_base,
            reading,
            arg_diffs(loc, rd, bd),
            removed_ops(comp, loc, bd),
        )
    )
    out.facts.extend(anomaly_facts(loc, src))
    series, markers = op_error_series(loc, shown)
    out.series.extend(series)
    out.markers.extend(markers)
    out.checks.append(
        CheckRun(
            stage="network_wide_comparison",
            inputs=[shown],
            note=f"{len(comp.rows)} tensor pairs, {comp.mode} mode{note}",
        )
    )
    out.checks.append(
        CheckRun(stage="floating_point_exceptions", inputs=[shown], note="NaN/Inf and fp16 range per operator")
    )
    if rerun:
        out.checks.append(CheckRun(stage="random_errors", inputs=[shown], note=f"read as a rerun: {reading.why}"))
    if is_fused_any(rd) or fused_base:
        out.checks.append(CheckRun(stage="fusion", inputs=[shown], note="fused operators in the dumps"))


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    run_dumps = _read_side(pair.run, out)
    if not run_dumps:
        return out
    base_dumps = _read_side(pair.baseline, out) if pair.baseline is not None else []
    opts = read_group(OpCompareOptions, pair.options)
    workers = opts.workers
    runner = pair.runner  # a runner the caller made and closes (a sweep's cluster)
    if runner is not None:
        return _with_runner_notes(_extract(pair, out, run_dumps, base_dumps, workers, runner), runner)
    if opts.scheduler:  # --scheduler: the comparisons on a Dask cluster
        from advisor.compare.dask_runner import DaskRunner, DaskUnavailable

        try:
            runner = DaskRunner(str(opts.scheduler), workers)
        except DaskUnavailable as exc:  # the rest of the diagnosis goes on, on this machine's threads
            out.checks.append(
                CheckRun(stage="network_wide_comparison", inputs=[], note=f"{exc}; compared in this process")
            )
    try:
        return _with_runner_notes(_extract(pair, out, run_dumps, base_dumps, workers, runner), runner)
    finally:
        if runner is not None:
            runner.close()


def _with_runner_notes(out: Extraction, runner: Any) -> Extraction:
    """What a cluster runner says (it could not be used and compared here, workers capped) as check notes."""
    for note in getattr(runner, "notes", ()):
        out.checks.append(CheckRun(stage="network_wide_comparison", inputs=[], note=note))
    return out


def _extract(
    pair: RunPair, out: Extraction, run_dumps: list, base_dumps: list, workers: Any, runner: Any
) -> Extraction:
    if base_dumps:
        same = _same_config(pair)
        from advisor.extract.op_tree import is_rank_tree, tree_facts

        if is_rank_tree(run_dumps):
            for shown, rd, bd, comp, loc in tree_facts(pair, run_dumps, base_dumps, workers, out, runner):
                _pair_facts(pair, out, same, shown, rd, bd, comp, loc)
            return out
        for shown, rd, bd in _pair_dumps(run_dumps, base_dumps):
            comp = compare_dumps(rd, bd, pair.options, workers=workers, runner=runner)
            _pair_facts(pair, out, same, shown, rd, bd, comp, localise(comp.rows, has_baseline=True))
        return out
    for shown, rd in run_dumps:
        rows = scan_dump(rd, workers=workers, options=pair.options, runner=runner)
        loc = localise(rows, has_baseline=False)
        src = Source(path=f"{shown}/dump.json" if rd.layout == "msprobe" else shown)
        out.facts.extend(anomaly_facts(loc, src))
        out.checks.append(
            CheckRun(
                stage="floating_point_exceptions",
                inputs=[shown],
                note="run dump only: NaN/Inf and fp16 range per operator",
            )
        )
    return out


def is_fused_any(d: Dump) -> bool:
    return _fused_ops(d) > 0


__all__ = ["extract", "comparison_facts", "anomaly_facts", "is_fused"]
