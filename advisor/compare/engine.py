"""Compare two dumps tensor by tensor (or scan one), using both cores.

Work is split into items (a tensor pair, or a range of a big one); a runner
(``runner.py``: threads here, numpy releasing the GIL inside its loops; or a
Dask cluster, ``dask_runner.py``) runs them, and the partial accumulators of a
tensor are merged in a fixed order, so results do not depend on who ran them.
Each item opens its own memory map: peak memory is about ``workers x chunk``
working copies plus the ``.pt`` tensors being read, whatever the dump size.
``compare_many`` runs the items of many dump pairs (a tree of steps and ranks)
together, pass by pass.
"""

from __future__ import annotations

import math
import os
from functools import partial
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np

from advisor.compare.accumulator import Accumulator, PairMetrics, SideAcc
from advisor.compare.match import match_records
from advisor.compare.kernel_loader import compiled_kernel, kernel_loaded
from advisor.compare.kl import kl_accumulate, minmax_kl
from advisor.compare.metrics import accumulate, ranges, side_stats
from advisor.compare.runner import Item, Runner, ThreadRunner
from advisor.compare.tolerances import judge, judge_stats, normalise_dtype, tolerance_for
from advisor.read.dumps import DumpReadError, Dump, TensorRecord, load_tensor

RowVerdict = Literal["pass", "warning", "error", "skipped"]
#: tensors larger than this many elements are split into ranges across the workers
SPLIT_ELEMENTS = 1 << 19
#: with option compare.kernel=auto (the default), comparisons of at least this many bytes (both
#: sides) use the compiled kernel when numba is installed: numba's start-up in a process costs
#: 1-1.5 s (a first compile ~5 s per dtype pair, once per environment) and the kernel saves
#: ~1.2 s per GB on 2 cores; measured end to end, `advisor compare` broke even at 1 GB
KERNEL_MIN_BYTES = 1 << 30
#: ... and this many once the kernel is loaded in the process (a second comparison, a library user)
KERNEL_LOADED_MIN_BYTES = 64 << 20
KERNELS = ("auto", "compiled", "numpy")


@dataclass(slots=True)  # 10^5 of them in a big dump: no per-instance dict
class SideInfo:
    """What is known of one side's tensor after the pass (from data or from recorded statistics)."""

    nan: int | None = None
    inf: int | None = None
    min: float | None = None
    max: float | None = None
    integer_ratio: float | None = None

    @property
    def has_nonfinite(self) -> bool | None:
        if self.nan is None:
            return None
        return bool(self.nan or self.inf)

    @property
    def abs_max(self) -> float | None:
        if self.min is None or self.max is None:
            return None
        return max(abs(self.min), abs(self.max))


@dataclass(slots=True)  # 10^5 of them in a big dump: no per-instance dict
class Row:
    """One tensor (pair) of the comparison, in the run's execution order."""

    name: str
    op: str
    role: str
    order: int
    op_type: str | None
    baseline_name: str | None = None
    matched_by: str | None = None
    dtype_run: str | None = None
    dtype_baseline: str | None = None
    shape_run: tuple[int, ...] | None = None
    shape_baseline: tuple[int, ...] | None = None
    mode: Literal["tensor", "statistics", "none"] = "none"
    metrics: PairMetrics | None = None
    stat_rel_diff: float | None = None
    verdict: RowVerdict = "skipped"
    reason: str = ""
    run_side: SideInfo = field(default_factory=SideInfo)
    base_side: SideInfo = field(default_factory=SideInfo)
    position: str = ""  # set by localisation: source / propagated / ""
    nbytes: int = 0

    @property
    def is_float(self) -> bool:
        d = normalise_dtype(self.dtype_run) or ""
        return d.startswith(("float", "bfloat", "complex")) or d == ""

    @property
    def dtype_changed(self) -> bool:
        a, b = normalise_dtype(self.dtype_run), normalise_dtype(self.dtype_baseline)
        return a is not None and b is not None and a != b


@dataclass
class Comparison:
    rows: list[Row]
    unmatched_run: list[TensorRecord]
    unmatched_baseline: list[TensorRecord]
    mode: str
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (side, file, why)
    #: tensor files that could not be read and were compared on their recorded statistics instead
    fallbacks: dict[str, int] = field(default_factory=dict)  # reason -> number of tensors
    #: the pass that computed the metrics: "compiled" (numba kernel) or "numpy"
    kernel: str = "numpy"


