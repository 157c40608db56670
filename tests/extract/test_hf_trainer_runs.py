"""Facts of Hugging Face Trainer run folders written by transformers 5 (tests/read/hf_trainer_runs)."""

from __future__ import annotations

import math
from pathlib import Path

from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder

RUNS = Path(__file__).parents[1] / "read" / "hf_trainer_runs"


def _facts(name: str) -> list:
    return extract_facts(RunPair(run=RunFolder.scan(RUNS / name))).facts


def _one(facts: list, kind: str, **match):
    found = [f for f in facts if f.kind == kind and all(getattr(f, k) == v for k, v in match.items())]
    assert len(found) == 1, (kind, match, found)
    return found[0]


def test_default_two_labels_and_the_cross_entropy_of_the_head():
    # config.json of a DistilBertForSequenceClassification with the default 2 labels: no id2label in it
    facts = _facts("distilbert_labels")
    task = _one(facts, "task")
    assert (task.task_type, task.n_classes) == ("binary", 2)
    loss = _one(facts, "loss_setup")
    assert (loss.family, loss.variant, loss.expects) == ("cross_entropy", "torch_cross_entropy", "logits")
    assert "single_label_classification" in loss.name
    assert _one(facts, "model_summary").output_units == 2
    chance = _one(facts, "chance_level", split="train")
    assert chance.chance_loss == math.log(2)
    assert round(chance.end_ratio, 3) == 0.819  # 40 % shuffled labels: the train loss levels off near ln 2


def test_num_labels_one_is_a_regression_head_with_mse():
    facts = _facts("bert_num_labels_1")
    loss = _one(facts, "loss_setup")
    assert (loss.family, loss.variant, loss.target_form) == ("mse", "regression", "values")
    assert "regression" in loss.name
    assert _one(facts, "task").task_type == "regression"
    assert not [f for f in facts if f.kind == "chance_level"]
    assert _one(facts, "model_summary").output_units == 1  # the head: Linear(hidden, num_labels)


def test_evaluate_after_train_is_not_a_second_evaluation():
    # trainer_state.json logs the last epoch's evaluation twice at step 228 (the epoch's and trainer.evaluate())
    facts = _facts("bert_lr_high")
    curve = _one(facts, "loss_curve", split="eval")
    assert (curve.points, curve.last_step) == (6, 228)
    gap = _one(facts, "generalization_gap")
    assert (gap.eval_points, gap.evals_after_min) == (6, 0)


def test_frozen_encoder_trainable_share_from_the_log_and_the_config():
    facts = _facts("bert_frozen_encoder")
    summary = _one(facts, "model_summary")
    # "Number of trainable parameters = 195" (the classifier: 64 x 3 + 3); the config's matrices hold at least
    # 32 x 64 (embedding) + 2 layers x (4 x 64 x 64 + 2 x 64 x 128) = 67584
    assert (summary.trainable_params, summary.config_min_params) == (195, 67584)
    assert round(summary.trainable_share, 5) == round(195 / 67584, 5)


def test_frozen_encoder_is_named_and_a_trained_one_is_not():
    from advisor.diagnosis import diagnose

    frozen = {c.id: c.raw_confidence for c in diagnose(RUNS / "bert_frozen_encoder").causes}
    assert max(frozen, key=frozen.get) == "weight_freezing_error"
    assert frozen["weight_freezing_error"] >= 0.6
    trained = {c.id for c in diagnose(RUNS / "bert_lr_high").causes}  # every parameter trainable (75,139)
    assert "weight_freezing_error" not in trained
