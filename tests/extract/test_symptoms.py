"""What the run shows (advisor/extract/symptoms/), read off real runs: the symptom, its sentence, the updates before
it; a healthy run shows none; and a cause that explains nothing the run shows is a warning (advisor/explain.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import advisor
from advisor.diagnosis import read_pair
from advisor.explain import combined_prior, posterior
from advisor.extract import extract_facts
from advisor.report.render import render

ROOT = Path(__file__).resolve().parents[2]
FIX = Path(__file__).parent / "fixtures"
DEV = ROOT.parent / "shared" / "eval-dev" / "corpus"
REAL = ROOT.parent / "shared" / "eval-real-dev"


def _shown(report) -> list[str]:
    return [s.id for s in report.summary.symptoms]


def test_a_diverging_run_shows_its_nan_with_the_updates_before_it():
    report = advisor.diagnose(ROOT / "examples" / "lr_too_high")
    [first] = report.summary.symptoms
    assert (first.id, first.step, first.updates_before) == ("nonfinite_loss", 101, 100)
    assert first.text == "The train loss (loss) became NaN or infinite at step 101 (after 100 updates)."
    text = render(report, "text")
    assert text.index("What the run shows:") < text.index(first.text) < text.index("Most likely cause:")
    assert json.loads(render(report, "json"))["summary"]["symptoms"][0]["id"] == "nonfinite_loss"


def test_a_healthy_run_shows_no_symptom_and_trains_well():
    report = advisor.diagnose(ROOT / "examples" / "healthy")
    assert _shown(report) == [] and report.summary.symptom_status == "trains_well"
    assert report.summary.verdict in ("nothing_found", "weak_signals") and not report.found()


def test_nan_at_the_first_step_is_before_any_update(tmp_path):
    (tmp_path / "train.log").write_text(
        "epoch: 1 step: 1, loss is nan\nepoch: 1 step: 2, loss is nan\nepoch: 1 step: 3, loss is nan\n"
    )
    [s] = advisor.diagnose(tmp_path).summary.symptoms
    assert (s.id, s.updates_before) == ("nonfinite_loss_at_start", 0)
    assert s.text == "The train loss (loss) is NaN or infinite from its first value at step 1, before any update."


def test_softmax_over_one_unit_is_read_from_the_loss_and_accuracy_alone():
    """A real Keras 3 run (Dense(1, activation='softmax'), binary cross-entropy): the loss is the error rate times
    -ln of Keras' probability clip, in float32, and neither moves: an output that ignores its input."""
    report = advisor.diagnose(FIX / "keras_softmax_one_unit")
    assert _shown(report) == ["loss_stuck", "predictions_saturated"]
    saturated = report.summary.symptoms[1]
    assert "0.3726 (1 - accuracy 0.6274) times 15.94" in saturated.text and "(1e-7, in float32)" in saturated.text
    top = report.found()[0]
    assert top.id == "loss_function_error"
    assert "constant-saturated-output-from-the-first-epoch" in top.rules
    # the same program with a sigmoid trains: no symptom, no cause
    healthy = advisor.diagnose(FIX / "keras_sigmoid_one_unit")
    assert _shown(healthy) == [] and not healthy.found()


def test_a_smell_in_a_run_that_trains_well_is_a_warning(tmp_path):
    """A config that says Adam at 0.05 (far above its band) on a run whose accuracy reaches 0.96: worth fixing,
    not the cause of a problem the run does not have."""
    lines = [
        f"epoch {e} loss {2.3 * 0.7**e:.4f} val_loss {2.3 * 0.72**e:.4f} val_acc {min(0.5 + 0.05 * e, 0.96):.3f}"
        for e in range(1, 21)
    ]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "hparams.yaml").write_text("optimizer: adam\nlr: 0.5\nbatch_size: 32\nnum_classes: 10\n")
    report = advisor.diagnose(tmp_path)
    assert report.summary.symptom_status == "trains_well" and report.summary.health == "val_acc reaches 0.96"
    assert "lr_too_high" in {c.id for c in report.smells}
    assert not report.found() and "lr_too_high" not in {c.id for c in report.causes}
    text = render(report, "text")
    assert "Warnings (worth fixing, not the cause of a problem this run shows):" in text
    assert "What the run shows: no symptom; it trains well (val_acc reaches 0.96)." in text


