"""The fact vocabulary: every fact kind a rule can match.

Modules are listed explicitly (no import-time discovery): to add a fact kind,
define a ``Fact`` subclass in a module here and add the module to
``_MODULES``.
"""

from __future__ import annotations

import inspect

from advisor.facts import data, dynamics, finding, hparams, loss_curve, mixed_precision, ops
from advisor.facts import benchmark
from advisor.facts import model as model_facts
from advisor.facts.base import Fact, Source

_MODULES = (finding, hparams, loss_curve, ops, dynamics, mixed_precision, data, model_facts, benchmark)


def _collect() -> dict[str, type[Fact]]:
    kinds: dict[str, type[Fact]] = {}
    for module in _MODULES:
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Fact) and obj is not Fact and obj.__module__ == module.__name__:
                name = obj.kind_name()
                if name in kinds and kinds[name] is not obj:
                    raise RuntimeError(f"fact kind '{name}' defined twice: {kinds[name]} and {obj}")
                kinds[name] = obj
    return dict(sorted(kinds.items()))


#: kind name -> pydantic model
FACT_KINDS: dict[str, type[Fact]] = _collect()

__all__ = ["FACT_KINDS", "Fact", "Source"]
