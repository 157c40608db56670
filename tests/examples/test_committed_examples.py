"""The runs committed under examples/ (README's commands) give the cause their label names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LABELS = json.loads((EXAMPLES / "labels.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(LABELS))
def test_committed_example_is_diagnosed_as_labelled(name):
    label = LABELS[name]
    report = diagnose(EXAMPLES / label["run"], baseline=EXAMPLES / label["baseline"] if label["baseline"] else None)
    found = report.found()
    if label["cause"] is None:
        assert found == [], [(c.id, c.confidence) for c in found]
    else:
        assert found and found[0].id == label["cause"], [(c.id, c.confidence) for c in found]