def test_a_run_at_its_accuracy_ceiling_is_not_told_to_train_longer():
    """A real transformers BERT fine-tune (tests/recipes/runs/hf_bert_recipe: 3 epochs at 5e-5, eval_accuracy 1.0
    every epoch) whose losses still fall at the end: true, and harmless at accuracy 1.0, so a warning."""
    report = advisor.diagnose(ROOT / "tests" / "recipes" / "runs" / "hf_bert_recipe")
    assert report.summary.symptom_status == "trains_well"
    assert "insufficient_epochs" in {c.id for c in report.smells}
    assert "insufficient_epochs" not in {c.id for c in report.causes}


def test_a_healthy_run_below_its_ceiling_may_still_be_told_to_train_longer(tmp_path):
    """The same shape at val_acc 0.93, still rising at the last epoch of 3: training longer can still pay."""
    lines = [
        f"epoch {e} loss {1.2 - 0.3 * e:.4f} val_loss {1.1 - 0.28 * e:.4f} val_acc {0.6 + 0.11 * e:.3f}"
        for e in range(1, 4)
    ]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "hparams.yaml").write_text("optimizer: adam\nlr: 0.001\nbatch_size: 32\nepochs: 3\n")
    report = advisor.diagnose(tmp_path)
    assert report.summary.symptom_status == "trains_well"
    # a weak signal, not a confident cause: the run shows no symptom (a 3-epoch demo looks the same)
    assert report.causes[0].id == "insufficient_epochs" and 0.3 <= report.causes[0].confidence < 0.5
    assert report.summary.verdict == "weak_signals"


def test_the_same_smell_with_a_symptom_it_explains_is_a_cause(tmp_path):
    lines = [
        f"epoch {e} loss {v}"
        for e, v in enumerate([2.3, 2.1, 9.5, 1.9, 14.2, 2.2, 1.8, 11.7, 2.0, 16.3, 1.9, 2.4, 13.1, 2.1, 1.7, 12.2], 1)
    ]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "hparams.yaml").write_text("optimizer: adam\nlr: 0.05\nbatch_size: 32\n")
    report = advisor.diagnose(tmp_path)
    assert _shown(report)[0] == "loss_oscillates"
    top = report.causes[0]
    assert top.id == "lr_too_high" and top.confidence >= 0.5 and "loss-oscillates-at-rate-above-band" in top.rules
    assert top.check and top.check.startswith("Rerun 200 steps at a tenth of the learning rate")


def test_a_symptom_nothing_explains_gets_a_differential_with_checks(tmp_path):
    (tmp_path / "train.log").write_text(
        "".join(f"step {i} loss {2.3 - 0.01 * i:.4f}\n" for i in range(1, 40)) + "step 40 loss nan\n"
    )
    (tmp_path / "hparams.yaml").write_text("optimizer: sgd\nlr: 0.01\nbatch_size: 32\n")  # an ordinary rate
    report = advisor.diagnose(tmp_path)
    assert report.summary.verdict == "differential" and not report.found()
    assert report.summary.headline.startswith("Loss became NaN/Inf: no cause reached 50% confidence.")
    items = report.summary.differential
    assert 2 <= len(items) <= 3 and all(d.check for d in items)
    assert [d.confidence for d in items] == sorted((d.confidence for d in items), reverse=True)
    text = render(report, "text")
    assert "Nothing is clearly wrong" not in text and "check: " in text


