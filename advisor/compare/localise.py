"""Where is the error born? Source operators versus operators that only inherit it.

Operators are taken in execution order, each with its input and output
tensors (``Row.role``). An operator *deviates* when one of its compared
outputs has a verdict other than pass.

- The **source** is the first deviating operator whose compared inputs all
  pass (an operator with no compared input counts as having matching inputs;
  a backward operator also needs its forward call's inputs and outputs to
  match, since it reads the tensors saved by that call).
  Later deviating operators whose compared inputs also all pass are
  *independent sources* (a second, unrelated problem); the other deviating
  operators are *propagated*: they only inherit the error through their
  inputs. A later deviating operator with no compared input (dumps of outputs
  only, as ``advisor.capture`` writes them) is presumed propagated: nothing
  shows that its inputs are clean.
- **nonfinite source**: the first operator whose output holds NaN/Inf while
  its inputs are all finite (division by zero, log of 0, overflow); it is
  *absorbed* when later operators exist and none of them outputs NaN/Inf (a -inf attention mask
  that the softmax turns into zeros is by design).
- **fp16 overflow**: the first operator whose finite output exceeds the
  float16 range (|x| > 65504) while its inputs stay within it: in float16 it
  would be Inf.
- **integer-valued output**: the first float operator whose nonzero outputs
  are (almost) all whole numbers while one of its float inputs' are not, or
  (with a baseline) whose output is all zeros where the baseline's is not
  (``sum // n`` truncating everything to 0)
  (``//`` where ``/`` was meant, a cast to int and back); when a baseline
  exists, its output must not be integer-valued too.
- **underflow**: the first operator whose output, computed in float16/bfloat16, is all zero where
  the baseline's is nonzero but smaller than that type's smallest normal value (flushed to zero);
  such an output is not counted as integer-valued truncation.
- **first difference**: the first operator whose outputs are not bit-identical
  (random-error detection compares two runs of one configuration).

A module that encloses others (``attn.forward`` around ``attn.q.forward`` ...
in a dump of module calls) is judged when its output is produced, after the
last operator inside it: its inputs are recorded first, but an error inside
it is born in one of its children, which must be found first.

These are rules of the data flow, not causes: the rule base names causes.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field

from advisor.compare.engine import Row

FP16_MAX = 65504.0
#: an operator whose float output's largest |value| is at least this many times its float inputs' largest grows
#: activations by orders of magnitude in one step (below the overflow limit, a precursor of it)
GROWTH_FACTOR = 1000.0
#: inputs whose largest |value| is below this are too close to zero for a growth ratio to mean anything
GROWTH_INPUT_FLOOR = 1e-3
#: smallest normal value of the half-precision types: below it a value is subnormal, and kernels that flush
#: subnormals to zero (the usual mode on GPUs and NPUs) return 0 (IEEE 754 binary16; bfloat16 keeps float32's range)
HALF_MIN_NORMAL = {"float16": 6.103515625e-05, "bfloat16": 1.1754943508222875e-38}
#: share of whole-number elements above which a float output counts as integer-valued
INTEGER_RATIO = 0.99
#: share below which a float input counts as not integer-valued
NON_INTEGER_INPUT_RATIO = 0.5
#: operator types or names of normalising operators (affine per feature: (x - mean) / std)
_NORMALISER = re.compile(r"norm|standardi[sz]|z.?score", re.IGNORECASE)


@dataclass
class OpView:
    op: str
    order: int
    op_type: str | None
    inputs: list[Row] = field(default_factory=list)
    outputs: list[Row] = field(default_factory=list)

    @property
    def deviates(self) -> bool:
        return any(r.verdict in ("warning", "error") for r in self.outputs)

    @property
    def verdict(self) -> str:
        verdicts = {r.verdict for r in self.outputs}
        for v in ("error", "warning", "pass"):
            if v in verdicts:
                return v
        return "skipped"

    @property
    def inputs_match(self) -> bool:
        return all(r.verdict in ("pass", "skipped") for r in self.inputs)

    @property
    def inputs_compared(self) -> bool:
        """Whether some input was compared (dumps of outputs only have none)."""
        return any(r.verdict != "skipped" for r in self.inputs)

    def worst_output(self) -> Row | None:
        rank = {"error": 3, "warning": 2, "pass": 1, "skipped": 0}
        outs = [r for r in self.outputs if r.verdict != "skipped"] or self.outputs
        if not outs:
            return None
        return max(
            outs,
            key=lambda r: (
                rank[r.verdict],
                (r.metrics.euclid_rel_dist or 0.0) if r.metrics else (r.stat_rel_diff or 0.0),
            ),
        )


@dataclass
class Localisation:
    ops: list[OpView]
    source: OpView | None = None
    independent_sources: list[OpView] = field(default_factory=list)
    propagated: list[OpView] = field(default_factory=list)
    first_difference: OpView | None = None
    differing_ops: int = 0
    nonfinite_source: OpView | None = None
    nonfinite_ops: int = 0
    #: no operator after the nonfinite source outputs NaN/Inf (e.g. a -inf attention mask that softmax absorbs)
    nonfinite_absorbed: bool = False
    fp16_overflow: OpView | None = None
    #: the first operator whose finite float output is GROWTH_FACTOR x its float inputs or more, within fp16's range
    growth: OpView | None = None
    growth_ratio: float | None = None
    integer_valued: OpView | None = None
    #: the first operator whose half-precision output is all zero where the baseline's is nonzero but below the
    #: half type's smallest normal value: underflow, not truncation
    underflow: OpView | None = None
    first_dtype_change: OpView | None = None


def group_ops(rows: list[Row]) -> list[OpView]:
    ops: dict[str, OpView] = {}
    for r in sorted(rows, key=lambda r: r.order):
        view = ops.setdefault(r.op, OpView(op=r.op, order=r.order, op_type=r.op_type))
        (view.inputs if r.role == "input" else view.outputs).append(r)
    return sorted(ops.values(), key=lambda v: v.order)


def _finite_known(rows: list[Row]) -> bool:
    return all(r.run_side.has_nonfinite is False for r in rows)


def _growth(v: OpView) -> float | None:
    """Output / input largest |value| of an operator that grows its activations by GROWTH_FACTOR or more while
    staying finite and within fp16's range (None otherwise, or when its float inputs are not known)."""
    ins = [r.run_side.abs_max for r in v.inputs if r.is_float and r.run_side.abs_max is not None]
    outs = [r.run_side.abs_max for r in v.outputs if r.is_float and r.run_side.abs_max is not None]
    if not ins or not outs or any(r.run_side.has_nonfinite for r in v.outputs):
        return None
    x_in, x_out = max(ins), max(outs)
    if x_in < GROWTH_INPUT_FLOOR or x_out > FP16_MAX:
        return None
    ratio = x_out / x_in
    return ratio if ratio >= GROWTH_FACTOR else None


