"""The symptom table (advisor/extract/symptoms/table.py): checked when imported, read in order, one row per detector;
each detector fired by what a real library wrote and kept quiet by a healthy twin.

The runs here are small real torch trainings on scikit-learn's digits (about a second each), printed the way a
training script prints (``epoch E step S loss L``, then the eval line), or the committed fixtures written by Keras 3
and MindSpore 2.10 (tests/extract/fixtures/make)."""

from __future__ import annotations

import dataclasses
import importlib
import re
import shutil
import traceback
from pathlib import Path

import numpy as np
import pytest

import advisor
from advisor.extract.symptoms import ANY, TABLE, Row, TableError, detect, symptoms, validate
from advisor.extract.symptoms.evidence import RunEvidence, gather
from advisor.extract.symptoms.table import silences
from advisor.facts.symptom import SYMPTOM_IDS, Symptom

torch = pytest.importorskip("torch")
sklearn = pytest.importorskip("sklearn.datasets")

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = ROOT / "examples"


def _shown(run: Path, baseline: Path | None = None) -> list[str]:
    return [s.id for s in advisor.diagnose(run, baseline=baseline).summary.symptoms]


def _digits():
    x, y = sklearn.load_digits(return_X_y=True)
    x = (x / 16.0).astype("float32")
    return torch.from_numpy(x[:1400]), torch.from_numpy(y[:1400]), torch.from_numpy(x[1400:]), torch.from_numpy(y[1400:])


