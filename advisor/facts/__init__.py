"""The fact vocabulary: every fact kind a rule can match.

Modules are listed explicitly (no import-time discovery): to add a fact kind,
define a ``Fact`` subclass in a module here and add the module to
``MODULES``.

``FACT_KINDS`` imports every module on first use (the rule loader, the CLI's
fact listing and schema). A diagnosis that finds its rules in the rule cache
never asks for it, so it imports only the fact modules of the extractors it
runs: a log-only run does not build the data, dynamics or operator kinds.
"""

from __future__ import annotations

import inspect
from importlib import import_module
from typing import Any

from advisor.facts.base import Fact, Source

#: the modules that define fact kinds, under advisor.facts
MODULES = (
    "finding",
    "hparams",
    "loss_curve",
    "ops",
    "dynamics",
    "mixed_precision",
    "data",
    "model",
    "benchmark",
    "evaluation",
    "recipe",
    "symptom",
    "environment",
    "messages",
    "code",
)

#: kind name -> pydantic model (built on first use; see the module's doc)
FACT_KINDS: dict[str, type[Fact]]


def _collect() -> dict[str, type[Fact]]:
    kinds: dict[str, type[Fact]] = {}
    for name in MODULES:
        module = import_module(f"advisor.facts.{name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Fact) and obj is not Fact and obj.__module__ == module.__name__:
                kind = obj.kind_name()
                if kind in kinds and kinds[kind] is not obj:
                    raise RuntimeError(f"fact kind '{kind}' defined twice: {kinds[kind]} and {obj}")
                kinds[kind] = obj
    return dict(sorted(kinds.items()))


def __getattr__(name: str) -> Any:
    if name == "FACT_KINDS":
        kinds = _collect()
        globals()["FACT_KINDS"] = kinds
        return kinds
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FACT_KINDS", "Fact", "MODULES", "Source"]