def test_posterior_weighs_evidence_against_the_prior():
    prior = combined_prior(["loss_oscillates"])
    shown = {"loss_oscillates"}
    assert abs(sum(prior.values()) - 1) < 1e-9
    # nothing found: every candidate stands at its prior
    table = [c for c in prior if c != "other"]
    alone = posterior({}, prior, shown, table)
    assert alone == pytest.approx({c: prior[c] for c in table})
    # strong evidence for one cause takes the symptom from the others; weak evidence never lowers a cause
    strong = posterior({"lr_too_high": 0.9}, prior, shown, [c for c in table if c != "lr_too_high"], base_rate=0.05)
    assert strong["lr_too_high"] > 0.9 and strong["data_not_shuffled"] < alone["data_not_shuffled"] / 10
    weak = posterior({"lr_too_high": 0.01}, prior, shown, [], base_rate=0.05)
    assert weak["lr_too_high"] == pytest.approx(prior["lr_too_high"] / (prior["lr_too_high"] + prior["other"]))


@pytest.mark.skipif(not DEV.is_dir(), reason="needs ../shared/eval-dev")
def test_healthy_runs_of_the_development_set_show_no_symptom():
    labels = json.loads((DEV / "labels.json").read_text())
    for lab in (x for x in labels if x["cause"] is None):
        report = advisor.diagnose(DEV / lab["run"], baseline=DEV / lab["baseline"] if lab["baseline"] else None)
        assert _shown(report) == [], (lab["run"], _shown(report))
        assert not report.found(), lab["run"]


@pytest.mark.skipif(not REAL.is_dir(), reason="needs ../shared/eval-real-dev")
def test_real_logs_with_a_visible_symptom_are_never_called_fine():
    """Every real case whose log shows a NaN, a frozen loss or a loss at chance says so, and is not 'nothing found'."""
    for case in json.loads((REAL / "cases.json").read_text()):
        report = advisor.diagnose(REAL / "cases" / case["case"] / "run")
        if report.summary.symptoms:
            assert report.summary.verdict != "nothing_found", case["case"]
    seq = advisor.diagnose(REAL / "cases" / "seqtagging_issue47_lr_0p01_nan" / "run")
    assert seq.summary.symptoms[0].text == "The train loss (train_loss) became NaN or infinite at its 6th logged value."


RECIPE_RUNS = ROOT / "tests" / "recipes" / "runs"


def test_a_detector_that_finds_nothing_shows_a_score_near_zero():
    """Real Ultralytics runs (yolov8n from scratch, CPU): 3 of 3 epochs with mAP 0 show it; the same model at 3 of
    its planned 300 epochs is too early to judge by its score."""
    finished = advisor.diagnose(RECIPE_RUNS / "yolo_scratch_few_epochs")
    assert _shown(finished) == ["score_near_zero"]
    assert finished.summary.symptoms[0].text.startswith("metrics/mAP50-95(B) is 0 (best 0) after 3 evaluations")
    assert finished.found()[0].id == "insufficient_epochs"
    early = advisor.diagnose(RECIPE_RUNS / "yolo_scratch_recipe")
    assert _shown(early) == [] and early.summary.symptom_status == "unclear" and not early.found()


def test_a_pasted_detection_row_with_a_near_zero_map_is_a_symptom(tmp_path):
    """A YOLOv5-style validation row (header line, then unlabeled numbers): mAP@.5:.95 0.0136 is a symptom with a
    differential; 0.41 is not."""
    row = "{:>10}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}\n"
    head = row.format("Class", "Images", "Targets", "P", "R", "mAP@.5", "mAP@.5:.95")
    (tmp_path / "train.log").write_text(head + row.format("all", 306, 551, 0.0426, 0.149, 0.0571, 0.0136))
    low = advisor.diagnose(tmp_path)
    assert _shown(low) == ["score_near_zero"] and low.summary.verdict != "nothing_found"
    (tmp_path / "train.log").write_text(head + row.format("all", 306, 551, 0.71, 0.62, 0.66, 0.41))
    assert _shown(advisor.diagnose(tmp_path)) == []