def _train(
    root: Path,
    *,
    epochs: int = 6,
    lr: float = 0.1,
    momentum: float = 0.0,
    head=None,
    loss_fn=None,
    train_labels=None,
    eval_labels=None,
    accuracy=None,
    grad_norm: bool = False,
    hparams: str = "num_classes: 10\noptimizer: sgd\nloss: CrossEntropyLoss\n",
    extra=None,
) -> Path:
    """An MLP on the digits trained with SGD, printed as a script prints: a loss line every 10 steps, an eval line
    after each epoch. ``head`` is appended to the model, ``loss_fn`` replaces CrossEntropyLoss, ``train_labels`` /
    ``eval_labels`` map the labels each side sees, ``accuracy`` computes the printed accuracy from (predictions,
    labels), ``extra(step, model, loss)`` may return more ``key value`` text for the step's line. The settings
    file states the class count, as a config does."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    xt, yt, xe, ye = _digits()
    if train_labels is not None:
        yt = train_labels(yt)
    if eval_labels is not None:
        ye = eval_labels(ye)
    layers = [torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)] + ([head] if head else [])
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    loss_fn = loss_fn or torch.nn.CrossEntropyLoss()
    accuracy = accuracy or (lambda pred, y: float((pred == y).float().mean()))
    lines, step = [], 0
    gen = torch.Generator().manual_seed(0)
    for epoch in range(1, epochs + 1):
        for idx in torch.randperm(len(yt), generator=gen).split(32):
            step += 1
            loss = loss_fn(model(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            more = ""
            if grad_norm:
                more += f" grad_norm {float(torch.nn.utils.clip_grad_norm_(model.parameters(), float('inf'))):.4f}"
            if extra is not None:
                more += extra(step, model, loss)
            opt.step()
            if step % 10 == 0 or step == 1:
                lines.append(f"epoch {epoch} step {step} loss {loss.item():.4f}{more}")
        with torch.no_grad():
            out = model(xe)
            lines.append(
                f"epoch {epoch} step {step} val_loss {float(loss_fn(out, ye)):.4f} "
                f"val_acc {accuracy(out.argmax(1), ye):.4f}"
            )
    root.mkdir(parents=True, exist_ok=True)
    (root / "train.log").write_text("\n".join(lines) + "\n")
    if hparams:
        (root / "hparams.yaml").write_text(hparams)
    return root


# --- the table itself ---------------------------------------------------------------------------------------------


def test_every_row_names_tests_that_exist():
    for row in TABLE:
        for node in row.tests:
            path, name = node.split("::")
            module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
            assert callable(getattr(module, name, None)), f"{row.key}: {node} does not exist"


def test_every_symptom_id_is_reported_by_a_row_and_silencers_come_first():
    assert {s for row in TABLE for s in row.emits} == set(SYMPTOM_IDS)
    assert silences("nonfinite-train-loss")[:4] == ["nan-logged-as-zero", "nonfinite-crash", "nonfinite-eval-loss", "saturated-outputs"]
    assert silences("loss-at-chance") == ["double-softmax-floor", "loss-stuck", "label-floor", "score-at-chance",
                                          "overlap-near-zero", "eval-worse-than-train"]


def _row(**change) -> Row:
    return dataclasses.replace(TABLE[0], **change)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ((_row(emits=("loss_gone_wrong",)),), "unknown symptom id(s) ['loss_gone_wrong']"),
        ((_row(silenced_by=frozenset({"loss_stuck"})),), "silenced by 'loss_stuck', which no earlier row reports"),
        ((_row(), _row()), "two rows are called 'nonfinite-train-loss'"),
        ((_row(tests=()),), "no tests that fire it and keep it quiet"),
        ((_row(mechanism=" "),), "no mechanism"),
    ],
)
def test_a_table_that_cannot_be_read_in_order_is_refused(table, message):
    with pytest.raises(TableError, match=re.escape(message)):
        validate(table)


def test_a_symptom_is_one_row_in_a_temporary_table(tmp_path):
    """A new detector added as one row (a train loss logged at exactly 0.0 at its end, reported as metric
    inconsistent) is read, silenced by what comes before it, and reaches the report's facts."""

    def zero_at_end(ev: RunEvidence) -> list[Symptom]:
        train = ev.train()
        if train is None or train.last_value != 0.0:
            return []
        return [Symptom(name="metric_inconsistent", text="The train loss ends at exactly 0.", source=train.source)]

    row = Row("zero-at-end", ("metric_inconsistent",), zero_at_end, "a loss of exactly 0 trains nothing",
              silenced_by=frozenset({"nonfinite_loss"}), tests=("here",))
    (tmp_path / "train.log").write_text("".join(f"step {i} loss {v}\n" for i, v in enumerate([2.3, 1.2, 0.4, 0.0], 1)))
    from advisor.diagnosis import read_pair
    from advisor.extract import extract_facts

    facts = extract_facts(read_pair(tmp_path, None, {})[0]).facts
    assert "metric_inconsistent" not in [f.name for f in facts if f.kind == "symptom"]
    found = symptoms(facts, table=(*TABLE, row))
    assert [f.text for f in found if f.kind == "symptom"] == ["The train loss ends at exactly 0."]
    assert found[-1].status == "symptom"
    # silenced when a NaN came first
    (tmp_path / "train.log").write_text("step 1 loss 2.3\nstep 2 loss nan\nstep 3 loss 0.0\n")
    facts = extract_facts(read_pair(tmp_path, None, {})[0]).facts
    assert [f.name for f in symptoms(facts, table=(*TABLE, row)) if f.kind == "symptom"] == ["nonfinite_loss"]
    with pytest.raises(TableError):
        symptoms(facts, table=(*TABLE, dataclasses.replace(row, silenced_by=frozenset({"nonsense"}))))


def test_a_row_that_reports_an_id_it_does_not_name_is_an_error(tmp_path):
    liar = Row("liar", ("loss_stuck",), lambda ev: [Symptom(name="crash", text="x")], "m", tests=("t",))
    ev = gather([])  # a run with nothing to read
    with pytest.raises(ValueError, match="reported 'crash'"):
        detect(ev, (liar,))
    # ANY: the row speaks only when nothing else was found
    first = Row("first", ("crash",), lambda ev: [Symptom(name="crash", text="x")], "m", tests=("t",))
    assert [s.name for s in detect(ev, (first, dataclasses.replace(liar, silenced_by=frozenset({ANY}))))] == ["crash"]


# --- each detector on real output, and its healthy twin ----------------------------------------------------------


def test_a_run_stopped_by_its_nan_check_shows_a_nonfinite_loss():
    """MindSpore 2.10's LossMonitor raised on the NaN of step 3 (fixtures/make): the stop is the symptom."""
    assert _shown(FIXTURES / "mindspore_log_only_nan_step3") == ["nonfinite_loss"]
    assert _shown(FIXTURES / "mindspore_one_epoch") == ["slow_or_unfinished"]


def test_a_real_loss_that_climbs_and_stays_up_explodes():
    assert _shown(FIXTURES / "torch_log_only_lr_high") == ["loss_explodes"]
    assert _shown(FIXTURES / "torch_log_only_healthy_cancer") == []


