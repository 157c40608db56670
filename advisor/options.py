"""The checks of what a user passes: extractor thresholds (``--threshold``) no extractor reads or with a bad
value, rule parameters (``--param``) no rule declares. Each problem is one warning line."""

from __future__ import annotations

import math
from typing import Any

from advisor.rulebase.schema import Rule


def unknown_options(options: dict[str, Any]) -> list[str]:
    """Warnings for extractor thresholds no extractor reads (a typo would otherwise pass silently)."""
    if not options:
        return []  # nothing to check (and the comparison's tolerance module stays unimported)
    from advisor.extract.options import known_options

    exact = set(known_options())
    from advisor.compare.tolerances import option_problems

    out = [f"advisor: warning: threshold {problem}; ignored" for problem in option_problems(options)]
    for key in options:
        if key in exact or key.startswith("compare."):
            continue
        import difflib

        close = difflib.get_close_matches(key, sorted(exact), n=1)
        out.append(
            f"advisor: warning: threshold '{key}' is not read by any extractor"
            + (f" (did you mean '{close[0]}'?)" if close else "")
        )
    return out


def param_problems(rules: list[Rule], params: dict[str, Any]) -> list[str]:
    """Warnings for --param overrides that no rule reads or that have the wrong type (did-you-mean).

    Overrides of the wrong type are removed from ``params`` (the rule keeps its default).
    """
    import difflib

    by_id = {r.id: r for r in rules}
    out = []
    for key, value in list(params.items()):
        rid, _, name = key.rpartition(".")
        if rid and rid not in by_id:
            close = difflib.get_close_matches(rid, sorted(by_id), n=1)
            out.append(
                f"advisor: warning: --param '{key}': no rule '{rid}'"
                + (f" (did you mean '{close[0]}'?)" if close else "")
            )
            continue
        owners = [by_id[rid]] if rid else [r for r in rules if name in r.params]
        if not owners or name not in owners[0].params:
            known = sorted(by_id[rid].params) if rid else sorted({p for r in rules for p in r.params})
            close = difflib.get_close_matches(name, known, n=1)
            where = f"rule '{rid}' has no param '{name}'" if rid else f"no rule has a param '{name}'"
            hint = (
                f" (did you mean '{close[0]}'?)"
                if close
                else f" (its params: {', '.join(known) or 'none'})"
                if rid
                else " (advisor rules show ID lists a rule's params)"
            )
            out.append(f"advisor: warning: --param '{key}': {where}{hint}")
            continue
        default = owners[0].params[name]
        numeric = isinstance(default, (int, float)) and not isinstance(default, bool)
        if numeric and not (isinstance(value, (int, float)) and not isinstance(value, bool)):
            out.append(f"advisor: warning: --param '{key}' needs a number (default {default}), got {value!r}; ignored")
            del params[key]
        elif numeric and not math.isfinite(value):  # NaN/1e999/-Infinity: no comparison with them means anything
            out.append(
                f"advisor: warning: --param '{key}' needs a finite number (default {default}), got {value}; ignored"
            )
            del params[key]
    return out


def threshold_problems(options: dict[str, Any]) -> list[str]:
    """Warnings for numeric extractor thresholds given a value that is not a finite number; those
    overrides are removed from ``options`` (the documented default stays)."""
    from dataclasses import fields

    from advisor.extract.curves import CurveThresholds

    numeric = {f"loss_curve.{f.name}" for f in fields(CurveThresholds)} | {"training_dynamics.max_records"}
    out = []
    for key in [k for k in options if k in numeric]:
        value = options[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            out.append(f"advisor: warning: threshold '{key}' needs a finite number, got {value!r}; ignored")
            del options[key]
    return out
