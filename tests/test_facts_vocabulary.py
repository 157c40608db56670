"""The fact vocabulary rule authors write against: every kind and field documented."""

from __future__ import annotations

from advisor.facts import FACT_KINDS
from advisor.facts.base import Fact


def test_every_fact_kind_is_documented_and_well_formed():
    assert {"finding", "hyperparameter", "loss_curve"} <= set(FACT_KINDS)
    for kind, model in FACT_KINDS.items():
        assert issubclass(model, Fact)
        assert kind == model.kind_name() and kind.islower() and " " not in kind
        assert model.doc, f"fact kind '{kind}' has no doc line"
        assert model.model_config.get("frozen") and model.model_config.get("extra") == "forbid", kind
        for name, field in model.model_fields.items():
            if name in ("kind",):
                continue
            assert field.description, f"{kind}.{name} has no description (unit / meaning)"
            assert name not in ("sid",), f"{kind}.{name}: reserved by the engine"
