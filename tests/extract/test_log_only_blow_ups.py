"""Training that blew up, read from the log alone.

fixtures/torch_log_only_* are the stdout of benchmarks/mutations/torch_programs.py (a PyTorch MLP on the
breast-cancer data, BCEWithLogitsLoss): the healthy run, and the same run at lr 1.0, whose loss climbs to
1e5 and back to 0 on saturated outputs. fixtures/mindspore_log_only_nan_step3 is the stdout of
benchmarks/mutations/mindspore_programs.py at a large learning rate: LossMonitor stops at epoch 1 step 3
before printing any loss (site paths in the traceback shortened).
"""

from __future__ import annotations

from pathlib import Path

from advisor.diagnosis import diagnose
from advisor.extract.base import RunPair
from advisor.extract import loss_curve
from advisor.inventory import RunFolder

FIX = Path(__file__).parent / "fixtures"


def _train_curve(folder: Path):
    out = loss_curve.extract(RunPair(run=RunFolder.scan(folder)))
    [curve] = [f for f in out.facts if f.kind == "loss_curve" and f.split == "train"]
    return curve


def _causes(folder: Path) -> dict[str, float]:
    return {c.id: c.raw_confidence for c in diagnose(folder).causes}


def test_peak_over_start_tells_a_blow_up_from_a_noisy_healthy_curve():
    blown = _train_curve(FIX / "torch_log_only_lr_high")
    assert blown.peak_over_start_ratio > 1e4 and not blown.diverged  # it ends at 0.0000: not "diverged"
    healthy = _train_curve(FIX / "torch_log_only_healthy_cancer")
    assert healthy.peak_over_start_ratio < 2.0


def test_blow_up_is_a_learning_rate_not_overfitting():
    conf = _causes(FIX / "torch_log_only_lr_high")
    assert max(conf, key=conf.get) == "lr_too_high", conf
    # the eval loss rose 1e17x while the train loss sat at 0 between spikes: not a model memorising its data
    assert conf.get("overfitting", 0.0) < 0.5, conf


def test_healthy_log_stays_quiet():
    conf = _causes(FIX / "torch_log_only_healthy_cancer")
    assert not any(c >= 0.5 for c in conf.values()), conf


def test_nan_stop_after_two_updates_points_at_the_learning_rate():
    report = diagnose(FIX / "mindspore_log_only_nan_step3")
    top = report.causes[0]
    assert top.id == "lr_too_high", [c.id for c in report.causes]
    assert any(e.rule == "loss-nonfinite-after-first-updates" and "step 3" in e.text for e in top.evidence)


def test_keras_loss_frozen_after_the_first_epochs():
    # fixtures/keras_log_only_frozen_lr_high: benchmarks/mutations/keras_programs.py (Keras 3, torch backend,
    # fit(verbose=2)), a one-unit sigmoid classifier at a large Adam rate: from epoch 5 on every epoch logs
    # loss 0.9149, the error rate times -ln(1e-7), Keras' probability clip
    curve = _train_curve(FIX / "keras_log_only_frozen_lr_high")
    assert curve.frozen_tail_points >= 20 and not curve.is_frozen_from_start
    report = diagnose(FIX / "keras_log_only_frozen_lr_high")
    assert report.causes and report.causes[0].id == "lr_too_high"
    assert any(e.rule == "loss-frozen-after-it-moved" for e in report.causes[0].evidence)
    # a healthy curve never logs one value five times in a row
    assert _train_curve(FIX / "keras_log_only_healthy").frozen_tail_points < 5


def test_a_loss_that_creeps_down_from_chance_is_a_tiny_rate():
    # fixtures/torch_log_only_lr_low: benchmarks/mutations/torch_programs.py, an MLP on digits with Adam at 1e-6
    # (the log prints 'lr 1e-06' but not the optimizer): the val loss goes 2.3153 -> 2.3114, down at every epoch
    report = diagnose(FIX / "torch_log_only_lr_low")
    assert report.causes and report.causes[0].id == "lr_too_low", [(c.id, c.confidence) for c in report.causes]
    assert any(e.rule == "loss-creeps-down-without-leaving-its-start" for e in report.causes[0].evidence)
    # the healthy run removes most of its loss: no such line
    assert "lr_too_low" not in _causes(FIX / "torch_log_only_healthy_cancer")


def test_a_train_loss_that_went_nan_is_not_overfitting():
    # fixtures/keras_log_only_regression_nan: a Keras 3 (torch backend) MLP regression on the diabetes data with
    # an unscaled target (25-346), SGD at 5e-4, fit(verbose=2): the val loss jumps to 1e12 at epoch 8 and every
    # loss is nan from epoch 9. The eval loss "rose after its best" only because everything diverged.
    conf = _causes(FIX / "keras_log_only_regression_nan")
    assert max(conf, key=conf.get) == "lr_too_high", conf
    assert "overfitting" not in conf, conf


# mmdetection 2.x TextLoggerHook lines (its documented format: mmdet is not installed here)
_MMDET = (
    "2021-12-20 17:13:30,133 - mmdet - INFO - Epoch [1][{i}/4867]\tlr: 2.000e-02, eta: 0:29:00, time: 0.400, "
    "data_time: 0.005, memory: 4601, loss_cls: {loss}, loss_bbox: {loss}, loss: {loss}, grad_norm: {g}\n"
)


def test_a_nan_gradient_norm_beside_a_nan_loss_is_no_evidence_of_an_explosion(tmp_path):
    """An excerpt from after the failure: the only gradient norm is NaN because the loss is. What made the loss
    NaN is open, so gradient_explosion gets no rule's support; a norm that grew from finite values does."""
    (tmp_path / "train.log").write_text(_MMDET.format(i=150, loss="nan", g="nan"))
    assert "gradient_explosion" not in {c.id for c in diagnose(tmp_path).causes if c.rules}
    grown = tmp_path / "grown"
    grown.mkdir()
    norms = [("1.2000", "5.31"), ("1.1000", "48.70"), ("2.3000", "3120.44"), ("nan", "nan"), ("nan", "nan")]
    (grown / "train.log").write_text("".join(_MMDET.format(i=50 * k, loss=l, g=g) for k, (l, g) in enumerate(norms, 1)))
    [cause] = [c for c in diagnose(grown).causes if c.id == "gradient_explosion"]
    assert "logged-grad-norm-nonfinite" in cause.rules
