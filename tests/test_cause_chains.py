"""Cause chains and family-fit remedies (issue 31 item 3): the root first, the derived cause says what it derives
from; a transformer is not told to change its activation."""

from __future__ import annotations

from advisor.explain import explain
from advisor.facts.base import Source
from advisor.facts.recipe import ModelFamily
from advisor.facts.symptom import Symptom
from advisor.knowledge.cause_chains import DERIVES, root_of
from advisor.knowledge.family_remedies import fit_remedies
from advisor.report.model import CauseReport

RELU = "Use ReLU/GELU in the hidden layers, or add normalisation and residual connections."


def _cause(cid: str, conf: float, remedies: list[str] | None = None) -> CauseReport:
    return CauseReport(id=cid, title=cid.replace("_", " "), confidence=conf, raw_confidence=conf, severity="high",
                       remedies=remedies or [f"fix {cid}"])


def _symptom(name: str) -> Symptom:
    return Symptom(name=name, text=f"the run shows {name}", rank=3, side="run", source=Source(path="train.log"))


def test_a_rate_far_above_its_band_explains_the_saturation_it_produces():
    causes = [_cause("activation_saturation", 0.91, [RELU]), _cause("lr_too_high", 0.94)]
    ranked, _ = explain(causes, [], [_symptom("loss_at_chance")])
    by_id = {c.id: c for c in ranked}
    assert ranked[0].id == "lr_too_high"
    derived = by_id["activation_saturation"]
    assert derived.derived_from == "lr_too_high" and "Likely a consequence of" in (derived.derived_note or "")
    assert derived.confidence < 0.2 < by_id["lr_too_high"].confidence
    assert by_id["lr_too_high"].derived_from is None


def test_a_weaker_root_does_not_explain_a_stronger_cause_away():
    # saturation found at 0.91, the rate only weakly (0.47): the saturation stands on its own evidence
    assert root_of("activation_saturation", {"activation_saturation": 0.91, "lr_too_high": 0.47}) is None
    assert root_of("activation_saturation", {"activation_saturation": 0.91, "weight_init_bad": 0.87}) is None
    assert root_of("gradient_explosion", {"gradient_explosion": 0.89, "lr_too_high": 0.94}) == "lr_too_high"
    causes = [_cause("activation_saturation", 0.91), _cause("lr_too_high", 0.47)]
    ranked, _ = explain(causes, [], [_symptom("loss_at_chance")])
    assert ranked[0].id == "activation_saturation" and ranked[0].derived_from is None


def test_every_chain_names_causes_of_the_catalogue():
    from advisor.causes import CAUSE_BY_ID

    for derived, roots in DERIVES.items():
        assert derived in CAUSE_BY_ID and all(r in CAUSE_BY_ID and r != derived for r in roots)


def test_a_transformer_is_not_told_to_change_its_activation():
    bert = ModelFamily(family="bert", title="BERT/RoBERTa", regime="finetune", name="bert",
                       recognised_from="config.json: model_type", side="run", source=Source(path="config.json"))
    causes = [_cause("gradient_vanishing", 0.9, [RELU, "Check for a frozen layer."])]
    ranked, _ = explain(causes, [], [_symptom("loss_stuck"), bert])
    remedies = ranked[0].remedies
    assert not any("ReLU" in r for r in remedies) and "Check for a frozen layer." in remedies
    assert "recipe" in remedies[0]
    # an MLP keeps the remedy written for it
    assert fit_remedies("gradient_vanishing", [RELU], None) == [RELU]
    assert fit_remedies("lr_too_high", [RELU], "bert") == [RELU]


def test_without_a_symptom_a_derived_cause_keeps_what_the_root_leaves():
    causes = [_cause("lr_too_high", 0.94), _cause("gradient_vanishing", 0.91), _cause("optimizer_error", 0.87)]
    ranked, _ = explain(causes, [], [])
    assert [c.id for c in ranked][0] == "lr_too_high" and ranked[0].confidence == 0.94
    for c in ranked[1:]:
        assert c.derived_from == "lr_too_high" and c.confidence < 0.1
