"""Reading the symptom table: each row's detector in order, unless a symptom found before it silences it; then the
symptoms most specific first and one summary of the run."""

from __future__ import annotations

from collections.abc import Sequence

from advisor.facts.base import Fact
from advisor.facts.symptom import SYMPTOM_IDS, Symptom, SymptomSummary

from advisor.extract.symptoms.evidence import RunEvidence, gather
from advisor.extract.symptoms.health import health
from advisor.extract.symptoms.table import ANY, TABLE, Row, validate
from advisor.extract.symptoms.thresholds import CEILING_ACCURACY


def detect(ev: RunEvidence, table: Sequence[Row] = TABLE) -> list[Symptom]:
    """The symptoms the rows find, in table order, each id once (the first row that reports it)."""
    found: list[Symptom] = []
    names: set[str] = set()
    for row in table:
        if (ANY in row.silenced_by and found) or names & row.silenced_by:
            continue
        for s in row.detect(ev):
            if s.name not in row.emits:
                raise ValueError(f"symptom table row {row.key!r} reported {s.name!r}, not one of {row.emits}")
            found.append(s)
            names.add(s.name)
    order = {name: i for i, name in enumerate(SYMPTOM_IDS)}
    unique: dict[str, Symptom] = {}
    for s in found:
        unique.setdefault(s.name, s.model_copy(update={"rank": order[s.name]}))
    return sorted(unique.values(), key=lambda s: s.rank)


def symptoms(facts: Sequence[Fact], table: Sequence[Row] = TABLE) -> list[Fact]:
    """The run's ``symptom`` facts, most specific first, and one ``symptom_summary``."""
    if table is not TABLE:
        validate(table)
    ev = gather(facts)
    shown = detect(ev, table)
    if shown:
        status, said = "symptom", ""
    else:
        said = health(ev)
        evidence = any(c.points >= 2 for c in ev.curves) or bool(ev.scores)
        status = "trains_well" if said else "unclear" if evidence else "no_evidence"
    accuracy = ev.accuracy()
    summary = SymptomSummary(
        status=status,  # type: ignore[arg-type]
        primary=shown[0].name if shown else None,
        names=",".join(s.name for s in shown),
        count=len(shown),
        health=said,
        at_ceiling=bool(said) and accuracy is not None and accuracy.best_value >= CEILING_ACCURACY,
    )
    return [*shown, summary]
