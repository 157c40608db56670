"""Small real models trained here at their family's recipe and at a recipe-breaking setting.

Each folder of tests/recipes/runs/ holds what the real tool wrote or printed (Hugging Face Trainer with a model
built from a config, peft LoRA, Keras 3, Lightning, Ultralytics, MindSpore); tests/recipes/make/ regenerates
them. The MANIFEST-*.yaml files say, per run, which setting breaks the recipe (null: the recipe run) and the
recipe's value. The breaking run must be named, as a cause or as a warning, by a ``recipe-*`` rule whose evidence
names the family and the recipe's value; the recipe run must get no recipe rule and no cause at 50 % or more.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from advisor.diagnosis import diagnose
from advisor.knowledge.recipes import family_title

RUNS = Path(__file__).resolve().parent / "runs"
ENTRIES = [e for m in sorted(RUNS.glob("MANIFEST-*.yaml")) for e in yaml.safe_load(m.read_text(encoding="utf-8"))]
#: the family ids of the manifests (the tools' names for them) -> advisor's
FAMILY = {"bert": "bert", "llama-lora": "llm", "resnet": "resnet", "vit": "vit", "yolov8": "yolo", "yolo": "yolo"}


def _recipe_items(report):
    return [(c, e) for c in [*report.causes, *report.smells] for e in c.evidence if e.rule.startswith("recipe-")]


def test_the_manifests_cover_six_tools() -> None:
    # transformers, peft, ultralytics, mindspore, keras, lightning
    assert len({e["tool"] for e in ENTRIES}) >= 6, sorted({e["tool"] for e in ENTRIES})


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.get("setting")], ids=lambda e: e["run"])
def test_a_recipe_breaking_run_is_named_with_its_family_and_the_recipe_value(entry: dict) -> None:
    report = diagnose(RUNS / entry["run"])
    items = _recipe_items(report)
    assert items, f"no recipe rule: causes {[c.id for c in report.causes]}, warnings {[c.id for c in report.smells]}"
    family = FAMILY.get(str(entry["family"]).lower(), str(entry["family"]).lower())
    title = family_title(family)
    texts = " ".join(e.text for _c, e in items)
    assert title.split("/")[0].split(" ")[0] in texts or "LoRA" in texts, texts
    assert any(e.facts.get("recipe_check", {}).get("setting") == _setting(entry["setting"]) for _c, e in items), texts


def _setting(name: str) -> str:
    name = str(name).lower()
    if "lora" in name or "alpha" in name:
        return "lora_scale"
    if "epoch" in name:
        return "epochs"
    if "precision" in name or "fp16" in name:
        return "precision"
    return "learning_rate"


@pytest.mark.parametrize("entry", [e for e in ENTRIES if not e.get("setting")], ids=lambda e: e["run"])
def test_a_run_at_its_recipe_gets_no_recipe_rule_and_no_cause(entry: dict) -> None:
    report = diagnose(RUNS / entry["run"])
    assert not _recipe_items(report), [e.text for _c, e in _recipe_items(report)]
    assert not [c.id for c in report.causes if c.confidence >= 0.5]
