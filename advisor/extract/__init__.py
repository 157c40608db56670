"""The extraction pipeline: every extractor, in order, in one tuple.

``extract_facts(pair)`` runs them all and merges what they return. An
extractor that fails on a bug of ours does not stop the others: its failure
is reported as an input entry naming the extractor.
"""

from __future__ import annotations

import traceback

from advisor.extract import data_stats, dynamics, hparams, loss_curve, op_compare
from advisor.extract import model as model_desc
from advisor.extract.base import Extraction, Extractor, RunPair
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


def extract_facts(pair: RunPair, extractors: tuple[tuple[str, Extractor], ...] = EXTRACTORS) -> Extraction:
    total = Extraction()
    for folder in pair.sides():
        total.inputs.extend(folder.skipped)
    for name, fn in extractors:
        try:
            total.merge(fn(pair))
        except Exception as exc:  # a bug in one extractor must not hide the others' results
            last = traceback.extract_tb(exc.__traceback__)[-1]
            total.inputs.append(
                InputRecord(
                    path=f"<extractor {name}>",
                    kind="internal",
                    status="unreadable",
                    why=f"internal error {type(exc).__name__}: {exc} (at {last.filename.rsplit('/', 1)[-1]}:{last.lineno})",
                )
            )
    return total