def test_a_loss_exactly_zero_between_losses_in_the_hundreds_is_saturated_outputs():
    """Lightning's CSVLogger, Adam at 3.0 on the wine data (benchmarks/mutations, lightning_mlp_wine/lr_high): the
    train loss is 0.0 at 169 of 180 steps and up to 1418 at the others; it left its start (82.9) in one leap, so
    it is not a loss that never leaves its start either. The same program at 1e-3 shows nothing."""
    report = advisor.diagnose(FIXTURES / "lightning_lr_high_zero_loss")
    assert _shown(FIXTURES / "lightning_lr_high_zero_loss") == ["predictions_saturated"]
    assert "exactly 0 at 169 of its 180 values and reaches 1418" in report.summary.symptoms[0].text
    assert report.causes[0].id == "lr_too_high"
    assert _shown(FIXTURES / "lightning_wine_healthy") == []


def test_a_trainer_loss_of_zero_beside_a_nan_grad_norm_is_a_hidden_nan():
    """The transformers Trainer, a tiny GPT-2 from a config at a rate of 50 (fixtures/make/hf_lm_logs.py): the loss
    overflows, then every window logs 'loss': '0' beside 'grad_norm': 'nan' (logging_nan_inf_filter leaves the NaN
    steps out of the mean). That is a NaN loss, not predictions that are all right; the rate at 50 is the cause.
    The same model at 5e-4 shows no NaN."""
    report = advisor.diagnose(FIXTURES / "hf_nan_hidden")
    assert _shown(FIXTURES / "hf_nan_hidden")[0] == "nonfinite_loss"
    assert "predictions_saturated" not in _shown(FIXTURES / "hf_nan_hidden")
    assert "logged as exactly 0 at 8 values while the gradient norm is NaN" in report.summary.symptoms[0].text
    assert report.causes[0].id == "lr_too_high" and report.causes[0].confidence >= 0.5
    assert "nonfinite_loss" not in _shown(FIXTURES / "hf_lm_healthy")


def test_a_loss_frozen_at_the_clip_after_one_epoch_keeps_the_input_scale_beside_the_rate():
    """Keras 3, Adam at its default rate, on features times 100 (fixtures/make/saturation_logs.py): the loss moves
    once, then sits at the probability clip. Without the rate's value or a sample of the inputs the curve fits a
    step too large and unscaled inputs alike: both are named, neither is confident. The standardised twin trains
    well and gets neither."""
    report = advisor.diagnose(FIXTURES / "keras_unscaled_frozen")
    assert [s.id for s in report.summary.symptoms] == ["loss_stuck", "predictions_saturated"]
    top = {c.id: c.confidence for c in report.causes[:2]}
    assert set(top) == {"lr_too_high", "not_normalized"}, report.causes
    assert max(top.values()) < 0.5
    scale = next(c for c in report.causes if c.id == "not_normalized")
    assert [e.rule for e in scale.evidence] == ["loss-frozen-after-it-moved-inputs-unknown"]
    # a log that states a rate far above its band: the rate's rules decide, the input scale is not offered
    lr_high = advisor.diagnose(FIXTURES / "keras_log_only_frozen_lr_high")
    assert lr_high.causes[0].id == "lr_too_high" and "not_normalized" not in {c.id for c in lr_high.causes}
    healthy = advisor.diagnose(FIXTURES / "keras_unscaled_frozen_ok")
    assert healthy.summary.symptom_status == "trains_well" and not healthy.causes


def test_a_fine_tune_whose_loss_is_exactly_zero_from_the_start_counts_no_label():
    """transformers 5's Trainer on a GPT-2 built from a config, every label -100 (fixtures/make/hf_masked_logs.py):
    {'loss': '0', 'grad_norm': '0'} at every step. The loss is stuck at 0, and in a Trainer run that is the labels'
    masking (the preprocessing), not a cross-entropy over one output. The twin masks the prompt only: its loss
    falls and nothing is named."""
    report = advisor.diagnose(FIXTURES / "hf_labels_all_masked")
    assert [s.id for s in report.summary.symptoms] == ["loss_stuck"]
    assert report.causes[0].id == "preprocessing_mismatch", [(c.id, c.confidence) for c in report.causes]
    assert [e.rule for e in report.causes[0].evidence] == ["train-loss-zero-from-the-start-every-label-masked"]
    assert "loss_function_error" not in {c.id for c in report.causes}
    twin = advisor.diagnose(FIXTURES / "hf_labels_answer_masked")
    assert twin.summary.symptoms == [] and not twin.causes


