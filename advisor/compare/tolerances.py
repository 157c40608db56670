"""Tolerances per dtype: metrics -> pass / warning / error.

A pair is judged at the tolerance of the *baseline's* dtype: the benchmark
defines the accuracy expected, so a run that computes an operator in bf16
where the baseline used fp32 deviates at that operator (the dtype change is
reported beside the verdict). Defaults, chosen from measured error sizes:

========== ================= ================= ======================
dtype      euclid_rel_dist   scaled_max_err    statistics (norm/max)
           warn / error      warn / error      warn / error
========== ================= ================= ======================
float64    1e-10 / 1e-8      1e-9 / 1e-7       1e-10 / 1e-8
float32    1e-5  / 5e-5      1e-4 / 1e-3       1e-5  / 5e-5
float16    2e-3  / 1e-2      1e-2 / 5e-2       2e-3  / 1e-2
bfloat16   1e-2  / 5e-2      5e-2 / 2e-1       1e-2  / 5e-2
========== ================= ================= ======================

For scale: float32 reduction-order noise (a matmul summed in another order)
is ~1.5e-7 in euclid_rel_dist; GELU's tanh approximation instead of the exact
erf form is ~1e-4; LayerNorm eps 1e-3 instead of 1e-5 on unit-variance
inputs ~5e-4; a softmax computed in float16 ~2e-4..1e-3. Any NaN in the
run's tensor, or an Inf where the baseline has none, is an error whatever the
numbers (Infs equal to the baseline's at the same positions, such as a -inf
attention mask, are equal values and do not count); so is a cosine below
``cosine_error``.

Override per run with options such as ``{"compare.float32.rel_dist_error": 1e-3}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Literal

from advisor.compare.accumulator import PairMetrics

Verdict = Literal["pass", "warning", "error"]


@dataclass(frozen=True)
class Tolerance:
    rel_dist_warn: float
    rel_dist_error: float
    scaled_max_warn: float
    scaled_max_error: float
    stat_warn: float
    stat_error: float
    cosine_error: float = 0.99


DEFAULTS: dict[str, Tolerance] = {
    "float64": Tolerance(1e-10, 1e-8, 1e-9, 1e-7, 1e-10, 1e-8, 0.999999),
    "float32": Tolerance(1e-5, 5e-5, 1e-4, 1e-3, 1e-5, 5e-5, 0.9999),
    "float16": Tolerance(2e-3, 1e-2, 1e-2, 5e-2, 2e-3, 1e-2, 0.999),
    "bfloat16": Tolerance(1e-2, 5e-2, 5e-2, 2e-1, 1e-2, 5e-2, 0.99),
}
_RANK = {"bfloat16": 0, "float16": 1, "float32": 2, "float64": 3}
_ALIASES = {
    "half": "float16",
    "fp16": "float16",
    "bf16": "bfloat16",
    "float": "float32",
    "fp32": "float32",
    "double": "float64",
    "fp64": "float64",
}


def normalise_dtype(dtype: str | None) -> str | None:
    if dtype is None:
        return None
    d = dtype.replace("torch.", "").replace("mindspore.", "").lower()
    return _ALIASES.get(d, d)


def tolerance_for(
    run_dtype: str | None, baseline_dtype: str | None, overrides: dict[str, Any] | None = None
) -> Tolerance:
    """The tolerance of the baseline's dtype (else the run's; float32 when neither is a known float)."""
    known = [d for d in (normalise_dtype(baseline_dtype), normalise_dtype(run_dtype)) if d in _RANK]
    name = known[0] if known else "float32"
    tol = DEFAULTS[name]
    changes = {}
    for key, value in (overrides or {}).items():
        parts = key.split(".")
        if (
            len(parts) == 3
            and parts[0] == "compare"
            and normalise_dtype(parts[1]) == name
            and parts[2] in Tolerance.__dataclass_fields__
            and _is_number(value)
        ):
            changes[parts[2]] = float(value)
    return replace(tol, **changes) if changes else tol


#: the comparison's options that are not tolerances
OPTIONS = ("compare.kl", "compare.kernel", "compare.baseline_kind")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def option_problems(options: dict[str, Any]) -> list[str]:
    """What is wrong with the ``compare.*`` options (tolerance overrides): misspelt names, non-numbers.

    Tolerances are ``compare.DTYPE.NAME`` with DTYPE one of float64, float32, float16, bfloat16 (or an
    alias: fp16, bf16, half, ...) and NAME a field of ``Tolerance``.
    """
    import difflib

    names = list(Tolerance.__dataclass_fields__)
    out = []
    for key, value in options.items():
        if key == "compare.baseline_kind" and str(value).lower() not in ("auto", "rerun", "port"):
            out.append(f"'{key}' must be auto, rerun or port, got {value!r}")
        if not key.startswith("compare.") or key in OPTIONS:
            continue
        parts = key.split(".")
        if len(parts) != 3:
            close = difflib.get_close_matches(key, OPTIONS, n=1)
            out.append(f"'{key}' is not compare.DTYPE.NAME" + (f" (did you mean '{close[0]}'?)" if close else ""))
        elif normalise_dtype(parts[1]) not in DEFAULTS:
            out.append(f"'{key}': unknown dtype '{parts[1]}' (one of {', '.join(DEFAULTS)})")
        elif parts[2] not in names:
            close = difflib.get_close_matches(parts[2], names, n=1)
            out.append(
                f"'{key}': unknown tolerance '{parts[2]}' (one of {', '.join(names)})"
                + (f"; did you mean '{close[0]}'?" if close else "")
            )
        elif not _is_number(value):
            out.append(f"'{key}' must be a finite number, got {value!r}")
    return out


def judge(m: PairMetrics, tol: Tolerance) -> tuple[Verdict, str]:
    """Verdict and the reason (the metric that decided, with its threshold)."""
    if m.nan_run or m.nonfinite_mismatch:  # a NaN never passes, nor an Inf the baseline does not have
        return (
            "error",
            f"NaN/Inf in the run ({m.nan_run} NaN, {m.inf_run} Inf; baseline {m.nan_baseline}/{m.inf_baseline})",
        )
    if m.nan_baseline:
        return "warning", f"NaN in the baseline ({m.nan_baseline} NaN)"
    # Infs at the very same positions on both sides (a -inf attention mask) are equal values: judge the rest
    if m.compared == 0:
        return "pass", "empty tensor"
    if m.identical:
        return "pass", "identical"
    rd, sm = m.euclid_rel_dist or 0.0, m.scaled_max_err or 0.0
    if m.cosine is None:  # exactly one side all zero
        side = "run" if not m.norm_run else "baseline"
        return "error", f"cosine undefined: the {side}'s tensor is all zero, the other's is not"
    if m.cosine < tol.cosine_error:
        return "error", f"cosine {m.cosine:.6g} < {tol.cosine_error:g}"
    if rd > tol.rel_dist_error:
        return "error", f"euclid_rel_dist {rd:.3g} > {tol.rel_dist_error:g}"
    if sm > tol.scaled_max_error:
        return "error", f"scaled_max_err {sm:.3g} > {tol.scaled_max_error:g}"
    if rd > tol.rel_dist_warn:
        return "warning", f"euclid_rel_dist {rd:.3g} > {tol.rel_dist_warn:g}"
    if sm > tol.scaled_max_warn:
        return "warning", f"scaled_max_err {sm:.3g} > {tol.scaled_max_warn:g}"
    return "pass", f"euclid_rel_dist {rd:.3g} <= {tol.rel_dist_warn:g}"


def stat_diffs(run: dict[str, float], base: dict[str, float]) -> dict[str, float]:
    """Statistics mode: relative differences of Norm (to the baseline norm) and of Max/Min/Mean
    (to the baseline's scale max(|Max|, |Min|))."""
    out: dict[str, float] = {}
    scale = max(abs(base.get("Max", 0.0)), abs(base.get("Min", 0.0)))
    for key in ("Max", "Min", "Mean"):
        if key in run and key in base:
            diff = abs(run[key] - base[key])
            out[key] = diff / scale if scale else (0.0 if diff == 0 else math.inf)
            if math.isnan(diff):
                out[key] = math.nan
    if "Norm" in run and "Norm" in base:
        diff = abs(run["Norm"] - base["Norm"])
        out["Norm"] = diff / abs(base["Norm"]) if base["Norm"] else (0.0 if diff == 0 else math.inf)
        if math.isnan(diff):
            out["Norm"] = math.nan
    return out


def judge_stats(run: dict[str, float], base: dict[str, float], tol: Tolerance) -> tuple[Verdict, str, float | None]:
    """Verdict from recorded statistics only; returns the largest relative difference too."""
    if any(not math.isfinite(v) for v in run.values()):
        return "error", "NaN/Inf in the run's statistics", None
    diffs = stat_diffs(run, base)
    if not diffs:
        return "pass", "no statistics to compare", None
    worst_key = max(diffs, key=lambda k: diffs[k] if math.isfinite(diffs[k]) else math.inf)
    worst = diffs[worst_key]
    if not math.isfinite(worst):
        return "warning", f"{worst_key} not finite in the baseline", None
    if worst > tol.stat_error:
        return "error", f"{worst_key} relative difference {worst:.3g} > {tol.stat_error:g}", worst
    if worst > tol.stat_warn:
        return "warning", f"{worst_key} relative difference {worst:.3g} > {tol.stat_warn:g}", worst
    if worst == 0:
        return "pass", "identical statistics", worst
    return "pass", f"{worst_key} relative difference {worst:.3g} <= {tol.stat_warn:g}", worst
