"""The extraction pipeline: every extractor, in order, in one tuple.

``extract_facts(pair)`` runs them all and merges what they return. An
extractor that fails on a bug of ours does not stop the others: its failure
is reported as an input entry naming the extractor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from advisor.extract import chance, data_stats, dynamics, hparams, loss_curve, op_compare
from advisor.extract import model as model_desc
from advisor.extract.base import Extraction, Extractor, RunPair
from advisor.facts.base import Fact
from advisor.inventory import InputRecord

#: (name, function): the whole pipeline, explicitly
EXTRACTORS: tuple[tuple[str, Extractor], ...] = (
    ("hparams", hparams.extract),
    ("data_stats", data_stats.extract),
    ("loss_curve", loss_curve.extract),
    ("op_compare", op_compare.extract),
    ("dynamics", dynamics.extract),
    ("model", model_desc.extract),
)

#: (name, function): steps that read the facts of several extractors (after all of them) and add facts
COMBINERS: tuple[tuple[str, Callable[[Sequence[Fact]], list[Fact]]], ...] = (("chance_level", chance.chance_levels),)


def _failed(name: str, exc: Exception) -> InputRecord:
    return InputRecord.internal(f"<extractor {name}>", exc)


def extract_facts(pair: RunPair, extractors: tuple[tuple[str, Extractor], ...] = EXTRACTORS) -> Extraction:
    total = Extraction()
    for folder in pair.sides():
        total.inputs.extend(folder.skipped)
    for name, fn in extractors:
        try:
            total.merge(fn(pair))
        except Exception as exc:  # a bug in one extractor must not hide the others' results
            total.inputs.append(_failed(name, exc))
    for name, combine in COMBINERS:
        try:
            total.facts.extend(combine(list(total.facts)))
        except Exception as exc:  # likewise for a step that combines their facts
            total.inputs.append(_failed(name, exc))
    return total