def use_compiled(option: str, nbytes: int) -> bool:
    """Whether the pass uses the compiled kernel: option compare.kernel (auto|compiled|numpy)."""
    if option not in KERNELS:
        raise ValueError(f"compare.kernel must be one of {', '.join(KERNELS)}, got '{option}'")
    if option == "numpy":
        return False
    if option == "compiled":
        if compiled_kernel() is None:
            from advisor.compare.kernel_loader import KERNEL_PROBLEM

            raise ValueError(
                f'compare.kernel=compiled needs numba: pip install "accuracy-advisor[fast]" ({KERNEL_PROBLEM})'
            )
        return True
    if kernel_loaded():  # its start-up is paid
        return nbytes >= KERNEL_LOADED_MIN_BYTES
    return nbytes >= KERNEL_MIN_BYTES and compiled_kernel() is not None


def _judge_imaginary(rrec: TensorRecord, brec: TensorRecord, row: Row, tol: Any) -> tuple[Any, str]:
    """The verdict of a pair where a side is complex: the metrics compared the real parts; the
    imaginary parts are compared here, chunk by chunk (an imaginary part dropped is never 'identical')."""
    try:
        r, b = load_tensor(rrec).reshape(-1), load_tensor(brec).reshape(-1)
    except (DumpReadError, ValueError) as exc:
        return "error", f"{row.dtype_run} vs {row.dtype_baseline}: imaginary parts not compared ({exc})"
    worst, scale = 0.0, 0.0
    for start in range(0, min(r.size, b.size), 1 << 20):
        ri, bi = np.imag(np.asarray(r[start : start + (1 << 20)])), np.imag(np.asarray(b[start : start + (1 << 20)]))
        worst = max(worst, float(np.max(np.abs(ri.astype(np.float64) - bi), initial=0.0)))
        scale = max(scale, float(np.max(np.abs(bi), initial=0.0)), float(np.max(np.abs(ri), initial=0.0)))
    if worst == 0.0:
        return row.verdict, row.reason + " (real parts; imaginary parts equal)"
    verdict = "error" if worst > float(getattr(tol, "rel_dist_error", 1e-6)) * scale else row.verdict
    return verdict, (
        f"{row.dtype_run} vs {row.dtype_baseline}: imaginary parts differ by up to {worst:.4g} "
        f"(the metrics above compare the real parts)"
    )


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def _nbytes(rec: TensorRecord) -> int:
    if rec.shape is None:
        return 0
    size = math.prod(rec.shape)
    itemsize = np.dtype(rec.dtype).itemsize if rec.dtype in np.sctypeDict else 4
    return size * itemsize


def _side_from_stats(stats: dict[str, float] | None) -> SideInfo:
    if not stats:
        return SideInfo()
    vals = [v for v in stats.values()]
    nonfinite = any(not math.isfinite(v) for v in vals)
    return SideInfo(
        nan=1 if any(math.isnan(v) for v in vals) else 0,
        inf=1 if nonfinite and not any(math.isnan(v) for v in vals) else 0,
        min=stats.get("Min"),
        max=stats.get("Max"),
    )


def _side_from_acc(acc: SideAcc) -> SideInfo:
    return SideInfo(
        nan=acc.nan,
        inf=acc.inf,
        min=acc.min if acc.n else None,
        max=acc.max if acc.n else None,
        integer_ratio=acc.integer_ratio,
    )


def _pair_task(
    rrec: TensorRecord, brec: TensorRecord, start: int, stop: int | None, with_kl: bool, compiled: bool
) -> Accumulator:
    return accumulate(load_tensor(rrec), load_tensor(brec), start, stop, with_kl=with_kl, compiled=compiled)


def _kl_task(
    rrec: TensorRecord, brec: TensorRecord, start: int, stop: int | None, max_run: float, max_baseline: float
) -> Accumulator:
    return kl_accumulate(load_tensor(rrec), load_tensor(brec), max_run, max_baseline, start, stop)


def _minmax_kl_task(rrec: TensorRecord, brec: TensorRecord, m: PairMetrics) -> float | None:
    return minmax_kl(
        load_tensor(rrec),
        load_tensor(brec),
        m.min_run,
        m.max_run,  # type: ignore[arg-type]
        m.min_baseline,
        m.max_baseline,
    )  # type: ignore[arg-type]


def _side_task(rec: TensorRecord, start: int, stop: int | None, compiled: bool) -> SideAcc:
    return side_stats(load_tensor(rec), start=start, stop=stop, compiled=compiled)


