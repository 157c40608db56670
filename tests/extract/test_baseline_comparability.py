"""A baseline that trains another problem is no reference (advisor/extract/baseline_comparability.py)."""

from __future__ import annotations

from pathlib import Path

import advisor
from advisor.extract.baseline_comparability import comparability
from advisor.facts.model import Task
from advisor.facts.recipe import ModelFamily

ROOT = Path(__file__).resolve().parents[2]


def test_a_bert_binary_classifier_against_a_ten_class_mlp_is_not_compared():
    """A real Trainer BERT run (num_labels=2) with the shipped ten-class digits MLP as its 'baseline'."""
    report = advisor.diagnose(ROOT / "tests" / "recipes" / "runs" / "hf_bert_recipe", baseline=ROOT / "examples" / "healthy")
    top = report.causes[0]
    assert top.id == "baseline_unqualified" and top.confidence >= 0.5
    assert "baseline-trains-another-problem" in top.rules
    assert "num_labels=2" in top.evidence[0].text and "10 classes" in top.evidence[0].text
    ids = {c.id for c in report.causes}
    assert "hparam_mismatch" not in ids and "preprocessing_mismatch" not in ids  # no diff-based cause


def test_a_port_of_the_same_model_is_compared():
    pair = ROOT / "examples" / "gelu_port"
    report = advisor.diagnose(pair / "run", baseline=pair / "baseline")
    assert "baseline-trains-another-problem" not in {r for c in report.causes for r in c.rules}
    assert report.found(), "the port's operator deviation is still found"


def _task(side: str, task: str, n: int | None, decided: str = "hparams.yaml") -> Task:
    return Task(side=side, task_type=task, n_classes=n, decided_from=decided)  # type: ignore[arg-type]


def _family(side: str, family: str) -> ModelFamily:
    return ModelFamily(side=side, family=family, title=family, name=family, recognised_from="config.json")  # type: ignore[arg-type]


def test_unknowns_are_not_differences_and_a_zoo_row_is_its_family():
    assert comparability([_task("run", "multiclass", 10)]) is None  # no baseline at all
    same = comparability([_task("run", "multiclass", 10), _task("baseline", "multiclass", None)])
    assert same is not None and same.comparable
    two_way = comparability([_task("run", "binary", 2), _task("baseline", "multiclass", 2)])
    assert two_way is not None and two_way.comparable  # a sigmoid and a two-way softmax solve one problem
    port = comparability([_family("run", "ms_resnet"), _family("baseline", "resnet")])
    assert port is not None and port.comparable
    other = comparability([_family("run", "bert"), _family("baseline", "resnet"), _task("baseline", "multiclass", 5)])
    assert other is not None and not other.comparable and other.differences == 1
