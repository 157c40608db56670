"""What the run shows: symptom facts from the facts of every other extractor (a combining step, run last).

The routine starts from the symptom (docs/routine.md): an expert first says what the run shows, then which
causes explain it. ``table.TABLE`` lists the detectors, one row each, with what silences them, the mechanism and
the references; the detectors live by family of shapes (``nonfinite``, ``divergence``, ``plateau``,
``generalisation``, ``scores``, ``outcome``) and read what ``evidence.gather`` collected once. A run that shows
none of the symptoms and whose loss fell (or whose score is well above chance) *trains well* (``health``): a
setting that often causes trouble, found in such a run, is a warning, not a cause (advisor/explain.py).
"""

from __future__ import annotations

from advisor.extract.symptoms.engine import detect, symptoms
from advisor.extract.symptoms.table import ANY, TABLE, Row, TableError, validate

__all__ = ["ANY", "TABLE", "Row", "TableError", "detect", "symptoms", "validate"]