def _warm_up(records: list[TensorRecord], pairs: set[tuple[str | None, str | None]], side: bool = False) -> None:
    """Compile (or load from numba's cache) the kernel for these dtype names once, before the threads."""
    kernel = compiled_kernel()
    names: dict[str, Any] = {str(d): d for d in kernel.DTYPES} | {"bfloat16": "bfloat16"}
    dtypes = {(names[r], names[b]) for r, b in pairs if r in names and b in names}
    suffixes = {rec.file.suffix.lower() for rec in records if rec.file is not None}
    if suffixes - {".pt"}:
        kernel.warm_up(dtypes, side=side)  # .npy memory maps: read-only
    if ".pt" in suffixes:
        kernel.warm_up(dtypes, side=side, writable=True)


def _share(nbytes: int, rec: TensorRecord, start: int, stop: int | None) -> int:
    if stop is None or not rec.shape:
        return nbytes
    return nbytes * (stop - start) // max(1, math.prod(rec.shape))


def _splits(rec: TensorRecord, workers: int) -> list[tuple[int, int | None]]:
    if rec.file is None or rec.file.suffix.lower() != ".npy" or rec.shape is None:
        return [(0, None)]
    size = math.prod(rec.shape)
    if size <= SPLIT_ELEMENTS:
        return [(0, None)]
    return [(a, b) for a, b in ranges(size, max(workers, 2) * 2)]


Pass = tuple[list[tuple[int, Item]], list[int]]  # (row index, item) and each item's bytes