def test_a_keras_run_stopped_after_its_first_epoch_is_unfinished():
    """Keras 3 fit(epochs=50) whose log ends after ``Epoch 1/50`` (fixtures/make/stopped_logs.py): the header's
    total is the epochs the run set, and a run that ends there is unfinished, the cause a training stopped short.
    Quiet on the same program's 50 epochs and on an EarlyStopping run that stops at epoch 34 of 1000 because its
    validation loss stopped falling."""
    report = advisor.diagnose(FIXTURES / "keras_stopped_epoch1")
    assert _shown(FIXTURES / "keras_stopped_epoch1") == ["slow_or_unfinished"]
    assert report.summary.symptoms[0].text.startswith("The log ends at epoch 1 of the 50 the run was set to train")
    assert report.causes[0].id == "insufficient_epochs"
    assert [e.rule for e in report.causes[0].evidence] == ["run-stopped-within-its-first-epochs"]
    assert _shown(FIXTURES / "keras_stopped_full") == []
    assert _shown(FIXTURES / "keras_early_stopping") == []


def test_a_softmax_before_cross_entropy_levels_off_at_its_floor(tmp_path):
    run = _train(tmp_path / "softmax", epochs=12, lr=0.5, head=torch.nn.Softmax(dim=1))
    assert _shown(run) == ["loss_at_floor"]
    assert _shown(_train(tmp_path / "logits", epochs=12, lr=0.5)) == []


def test_noisy_training_labels_hold_the_train_loss_above_the_eval_loss(tmp_path):
    """60 % of the training labels replaced by random classes, the held-out labels clean: the train loss levels
    off far above the eval loss of the same model."""
    rng = np.random.default_rng(0)

    def noisy(y):
        y = y.clone()
        flip = torch.from_numpy(rng.random(len(y)) < 0.6)
        y[flip] = torch.from_numpy(rng.integers(0, 10, int(flip.sum())))
        return y

    assert _shown(_train(tmp_path / "noisy", epochs=8, train_labels=noisy)) == ["loss_at_floor"]
    assert _shown(_train(tmp_path / "clean", epochs=8)) == []


@pytest.mark.skipif(not (ROOT.parent / "shared").is_dir(), reason="needs ../shared")
def test_a_loss_that_swings_between_updates_oscillates():
    """A BERT fine-tuning log pasted in a real thread (its rate too high) and a Lightning run of the development
    set at a rate far above its recipe: the loss swings by half its level from one print to the next. (Small
    torch runs here sit at the edge between settling and blowing up: one thread more or less decides, so they
    are no test.)"""
    shared = ROOT.parent / "shared"
    assert "loss_oscillates" in _shown(shared / "eval-real-dev/cases/nlptutorial_issue77_bert_lr_oscillation/run")
    assert "loss_oscillates" in _shown(shared / "eval-dev/corpus/runs/lrh02_wine_oscillate_lightning")
    assert _shown(FIXTURES / "keras_log_only_healthy") == []