def test_a_loss_stuck_far_above_any_chance_level_is_stuck_not_an_internal_error(tmp_path):
    """exp(5000) overflows: the chance level of a frozen curve is only read for levels up to ln(10^6)."""
    lines = [f"step {i} loss 5000.0 accuracy 0.1" for i in range(1, 60)] + ["epoch 1 val_loss 5000.0 val_accuracy 0.1"]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = advisor.diagnose(tmp_path)
    assert not [i for i in report.inputs if "internal error" in (i.why or "")]
    assert [s.id for s in report.summary.symptoms] == ["loss_stuck"]


@pytest.mark.skipif(not REAL.is_dir(), reason="needs ../shared/eval-real-dev")
def test_a_loss_that_leaps_to_the_clip_and_freezes_is_saturated_outputs():
    """A real pasted log: ``print(loss, acc)`` per batch at full precision beside one Keras bar at four decimals
    (``loss: 17.2694 - acc.: 0.5000``). The accuracy is read under its abbreviated key, the seven values after the
    first are one value at two precisions (a frozen tail of 7, not 2), and the loss that leapt there is named as
    what it is: the error rate times the clip's cost, every output a hard 0 or 1. That says why the loss climbed
    there, so it is not a runaway too, and a loss that left its start in one leap does not "never leave its start"."""
    run = REAL / "cases" / "keras_issue255_int_normalize_zero_input" / "run"
    report = advisor.diagnose(run)
    assert _shown(report) == ["predictions_saturated"]
    saturated = report.summary.symptoms[0]
    assert "is the error rate 0.5 (1 - acc 0.5) times 34.54" in saturated.text
    pair, _ = read_pair(run, None, {})
    curve = next(f for f in extract_facts(pair).facts if f.kind == "loss_curve" and f.split == "train")
    assert (curve.points, curve.frozen_tail_points) == (8, 7)


def _epoch_step_lines(epochs, losses) -> str:
    return "".join(
        f"epoch:{e} step: {i % 19:4d}/19, lr:0.000052, giou_loss:   2.64, total_loss: {v:6.2f}\n"
        for i, (e, v) in enumerate(zip(epochs, losses))
    )


def test_an_excerpt_from_a_late_epoch_never_left_no_start(tmp_path):
    """``epoch:49 step: 0/19``: the step counts within the epoch, so the excerpt starts mid-run; a flat stretch of
    it is not a loss that never left its start. The same flat stretch from epoch 1 is."""
    flat = [13.83, 12.99, 12.38, 13.87, 13.18, 13.5, 13.1, 13.6]
    (tmp_path / "train.log").write_text(_epoch_step_lines([49] * 8, flat))
    assert "loss_stuck" not in _shown(advisor.diagnose(tmp_path))
    start = tmp_path / "start"
    start.mkdir()
    (start / "train.log").write_text(_epoch_step_lines([1] * 8, flat))
    assert "loss_stuck" in _shown(advisor.diagnose(start))


def test_a_nan_in_the_eval_loss_alone_keeps_the_learning_rate_among_the_candidates(tmp_path):
    """A NaN only in the validation summary while the train losses stay finite: the weights a too-large step drove
    large can overflow an unbounded output (YOLO's exp box decoding) on inputs training did not hold."""
    text = _epoch_step_lines([49, 49], [13.83, 12.99])
    text += "giou_val_loss:    nan, conf_val_loss:  12.31, prob_val_loss:   0.06, total_val_loss:    nan\n"
    text += _epoch_step_lines([50, 50, 50], [12.38, 13.87, 13.18])
    (tmp_path / "train.log").write_text(text)
    report = advisor.diagnose(tmp_path)
    assert _shown(report) == ["nonfinite_eval_loss"]
    # seven candidates share the prior and no rule speaks: the one found more often in real faulty programs
    # ([defect4ml] counts summed over symptoms) comes first, not the first in the alphabet
    assert [c.id for c in report.causes][:3] == ["lr_too_high", "nan_inf_source", "preprocessing_mismatch"]
    assert len({c.confidence for c in report.causes[:3]}) == 1