class _PairWork:
    """One dump pair's comparison as three passes of work items (the metrics, the KL of ranges that were
    identical in a pair that differs elsewhere, MindStudio's min-max KL), so the items of many pairs can run
    together on one runner and be merged back per pair in a fixed order."""

    def __init__(self, run: Dump, base: Dump, options: dict[str, Any], splits: int) -> None:
        self.run, self.base, self.options = run, base, options
        self.with_kl = bool(options.get("compare.kl", True))  # option compare.kl=false skips the KL
        self.matches, self.un_run, self.un_base = match_records(run.records, base.records)
        self.rows: list[Row] = []
        self.pending: list[tuple[int, tuple[TensorRecord, TensorRecord, int, int | None]]] = []
        self.sizes: list[int] = []
        for m in self.matches:
            self._add(m, splits)
        self.merged: dict[int, Accumulator | DumpReadError] = {}

    def _add(self, m: Any, splits: int) -> None:
        r, b = m.run, m.base
        row = Row(
            name=r.name,
            op=r.op,
            role=r.role,
            order=r.order,
            op_type=r.op_type or b.op_type,
            baseline_name=b.name,
            matched_by=m.how,
            dtype_run=r.dtype,
            dtype_baseline=b.dtype,
            shape_run=r.shape,
            shape_baseline=b.shape,
            nbytes=_nbytes(r) + _nbytes(b),
        )
        self.rows.append(row)
        row.run_side = _side_from_stats(r.stats)
        row.base_side = _side_from_stats(b.stats)
        problem = r.problem or b.problem
        if problem:
            row.reason = f"{'run' if r.problem else 'baseline'}: {problem}"
            return
        if r.shape is not None and b.shape is not None and r.shape != b.shape:
            row.reason = f"shape differs: {list(r.shape)} in the run, {list(b.shape)} in the baseline"
            return
        if r.shape is not None and math.prod(r.shape) == 0:
            row.reason = "empty tensor"
            return
        if r.file is not None and b.file is not None:
            row.mode = "tensor"
            parts = _splits(r, splits)
            if parts != _splits(b, splits):
                parts = [(0, None)]
            for start, stop in parts:
                self.pending.append((len(self.rows) - 1, (r, b, start, stop)))
                self.sizes.append(_share(row.nbytes, r, start, stop))
        elif r.stats and b.stats:
            row.mode = "statistics"
        else:
            row.reason = "no tensor data or statistics on both sides"

    def metrics_pass(self, compiled: bool) -> Pass:
        self.compiled = compiled
        items = [
            (idx, partial(_pair_task, r, b, start, stop, self.with_kl, compiled))
            for idx, (r, b, start, stop) in self.pending
        ]
        return items, self.sizes

    def kl_pass(self, results: list[Any]) -> Pass:
        """Merge the metrics pass; the items of the second pass over identical ranges of differing pairs."""
        # ranges identical throughout hold no KL sums; they need them when another range of the pair differs
        no_kl = [isinstance(res, Accumulator) and res.r.n > 0 and not (res.lse_sb or res.lse_sr) for res in results]
        merged = self.merged
        for (idx, _), res in zip(self.pending, results):
            if isinstance(res, DumpReadError):
                merged[idx] = res
            elif idx not in merged:
                merged[idx] = res
            elif isinstance(merged[idx], Accumulator):
                merged[idx].merge(res)  # type: ignore[union-attr]
        items: list[tuple[int, Item]] = []
        if self.with_kl:  # (identical pairs: KL 0)
            for (idx, (_, _, start, stop)), missing in zip(self.pending, no_kl):
                acc = merged.get(idx)
                if missing and isinstance(acc, Accumulator) and (acc.max_abs_d > 0 or acc.nonfinite_mismatch):
                    m = self.matches[idx]
                    items.append((idx, partial(_kl_task, m.run, m.base, start, stop, acc.r.max, acc.b.max)))
        return items, [1] * len(items)

    def minmax_pass(self, kl_items: list[tuple[int, Item]], results: list[Any]) -> Pass:
        """Merge the KL pass, judge every row; the items of MindStudio's min-max KL over differing pairs."""
        for (idx, _), res in zip(kl_items, results):
            acc = self.merged.get(idx)
            if isinstance(acc, Accumulator) and isinstance(res, Accumulator):
                acc.merge_kl(res)
        self._judge()
        self.kl_pairs: list[tuple[int, PairMetrics]] = []
        if self.with_kl:
            self.kl_pairs = [
                (idx, row.metrics)
                for idx, row in enumerate(self.rows)
                if row.metrics is not None
                and not row.metrics.identical
                and row.metrics.min_run is not None
                and row.metrics.min_baseline is not None
            ]
        items = [
            (idx, partial(_minmax_kl_task, self.matches[idx].run, self.matches[idx].base, m))
            for idx, m in self.kl_pairs
        ]
        return items, [self.rows[i].nbytes for i, _ in self.kl_pairs]

    def _judge(self) -> None:
        self.fallbacks: dict[str, int] = {}
        for idx, row in enumerate(self.rows):
            tol = tolerance_for(row.dtype_run, row.dtype_baseline, self.options)
            if row.mode == "tensor":
                res = self.merged.get(idx)
                if isinstance(res, DumpReadError):
                    m = self.matches[idx]
                    if m.run.stats and m.base.stats:  # e.g. .pt without torch: fall back to the statistics
                        row.mode = "statistics"
                        row.reason = f"{res}; "
                        self.fallbacks[str(res)] = self.fallbacks.get(str(res), 0) + 1
                    else:
                        row.mode = "none"
                        row.reason = str(res)
                        continue
                elif isinstance(res, Accumulator):
                    row.metrics = res.result()
                    row.verdict, row.reason = judge(row.metrics, tol)
                    if "complex" in f"{row.dtype_run} {row.dtype_baseline}":  # the metrics saw the real parts only
                        m = self.matches[idx]
                        row.verdict, row.reason = _judge_imaginary(m.run, m.base, row, tol)
                    row.run_side = _side_from_acc(res.r)
                    row.run_side.nan, row.run_side.inf = res.r.nan, res.r.inf
                    row.base_side = _side_from_acc(res.b)
                    continue
            if row.mode == "statistics":
                m = self.matches[idx]
                verdict, why, worst = judge_stats(m.run.stats or {}, m.base.stats or {}, tol)
                row.verdict, row.stat_rel_diff = verdict, worst
                row.reason = row.reason + why

    def finish(self, results: list[Any]) -> Comparison:
        for (_, m), res in zip(self.kl_pairs, results):
            if not isinstance(res, DumpReadError):
                m.kl_div = res
        run, base = self.run, self.base
        mode = "tensor" if any(r.mode == "tensor" for r in self.rows) else "statistics"
        problems = [("run", r.rel_file or r.name, r.problem) for r in run.records if r.problem]
        problems += [("baseline", r.rel_file or r.name, r.problem) for r in base.records if r.problem]
        problems += [("run", f, why) for f, why in run.problems] + [("baseline", f, why) for f, why in base.problems]
        return Comparison(
            rows=self.rows,
            unmatched_run=self.un_run,
            unmatched_baseline=self.un_base,
            mode=mode,
            problems=problems,
            fallbacks=self.fallbacks,
            kernel="compiled" if self.compiled else "numpy",
        )


