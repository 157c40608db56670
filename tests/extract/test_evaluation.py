"""eval_score and accuracy_loss_bound from the real output of a MindSpore 2.10 Model.train / Model.eval script."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.extract.evaluation import fano_bound
from advisor.inventory import RunFolder

SAMPLES = Path(__file__).resolve().parents[1] / "read" / "logs" / "samples"
CONFIG = SAMPLES / "mindspore_unscaled_digits" / "mlp_config.yaml"  # num_classes: 10


def _facts(tmp_path: Path, log: str, config: bool = True) -> dict:
    shutil.copy(SAMPLES / log, tmp_path / "train.log")
    if config:
        shutil.copy(CONFIG, tmp_path / "mlp_config.yaml")
    facts = extract_facts(RunPair(RunFolder.scan(tmp_path))).facts
    out: dict = {}
    for f in facts:
        out.setdefault(f.kind, []).append(f)
    return out


def test_fano_bound():
    assert fano_bound(1.0, 10) == 0.0
    e = 0.1
    assert fano_bound(0.9, 10) == pytest.approx(-e * math.log(e) - 0.9 * math.log(0.9) + e * math.log(9))
    assert fano_bound(0.05, 10) == pytest.approx(math.log(10))  # at or below chance: ln(C)


def test_final_model_eval_score_and_its_bound(tmp_path):
    facts = _facts(tmp_path, "mindspore_model_eval.log")
    (score,) = facts["eval_score"]
    assert (score.name, score.metric, score.points, score.is_at_end, score.has_eval_loss) == (
        "Accuracy",
        "accuracy",
        1,
        True,
        False,
    )
    assert score.last_value == pytest.approx(0.9138888888888889)
    (bound,) = facts["accuracy_loss_bound"]
    assert bound.n_classes == 10
    assert bound.bound_loss == pytest.approx(fano_bound(0.9138888888888889, 10))
    assert bound.bound_loss > 0
    assert bound.train_to_bound_ratio == pytest.approx(bound.train_end_level / bound.bound_loss)
    assert bound.train_to_bound_ratio > 2  # 40 % shuffled labels: the train loss stays at 1.5 nats


def test_without_the_config_the_class_count_comes_from_the_output_layer(tmp_path):
    # the log prints the MLP (a 10-unit Dense last) and {'Accuracy': np.float64(...)}: an accuracy over a
    # 10-unit output is a 10-class task
    facts = _facts(tmp_path, "mindspore_model_eval.log", config=False)
    (task,) = facts["task"]
    assert (task.task_type, task.n_classes, task.accuracy_metric) == ("multiclass", 10, "accuracy")
    (bound,) = facts["accuracy_loss_bound"]
    assert bound.n_classes == 10 and bound.train_chance_ratio == pytest.approx(bound.train_end_level / math.log(10))


def test_no_class_count_no_bound(tmp_path):
    log = (SAMPLES / "mindspore_model_eval.log").read_text(encoding="utf-8")
    kept = [line for line in log.splitlines(keepends=True) if "Dense(" not in line]  # no output layer to count
    (tmp_path / "train.log").write_text("".join(kept))
    facts = {f.kind for f in extract_facts(RunPair(RunFolder.scan(tmp_path))).facts}
    assert "eval_score" in facts and "accuracy_loss_bound" not in facts


def test_no_score_no_fact(tmp_path):
    facts = _facts(tmp_path, "mindspore_unscaled_digits/train.log")
    assert "eval_score" not in facts and "accuracy_loss_bound" not in facts


def test_perfect_score_bounds_the_error_to_its_resolution(tmp_path):
    log = (SAMPLES / "mindspore_model_eval.log").read_text(encoding="utf-8")
    (tmp_path / "run.log").write_text(log.replace("np.float64(0.9138888888888889)", "np.float64(1.0)"))
    shutil.copy(CONFIG, tmp_path / "mlp_config.yaml")
    facts = extract_facts(RunPair(RunFolder.scan(tmp_path))).facts
    (bound,) = [f for f in facts if f.kind == "accuracy_loss_bound"]
    assert bound.eval_accuracy == 1.0
    assert bound.bound_loss == pytest.approx(fano_bound(0.995, 10))


# -- Keras 3 at its default verbosity (train.log of benchmarks/mutations/keras_bar_programs.py) ----------------------
def _keras_facts(tmp_path: Path, log: str) -> dict:
    return _facts(tmp_path, log, config=False)


def test_keras_train_accuracy_against_the_held_out_accuracy(tmp_path):
    # an MLP with BatchNormalization, 30 epochs, 40 % of the training labels shuffled; val_accuracy on clean labels
    (score,) = _keras_facts(tmp_path, "keras_default_verbosity_bn_noisy_labels.log")["eval_score"]
    assert (score.name, score.last_value, score.train_last_value) == ("val_accuracy", 0.8475, 0.7169)
    assert score.eval_minus_train == pytest.approx(0.8475 - 0.7169)
    assert score.best_value == 0.8725 and score.best_minus_last == pytest.approx(0.8725 - 0.8475)
    assert score.train_end_gain_per_point == pytest.approx((0.7169 - 0.7056) / 3)  # accuracy at epochs 27 and 30
    assert score.eval_lead_in_train_gains == pytest.approx(
        (0.8475 - 0.7169) / 0.005
    )  # a gain under 0.005 is floored there


def test_keras_two_epochs_give_no_gain_per_point(tmp_path):
    (score,) = _keras_facts(tmp_path, "keras_default_verbosity_bn.log")["eval_score"]
    assert score.eval_minus_train == pytest.approx(0.815 - 0.7931)
    assert score.train_end_gain_per_point is None and score.eval_lead_in_train_gains is None


def test_keras_noisy_labels_diagnosed_from_the_log_alone(tmp_path):
    from advisor.diagnosis import diagnose

    shutil.copy(SAMPLES / "keras_default_verbosity_bn_noisy_labels.log", tmp_path / "train.log")
    report = diagnose(tmp_path)
    assert report.causes and report.causes[0].id == "label_errors", [(c.id, c.confidence) for c in report.causes]
    assert "train-accuracy-levels-below-eval-accuracy" in {e.rule for c in report.causes for e in c.evidence}


def test_keras_mse_on_one_hot_classes_is_below_the_cross_entropy_floor(tmp_path):
    # the CNN trained with loss="mse" on one-hot digits: the summary and the last three of its 20 epochs, as written
    (score,) = _keras_facts(tmp_path, "keras_default_verbosity_cnn_mse_tail.log")["eval_score"]
    assert (score.last_value, score.has_eval_loss) == (0.9688, True)
    assert score.eval_loss_to_ce_floor_ratio == pytest.approx(0.0055 / ((1 - 0.9688) * math.log(2)))
    assert score.eval_loss_to_ce_floor_ratio < 0.5


def test_keras_cross_entropy_stays_above_its_floor(tmp_path):
    (score,) = _keras_facts(tmp_path, "keras_default_verbosity_cnn.log")["eval_score"]  # sparse categorical CE
    assert score.eval_loss_to_ce_floor_ratio == pytest.approx(1.3343 / ((1 - 0.7708) * math.log(2)))
    assert score.eval_loss_to_ce_floor_ratio > 1