def test_an_accuracy_of_zero_beside_a_falling_loss_contradicts_it(tmp_path):
    """The accuracy computed with integer division (correct // total) is 0 at every evaluation."""
    run = _train(tmp_path / "floordiv", accuracy=lambda pred, y: int((pred == y).sum()) // len(y))
    assert _shown(run) == ["metric_inconsistent"]


def test_an_eval_loss_below_what_its_accuracy_allows_contradicts_it(tmp_path):
    """MSE between the softmax and one-hot labels (a regression loss on a classifier): at a held-out accuracy of
    0.66 the eval loss is 0.084, a third of the least cross-entropy that accuracy allows. The same model trained
    and evaluated with a cross-entropy is quiet."""
    F = torch.nn.functional

    def mse(out, y):
        return F.mse_loss(F.softmax(out, 1), F.one_hot(y, 10).float())

    run = _train(tmp_path / "mse", epochs=8, lr=0.5, loss_fn=mse, hparams="num_classes: 10\nloss: MSELoss\n")
    report = advisor.diagnose(run)
    assert [s.id for s in report.summary.symptoms] == ["metric_inconsistent"]
    assert "the least cross-entropy that accuracy allows" in report.summary.symptoms[0].text
    assert report.causes[0].id == "loss_function_error" and report.causes[0].confidence >= 0.5
    assert _shown(_train(tmp_path / "ce", epochs=8, lr=0.5)) == []


def test_a_held_out_accuracy_at_one_over_c_is_at_chance(tmp_path):
    """The held-out labels shuffled apart from their inputs: the train loss falls, the eval accuracy stays at
    about 1/10."""
    perm = torch.from_numpy(np.random.default_rng(1).permutation(397))
    shown = _shown(_train(tmp_path / "shuffled", eval_labels=lambda y: y[perm]))
    assert shown[0] == "score_at_chance"


def test_a_negative_cross_entropy_contradicts_its_loss(tmp_path):
    """Binary cross-entropy on class ids 0-9 as targets (torch does not check them): the loss goes below 0."""

    def bce_on_ids(out, y):
        return torch.nn.functional.binary_cross_entropy_with_logits(out[:, 0], y.float())

    run = _train(tmp_path / "bce", epochs=2, lr=0.01, loss_fn=bce_on_ids,
                 hparams="loss: BCEWithLogitsLoss\noptimizer: sgd\nlr: 0.01\nnum_classes: 10\n")
    assert "metric_inconsistent" in _shown(run)


def test_a_negative_loss_that_a_density_can_have_is_no_contradiction(tmp_path):
    """torch.nn.GaussianNLLLoss (a regression that predicts a mean and a variance) is a negative log-density: once
    the predicted variance is small its loss is below 0, as it should be. The log shows it; nothing contradicts."""
    torch.manual_seed(0)
    x = torch.randn(512, 8)
    y = x @ torch.randn(8) + 0.05 * torch.randn(512)
    net = torch.nn.Linear(8, 2)
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    nll = torch.nn.GaussianNLLLoss()
    lines = []
    for epoch in range(1, 16):
        for step in range(16):
            out = net(x[32 * step:32 * step + 32])
            loss = nll(out[:, 0], y[32 * step:32 * step + 32], torch.nn.functional.softplus(out[:, 1]) + 1e-6)
            opt.zero_grad()
            loss.backward()
            opt.step()
        lines.append(f"epoch {epoch} step {16 * epoch} loss {loss.item():.4f}")
    run = tmp_path / "density"
    run.mkdir()
    (run / "train.log").write_text("\n".join(lines) + "\n")
    (run / "hparams.yaml").write_text("loss: GaussianNLLLoss\noptimizer: adam\nlr: 0.05\ntask: regression\n")
    assert loss.item() < 0
    assert "metric_inconsistent" not in _shown(run)


def _amp_log(blow: bool) -> str:
    """torch.amp's GradScaler as a mixed-precision loop uses it: scale, backward, unscale, the gradient norm,
    step, update; printed with the scale. With ``blow`` the scaled loss overflows float32 at every scale (the loss
    times 1e39), as gradients that overflow fp16 whatever the scale do: every step is skipped."""
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16)
    xt, yt, _, _ = _digits()
    lines = []
    for step in range(1, 25):
        idx = slice(32 * step, 32 * step + 32)
        loss = torch.nn.functional.cross_entropy(model(xt[idx]), yt[idx])
        opt.zero_grad()
        scaler.scale(loss * (1e39 if blow else 1.0)).backward()
        scaler.unscale_(opt)
        norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf")))
        scaler.step(opt)
        scaler.update()
        lines.append(f"step {step} loss {loss.item():.4f} grad_norm {norm:.4g} loss_scale {scaler.get_scale():g}")
    return "\n".join(lines) + "\n"