def _run_pass(runner: Runner, passes: list[Pass], progress: Callable[[int], None] | None = None) -> list[list[Any]]:
    """Every pair's items of one pass on the runner at once; the results split back per pair."""
    items = [item for its, _ in passes for _, item in its]
    sizes = [n for _, ns in passes for n in ns]
    results = runner.run(items, sizes, progress) if items else []
    out, at = [], 0
    for its, _ in passes:
        out.append(results[at : at + len(its)])
        at += len(its)
    return out


def compare_many(
    pairs: list[tuple[Dump, Dump]],
    options: dict[str, Any] | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    runner: Runner | None = None,
) -> list[Comparison]:
    """Compare many dump pairs (the steps and ranks of a tree) with one runner: each pass sends the items of
    all pairs together. ``workers`` sizes the split of big tensors (default: the runner's parallelism): the
    same ``workers`` gives the same results on threads and on a cluster."""
    opts = options or {}
    kernel_option = str(opts.get("compare.kernel", "auto"))
    use_compiled(kernel_option, 0)  # a bad value or a missing numba fails before any work
    runner = runner or ThreadRunner(workers or default_workers())
    splits = workers or runner.parallelism
    works = [_PairWork(run, base, opts, splits) for run, base in pairs]
    total = sum(sum(w.sizes) for w in works)
    compiled = use_compiled(kernel_option, total)
    if compiled and runner.in_process:
        pending = [p for w in works for _, p in w.pending]
        _warm_up([x for r, b, _, _ in pending for x in (r, b)], {(r.dtype, b.dtype) for r, b, _, _ in pending})
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        if progress:
            progress(done[0], total)

    first = [w.metrics_pass(compiled) for w in works]
    firsts = _run_pass(runner, first, tick if progress else None)
    second = [w.kl_pass(res) for w, res in zip(works, firsts)]
    seconds = _run_pass(runner, second)
    third = [w.minmax_pass(its, res) for w, (its, _), res in zip(works, second, seconds)]
    thirds = _run_pass(runner, third)
    return [w.finish(res) for w, res in zip(works, thirds)]


def compare_dumps(
    run: Dump,
    base: Dump,
    options: dict[str, Any] | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    runner: Runner | None = None,
) -> Comparison:
    """Match the two dumps and compute every pair's metrics and verdict."""
    return compare_many([(run, base)], options, workers, progress, runner)[0]


def scan_dump(
    run: Dump, workers: int | None = None, options: dict[str, Any] | None = None, runner: Runner | None = None
) -> list[Row]:
    """Run-side statistics of every tensor of one dump (no baseline): NaN/Inf, range, integer share.

    ``options``: compare.kernel (auto|compiled|numpy) as for ``compare_dumps``.
    """
    runner = runner or ThreadRunner(workers or default_workers())
    workers = workers or runner.parallelism
    kernel_option = str((options or {}).get("compare.kernel", "auto"))
    use_compiled(kernel_option, 0)
    rows: list[Row] = []
    pending: list[tuple[int, tuple[TensorRecord, int, int | None]]] = []
    sizes: list[int] = []
    for r in sorted(run.records, key=lambda x: x.order):
        row = Row(
            name=r.name,
            op=r.op,
            role=r.role,
            order=r.order,
            op_type=r.op_type,
            dtype_run=r.dtype,
            shape_run=r.shape,
            nbytes=_nbytes(r),
        )
        row.run_side = _side_from_stats(r.stats)
        rows.append(row)
        if r.problem or r.file is None:
            row.reason = r.problem or "statistics only"
            continue
        for start, stop in _splits(r, workers):
            pending.append((len(rows) - 1, (r, start, stop)))
            sizes.append(_share(row.nbytes, r, start, stop))
    compiled = use_compiled(kernel_option, sum(sizes))
    if compiled and runner.in_process:
        _warm_up([r for _, (r, _, _) in pending], {(r.dtype, r.dtype) for _, (r, _, _) in pending}, side=True)
    items = [(idx, partial(_side_task, r, start, stop, compiled)) for idx, (r, start, stop) in pending]
    results = runner.run([item for _, item in items], sizes) if items else []
    merged: dict[int, SideAcc | DumpReadError] = {}
    for (idx, _), res in zip(items, results):
        cur = merged.get(idx)
        if isinstance(res, DumpReadError) or cur is None:
            merged[idx] = res
        elif isinstance(cur, SideAcc) and isinstance(res, SideAcc):
            cur.merge(res)
    for idx, res in merged.items():
        if isinstance(res, SideAcc):
            rows[idx].run_side = _side_from_acc(res)
            rows[idx].mode = "tensor"
        else:
            rows[idx].reason = str(res)
    return rows