def _within_fp16(rows: list[Row]) -> bool:
    return all((r.run_side.abs_max or 0.0) <= FP16_MAX for r in rows)


def _is_integer_valued(r: Row) -> bool:
    s = r.run_side
    return r.is_float and s.integer_ratio is not None and s.integer_ratio >= INTEGER_RATIO


def half_dtype(v: OpView, r: Row) -> str | None:
    """The half-precision type the operator computes in on the run's side (its output's, else an input's)."""
    from advisor.compare.tolerances import normalise_dtype

    for d in [r.dtype_run] + [i.dtype_run for i in v.inputs]:
        n = normalise_dtype(d)
        if n in HALF_MIN_NORMAL:
            return n
    return None


def flushed_to_zero(v: OpView, r: Row) -> bool:
    """Output all zero in half precision where the baseline's is nonzero yet below that type's smallest normal."""
    if not (r.is_float and r.run_side.abs_max == 0.0 and r.run_side.has_nonfinite is False):
        return False
    base = r.base_side.abs_max or 0.0
    dt = half_dtype(v, r)
    return dt is not None and 0.0 < base < HALF_MIN_NORMAL[dt]


def _span(r: Row) -> float | None:
    s = r.run_side
    return s.max - s.min if s.min is not None and s.max is not None else None


def normaliser_narrows_whole_numbers(v: OpView) -> bool:
    """A normalising operator (by its type or name) maps whole-number float inputs onto a narrower range of
    whole numbers. Normalising is affine per feature, (x - mean) / std; an affine map that sends consecutive
    whole numbers to whole numbers has a whole-number slope, so it cannot narrow their range: the operator
    rounded or truncated (floor division, an integer cast)."""
    if not _NORMALISER.search(f"{v.op_type or ''} {v.op}"):
        return False
    ins = [r for r in v.inputs if r.is_float and r.run_side.integer_ratio is not None]
    if not ins or not all(r.run_side.integer_ratio >= INTEGER_RATIO for r in ins):  # type: ignore[operator]
        return False
    in_span = max((_span(r) or 0.0) for r in ins)
    return any(
        _is_integer_valued(r) and 0.0 < (_span(r) or 0.0) < in_span and r.run_side.has_nonfinite is False
        for r in v.outputs
    )


def _truncates(v: OpView, has_baseline: bool) -> bool:
    """Float outputs of whole numbers (or all zeros, against a nonzero baseline) from non-integer inputs, or a
    normaliser that narrows whole-number inputs to fewer whole numbers."""
    float_inputs = [r for r in v.inputs if r.is_float and r.run_side.integer_ratio is not None]
    if not any(r.run_side.integer_ratio < NON_INTEGER_INPUT_RATIO for r in float_inputs):  # type: ignore[operator]
        return normaliser_narrows_whole_numbers(v) and not (
            has_baseline and any((r.base_side.integer_ratio or 0.0) >= INTEGER_RATIO for r in v.outputs)
        )
    for r in v.outputs:
        base_int = has_baseline and (r.base_side.integer_ratio or 0.0) >= INTEGER_RATIO
        if _is_integer_valued(r) and not base_int:
            return True
        if (
            has_baseline
            and r.is_float
            and r.run_side.abs_max == 0.0
            and r.run_side.has_nonfinite is False
            and (r.base_side.abs_max or 0.0) > 0.0
            and not flushed_to_zero(v, r)
        ):
            return True
    return False