def test_gradients_that_overflow_at_every_loss_scale(tmp_path):
    """The scaler skips every step and halves its scale down past 1; the loss stays finite (and still), the
    gradient norm is NaN/Inf. The same loop on a loss that does not overflow shows neither."""
    for name, blow in (("blow", True), ("ok", False)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_text(_amp_log(blow))
    shown = _shown(tmp_path / "blow")
    assert {"nonfinite_gradients", "loss_scale_collapses"} <= set(shown)
    assert not {"nonfinite_loss", "nonfinite_loss_at_start"} & set(shown)
    assert not {"nonfinite_gradients", "loss_scale_collapses"} & set(_shown(tmp_path / "ok"))


def test_a_run_that_stops_on_an_exception_shows_the_crash(tmp_path):
    """A shape error raised by torch mid-epoch, printed by Python after the loss lines."""
    run = _train(tmp_path / "crash", epochs=1)
    try:
        torch.nn.Linear(64, 10)(torch.zeros(3, 65))
    except RuntimeError:
        text = traceback.format_exc()
    with (run / "train.log").open("a") as f:
        f.write(text)
    assert _shown(run) == ["crash"]


def test_a_run_behind_its_baseline_shows_the_gap(tmp_path):
    base = EXAMPLES / "port_mismatch" / "baseline"
    assert "baseline_gap" in _shown(EXAMPLES / "port_mismatch" / "run", base)
    same = shutil.copytree(base, tmp_path / "same")
    assert _shown(same, base) == []


def test_a_stated_target_missed_is_a_gap(tmp_path):
    """Two epochs reach a held-out accuracy of about 0.76: short of a stated 0.9, not of a stated 0.7."""
    settings = "num_classes: 10\noptimizer: sgd\nloss: CrossEntropyLoss\ntarget_accuracy: {}\n"
    assert _shown(_train(tmp_path / "high", epochs=2, hparams=settings.format(0.9))) == ["target_gap"]
    assert _shown(_train(tmp_path / "low", epochs=2, hparams=settings.format(0.7))) == []


def test_a_one_epoch_mindspore_run_falls_slowly():
    assert _shown(FIXTURES / "mindspore_one_epoch") == ["slow_or_unfinished"]
    assert _shown(FIXTURES / "keras_log_only_healthy") == []


def test_a_final_evaluation_far_from_the_last_validation():
    """Keras 3: fit on digits scaled to [0, 1], then evaluate() on test digits left unscaled: the test loss is 5x
    the last validation loss; the differential leads with the data pipeline. Scaled like the training data, the
    test loss is 1.6x (other writers' digits): no symptom."""
    report = advisor.diagnose(FIXTURES / "keras_evaluate_unscaled_bad")
    (shown,) = report.summary.symptoms
    assert shown.id == "eval_worse_than_train" and shown.text.startswith(
        "The final evaluation gives a loss of 1.474 against the last validation loss 0.2926")
    assert report.causes[0].id == "preprocessing_mismatch"
    assert _shown(FIXTURES / "keras_evaluate_unscaled_ok") == []


def _binary_run(root: Path, zeroed: bool) -> Path:
    """Is this digit a 0 (10 % positives)? SGD at 0.5, the loss printed every 10 steps, the training sample saved
    as data/train.npz; with ``zeroed`` the inputs are 0 (a bug in the pipeline)."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    xt, yt, _, _ = _digits()
    yt = (yt == 0).float()
    if zeroed:
        xt = xt * 0.0
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    gen = torch.Generator().manual_seed(0)
    lines, step = [], 0
    for epoch in range(1, 7):
        for idx in torch.randperm(len(yt), generator=gen).split(32):
            step += 1
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(xt[idx])[:, 0], yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 10 == 0:
                lines.append(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    (root / "data").mkdir(parents=True)
    (root / "train.log").write_text("\n".join(lines) + "\n")
    np.savez(root / "data" / "train.npz", x=xt.numpy(), y=yt.numpy().astype(np.int64))
    return root


def test_a_minibatch_loss_scattered_around_the_label_prior_is_no_divergence(tmp_path):
    """Inputs zeroed by a bug: the model can only learn the share of the positive class (10 %), and each batch's
    loss scatters with how many positives it holds (0.1 to 0.7): not a loss that climbs and does not come back.
    The zeroed sample names the operation that zeroed it, not the rate. The same run on the real inputs trains
    well. (The scatter itself still reads as an oscillation: a level at the prior is not yet told from it.)"""
    report = advisor.diagnose(_binary_run(tmp_path / "zeroed", True))
    assert "loss_explodes" not in [s.id for s in report.summary.symptoms]
    assert report.causes[0].id == "wrong_operator" and report.causes[0].confidence >= 0.5
    healthy = advisor.diagnose(_binary_run(tmp_path / "real", False))
    assert healthy.summary.symptom_status == "trains_well" and not healthy.found()
