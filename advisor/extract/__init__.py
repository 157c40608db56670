"""The extraction pipeline: every extractor, in order, in one tuple.

``extract_facts(pair)`` runs them all and merges what they return. An
extractor that fails on a bug of ours does not stop the others: its failure
is reported as an input entry naming the extractor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import import_module
from typing import cast

import numpy as np

from advisor.extract import (
    baseline_comparability,
    chance,
    hparams,
    library_versions,
    loss_curve,
    model_family,
    recipe_check,
    symptoms,
)
from advisor.extract import model as model_desc
from advisor.extract.base import Extraction, Extractor, RunPair
from advisor.facts.base import Fact
from advisor.inventory import InputRecord
from advisor.read.run import RunRead


def _has_samples(side: RunRead) -> bool:
    try:
        found = side.samples()
    except Exception:  # noqa: BLE001 - the extractor meets the same error and reports it
        return True
    return bool(found.sets or found.unreadable)


def _when(module: str, reads: Callable[[RunPair], bool]) -> Extractor:
    """The ``extract`` of ``module``, imported and run only when the pair holds what it reads (``reads``).

    Without its inputs such an extractor adds nothing (no fact, input entry, check or series), so skipping it
    changes no result; its modules (and their fact kinds and numeric code) then are not imported at all, which
    is most of what a run of a log and a config would pay for them.
    """

    def run(pair: RunPair) -> Extraction:
        if not reads(pair):
            return Extraction()
        return cast(Extractor, import_module(module).extract)(pair)

    run.__name__ = run.__qualname__ = f"{module.rsplit('.', 1)[-1]}_when_present"
    return run


#: (name, function): the whole pipeline, explicitly
EXTRACTORS: tuple[tuple[str, Extractor], ...] = (
    ("hparams", hparams.extract),
    ("data_stats", _when("advisor.extract.data_stats", lambda pair: any(map(_has_samples, pair.sides())))),
    ("loss_curve", loss_curve.extract),
    ("benchmark_gap", _when("advisor.extract.benchmark_gap", lambda pair: pair.baseline is not None)),
    ("loss_scale", _when("advisor.extract.loss_scale", lambda pair: any(side.logs for side in pair.sides()))),
    ("crashes", _when("advisor.extract.crashes", lambda pair: any(side.logs for side in pair.sides()))),
    ("op_compare", _when("advisor.extract.op_compare", lambda pair: bool(pair.run.dumps))),
    ("dynamics", _when("advisor.extract.dynamics", lambda pair: any(side.tensor_files for side in pair.sides()))),
    ("model", model_desc.extract),
    ("model_family", model_family.extract),
    ("library_versions", library_versions.extract),
    (
        "api_warnings",
        _when("advisor.extract.api_warnings", lambda pair: any(side.model_texts for side in pair.sides())),
    ),
    (
        "log_messages",
        _when("advisor.extract.log_messages", lambda pair: any(side.model_texts for side in pair.sides())),
    ),
    ("evaluation", _when("advisor.extract.evaluation", lambda pair: any(side.logs for side in pair.sides()))),
    ("code", _when("advisor.extract.code.extract", lambda pair: bool(pair.run.scripts))),
)

#: (name, function): steps between the extractors and the combiners that may withhold facts (with a fact that
#: says so): a baseline that trains another problem is no reference, so nothing compares the run with it
GATES: tuple[tuple[str, Callable[[Sequence[Fact]], list[Fact]]], ...] = (
    ("baseline_comparability", baseline_comparability.gate),
)

#: (name, function): steps that read the facts of several extractors (after all of them) and add facts
COMBINERS: tuple[tuple[str, Callable[[Sequence[Fact]], list[Fact]]], ...] = (
    ("chance_level", chance.chance_levels),
    (
        "accuracy_loss_bound",
        lambda facts: _evaluation().accuracy_loss_bounds(facts) if _has(facts, "eval_score") else [],
    ),
    ("recipe_check", recipe_check.recipe_checks),
    ("symptoms", symptoms.symptoms),  # last: it reads the facts of every step above
)


def _evaluation():
    return import_module("advisor.extract.evaluation")


def _has(facts: Sequence[Fact], kind: str) -> bool:
    return any(f.kind == kind for f in facts)


def _failed(name: str, exc: Exception) -> InputRecord:
    return InputRecord.internal(f"<extractor {name}>", exc)


def extract_facts(pair: RunPair, extractors: tuple[tuple[str, Extractor], ...] = EXTRACTORS) -> Extraction:
    # values of +-1e308 overflow differences and spans to inf: the extractors test what they compute for
    # finiteness, so numpy's warnings (printed to the user's terminal) say nothing they do not handle
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return _extract_facts(pair, extractors)


def _extract_facts(pair: RunPair, extractors: tuple[tuple[str, Extractor], ...]) -> Extraction:
    total = Extraction()
    for folder in pair.sides():
        total.inputs.extend(folder.skipped)
    for name, fn in extractors:
        try:
            total.merge(fn(pair))
        except Exception as exc:  # a bug in one extractor must not hide the others' results
            total.inputs.append(_failed(name, exc))
    for name, gate in GATES:
        try:
            total.facts = gate(list(total.facts))
        except Exception as exc:  # a failed gate withholds nothing
            total.inputs.append(_failed(name, exc))
    for name, combine in COMBINERS:
        try:
            total.facts.extend(combine(list(total.facts)))
        except Exception as exc:  # likewise for a step that combines their facts
            total.inputs.append(_failed(name, exc))
    return total
