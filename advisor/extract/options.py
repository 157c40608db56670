"""The extractors' options, typed: each group of ``--threshold NAME=VALUE`` settings is a dataclass whose fields
are the names after the group's prefix, with their defaults and their help. ``advisor/options.py`` derives the
names a user may set (and the did-you-mean of a typo) from ``OPTION_GROUPS``; an extractor reads its group with
``read_group(Group, pair.options)``. Objects that are not settings (a Dask runner a sweep shares) are passed as
what they are (``RunPair.runner``), not through the option dict.

The loss-curve thresholds (``loss_curve.*``) are ``advisor.extract.curves.CurveThresholds``; the comparison's
tolerances (``compare.<dtype>.<metric>``) are checked by ``advisor.compare.tolerances``.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from advisor.extract.curves import CurveThresholds
from advisor.read.tensors import MAX_RECORDS


def _help(text: str) -> dict[str, str]:
    return {"help": text}


@dataclass(frozen=True)
class BenchmarkOptions:
    """benchmark.*: the run against its baseline as a whole (extract/benchmark_gap.py)."""

    PREFIX: ClassVar[str] = "benchmark"
    score_band: float = field(
        default=0.02, metadata=_help("a final score difference counts beyond this share of the baseline's score")
    )


@dataclass(frozen=True)
class DynamicsOptions:
    """training_dynamics.*: tensor statistics over the steps (extract/dynamics.py)."""

    PREFIX: ClassVar[str] = "training_dynamics"
    max_records: int = field(default=MAX_RECORDS, metadata=_help("records of tensors.jsonl read, at most"))


@dataclass(frozen=True)
class OpCompareOptions:
    """op_compare.*: the operator-by-operator comparison of a diagnosis (extract/op_compare.py)."""

    PREFIX: ClassVar[str] = "op_compare"
    same_config: bool | None = field(
        default=None, metadata=_help("true: the baseline is a rerun of the same configuration; false: a port")
    )
    workers: int | None = field(default=None, metadata=_help("threads comparing tensors (default: the CPUs)"))
    scheduler: str | None = field(default=None, metadata=_help("a Dask scheduler address, or 'local'"))


@dataclass(frozen=True)
class CompareOptions:
    """compare.*: how tensors are compared (advisor/compare/), beside the tolerances compare.<dtype>.<metric>."""

    PREFIX: ClassVar[str] = "compare"
    kl: bool = field(default=True, metadata=_help("false skips the KL divergence of each pair"))
    kernel: str = field(default="auto", metadata=_help("auto, compiled or numpy: the metrics pass that runs"))
    baseline_kind: str = field(default="auto", metadata=_help("auto, rerun or port: what the baseline is"))


#: every group of extractor options, by prefix
OPTION_GROUPS: tuple[type, ...] = (CurveThresholds, BenchmarkOptions, DynamicsOptions, OpCompareOptions, CompareOptions)


def prefix_of(group: type) -> str:
    return str(getattr(group, "PREFIX", "loss_curve"))


def known_options() -> dict[str, str]:
    """Every option name a user may set with --threshold, with its help (the field's, else its default)."""
    out: dict[str, str] = {}
    for group in OPTION_GROUPS:
        for f in fields(group):
            default = f.default if f.default is not MISSING else None
            out[f"{prefix_of(group)}.{f.name}"] = str(f.metadata.get("help") or f"default {default}")
    return out


def defaults() -> dict[str, Any]:
    """Every option name with its default (None: unset, the extractor decides)."""
    return {
        f"{prefix_of(group)}.{f.name}": (f.default if f.default is not MISSING else None)
        for group in OPTION_GROUPS
        for f in fields(group)
    }


def group_options(group: type, options: dict[str, Any]) -> dict[str, Any]:
    """The values ``options`` sets for ``group``'s fields, by field name (unconverted)."""
    names = {f.name for f in fields(group)}
    head = prefix_of(group) + "."
    return {key[len(head) :]: val for key, val in options.items() if key.startswith(head) and key[len(head) :] in names}


_NUMBER = {"float": float, "int": int}


def read_group(group: type, options: dict[str, Any]) -> Any:
    """``group`` with the values ``options`` sets. A field declared ``float`` or ``int`` takes a number, converted
    to that type; any other value for it is left out (options.threshold_problems has warned "ignored"), so the
    default stands. Other fields take the value as given."""
    kinds = {f.name: _NUMBER.get(getattr(f.type, "__name__", str(f.type))) for f in fields(group)}
    vals = {}
    for name, val in group_options(group, options).items():
        kind = kinds.get(name)
        if kind is None:
            vals[name] = val
        elif isinstance(val, (int, float)) and not isinstance(val, bool):
            vals[name] = kind(val)
    return group(**vals)


__all__ = [
    "BenchmarkOptions",
    "CompareOptions",
    "DynamicsOptions",
    "OPTION_GROUPS",
    "OpCompareOptions",
    "group_options",
    "known_options",
    "read_group",
]