def forward_of(op: str) -> str | None:
    """``Functional.gelu.0.backward`` -> ``Functional.gelu.0.forward`` (None for a forward op)."""
    parts = op.split(".")
    if "backward" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("backward")
    return ".".join(parts[:i] + ["forward"] + parts[i + 1 :])


def _forward_clean(v: OpView, by_name: dict[str, OpView]) -> bool:
    """A backward operator also reads its forward call's saved tensors: they must match too."""
    fwd = forward_of(v.op)
    if fwd is None or fwd not in by_name:
        return True
    f = by_name[fwd]
    return f.inputs_match and not f.deviates


def _module_prefix(op: str) -> str | None:
    """``attn.forward`` -> ``attn``; ``Functional.gelu.0.forward`` -> ``Functional.gelu.0`` (None: no direction)."""
    for suffix in (".forward", ".backward"):
        if op.endswith(suffix):
            return op[: -len(suffix)]
    return None


def judging_order(ops: list[OpView], inner_of: dict[str, list[str]] | None = None) -> list[OpView]:
    """Execution order, with each enclosing module moved after the last operator inside it
    (``inner_of`` receives, for each enclosing module, the operators inside it)."""
    import bisect

    names = sorted(v.op for v in ops)
    order = {v.op: v.order for v in ops}
    end: dict[str, float] = {}
    for v in ops:
        prefix = _module_prefix(v.op)
        last = float(v.order)
        if prefix is not None:
            lo = bisect.bisect_left(names, prefix + ".")
            hi = bisect.bisect_left(names, prefix + "/")  # '/' follows '.' in code-point order
            inner = [order[n] for n in names[lo:hi] if n not in (prefix + ".forward", prefix + ".backward")]
            if inner and max(inner) > v.order:
                last = max(inner) + 0.5
                if inner_of is not None:
                    inner_of[v.op] = [n for n in names[lo:hi] if n not in (prefix + ".forward", prefix + ".backward")]
        end[v.op] = last
    return sorted(ops, key=lambda v: (end[v.op], v.order))


def localise(rows: list[Row], has_baseline: bool = True) -> Localisation:
    ops = group_ops(rows)
    loc = Localisation(ops=ops)
    by_name = {v.op: v for v in ops}
    inner_of: dict[str, list[str]] = {}
    for v in judging_order(ops, inner_of):
        if has_baseline:
            if v.deviates:
                clean = (
                    v.inputs_match
                    and _forward_clean(v, by_name)
                    and not any(by_name[n].deviates for n in inner_of.get(v.op, ()))
                )
                if clean and loc.source is None:
                    loc.source = v
                elif clean and v.inputs_compared:
                    loc.independent_sources.append(v)
                else:  # inputs deviate, or unknown after an earlier source: presumed inherited
                    loc.propagated.append(v)
            if any(r.metrics is not None and not r.metrics.identical for r in v.outputs) or any(
                r.metrics is None and r.stat_rel_diff for r in v.outputs
            ):
                loc.differing_ops += 1
                if loc.first_difference is None:
                    loc.first_difference = v
            if loc.first_dtype_change is None and any(r.dtype_changed for r in v.outputs):
                loc.first_dtype_change = v
        outs_nonfinite = any(r.run_side.has_nonfinite for r in v.outputs)
        if outs_nonfinite:
            loc.nonfinite_ops += 1
            if loc.nonfinite_source is None and _finite_known(v.inputs):
                loc.nonfinite_source = v
        if (
            loc.fp16_overflow is None
            and v.outputs
            and any(r.is_float and (r.run_side.abs_max or 0.0) > FP16_MAX for r in v.outputs)
            and _within_fp16(v.inputs)
        ):
            loc.fp16_overflow = v
        if loc.growth is None:
            ratio = _growth(v)
            if ratio is not None:
                loc.growth, loc.growth_ratio = v, ratio
        if loc.integer_valued is None and _truncates(v, has_baseline):
            loc.integer_valued = v
        if loc.underflow is None and has_baseline and any(flushed_to_zero(v, r) for r in v.outputs):
            loc.underflow = v
    if loc.nonfinite_source is not None:
        later = [v for v in ops if v.order > loc.nonfinite_source.order and v.outputs]
        loc.nonfinite_absorbed = bool(later) and not any(r.run_side.has_nonfinite for v in later for r in v.outputs)
    for v in ([loc.source] if loc.source else []) + loc.independent_sources:
        for r in v.outputs:
            r.position = "source"
    for v in loc.propagated:
        for r in v.outputs:
            r.position = "propagated"
    return loc