@pytest.mark.parametrize(
    "run, level",
    [
        ("torch_tutorial_at_chance", "2.304"),  # the PyTorch tutorial's prints; test accuracy 7 % over 10 digits
        ("keras_no_validation_at_chance", "2.348"),  # Keras 3 fit without validation: the training accuracy 0.105
    ],
)
def test_a_loss_that_never_left_ln_c_beside_an_accuracy_of_1_over_c_is_at_chance(run, level):
    """Real runs whose labels were shuffled apart from their inputs (fixtures/make/chance_logs.py): the loss creeps
    about ln(10) and the accuracy beside it, held-out or training, is about 1/10. That is a uniform guess, not
    only a loss that never moved."""
    report = advisor.diagnose(FIX / run)
    assert _shown(report) == ["loss_at_chance"]
    assert f"it ends at {level}, ln(10) = 2.303: the loss of a uniform guess over 10 classes" in (
        report.summary.symptoms[0].text
    )


def test_a_loss_frozen_under_adam_is_zero_gradients_not_a_small_rate():
    """A real Keras 3 regressor whose output ReLU starts below zero (fixtures/make/chance_logs.py): Adam at its
    default rate, the loss 0.9788 at every epoch. Adam moves every weight by about its rate whatever the gradient's
    size, so a too-small rate is argued away; the checks left are those for gradients that are exactly zero."""
    report = advisor.diagnose(FIX / "keras_relu_output_frozen")
    assert _shown(report) == ["loss_stuck"]
    assert "lr_too_low" not in [c.id for c in report.causes]
    [ruled] = [c for c in report.ruled_out if c.id == "lr_too_low"]
    assert "frozen-loss-under-an-adaptive-optimizer-is-not-a-small-step" in ruled.rules
    assert "activation_saturation" in [c.id for c in report.causes[:3]]


def test_an_eval_loss_lower_at_every_epoch_by_slivers_is_a_rate_far_too_small():
    """A real Keras 3 MLP on the digits at Adam 1e-6 (fixtures/make/chance_logs.py): val_loss 2.3724 to 2.3636, lower
    at each of 12 epochs. Every update goes the right way and each is tiny: lr_too_low, read from the eval curve
    (its four decimals leave the trend test short of its threshold). Its train loss, 3 % above ln(10) with an
    accuracy of 0.07, is not read as a uniform guess over 11 classes (rounding e^2.38 would say so)."""
    report = advisor.diagnose(FIX / "keras_adam_1e-6_creep")
    top = report.found()[0]
    assert top.id == "lr_too_low" and "eval-loss-falls-at-every-evaluation-without-leaving-its-start" in top.rules
    assert _shown(report) == ["loss_stuck"] and "11 classes" not in report.summary.symptoms[0].text


@pytest.mark.parametrize(
    "level, classes", [(2.3026, 10), (2.3025, 10), (2.30, 10), (2.382, 10), (0.6931, 2), (1.0986, 3), (6.9077, 1000)]
)
def test_the_class_count_a_chance_level_reads_as(level, classes):
    from advisor.extract.chance import classes_at_level

    assert classes_at_level(level) == classes


def test_a_training_accuracy_at_its_ceiling_beside_a_falling_loss_trains_well():
    """Keras without a validation split, label smoothing 0.2 (the loss removes only half its start): the training
    accuracy of 0.99 shows the training works. A training accuracy far below it (labels shuffled) does not."""
    fixtures = Path(__file__).resolve().parent / "fixtures"
    report = advisor.diagnose(fixtures / "keras_no_validation_label_smoothing")
    assert report.summary.symptom_status == "trains_well"
    assert report.summary.health == "accuracy reaches 0.9912 on the training data as the loss falls"
    assert advisor.diagnose(fixtures / "keras_no_validation_at_chance").summary.symptom_status == "symptom"
