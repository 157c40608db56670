"""Hyper-parameter files through the whole diagnosis (advisor.diagnose): causes and their confidence."""

from __future__ import annotations

import json

import pytest

import advisor

SAME = "optimizer: adam\nlearning_rate: 0.001\nbatch_size: 64\nepochs: 10\nweight_decay: 0.0\n"


def _run(tmp_path, name, files):
    root = tmp_path / name
    root.mkdir()
    for fname, text in files.items():
        (root / fname).write_text(text)
    return root


def _causes(run, baseline=None):
    return {c.id: c.confidence for c in advisor.diagnose(run, baseline=baseline).causes}


def test_port_that_differs_only_by_a_framework_default(tmp_path):
    """Settings alone, no curve: the difference is named first, but as a weak signal (the run shows nothing it
    would cause, so it is not confident)."""
    run = _run(tmp_path, "run", {"hparams.yaml": "framework: pytorch\n" + SAME})
    base = _run(tmp_path, "base", {"hparams.yaml": "framework: tensorflow\n" + SAME})
    report = advisor.diagnose(run, baseline=base)
    assert report.causes[0].id == "hparam_mismatch"
    (cause,) = [c for c in report.causes if c.id == "hparam_mismatch"]
    assert 0.2 <= cause.confidence < 0.5
    assert report.summary.verdict == "weak_signals"
    texts = " ".join(e.text for e in cause.evidence)
    assert "adam_epsilon is 1.00e-08 in the run (pytorch) but 1.00e-07 in the baseline (tensorflow)" in texts
    assert all(c.confidence < 0.5 for c in report.causes if c.id != "hparam_mismatch")


def test_same_settings_in_the_same_framework_raise_nothing(tmp_path):
    run = _run(tmp_path, "run", {"hparams.yaml": "framework: pytorch\n" + SAME + "seed: 1\n"})
    base = _run(tmp_path, "base", {"config.json": json.dumps({"framework": "torch", "optim": "Adam", "lr": 1e-3,
                                                               "bs": 64, "max_epochs": 10, "wd": 0, "seed": 7})})
    assert {c: v for c, v in _causes(run, base).items() if v >= 0.5} == {}


def test_healthy_hugging_face_arguments_raise_nothing(tmp_path):
    args = {"learning_rate": 5e-05, "per_device_train_batch_size": 16, "num_train_epochs": 3.0, "warmup_ratio": 0.1,
            "weight_decay": 0.01, "adam_epsilon": 1e-08, "optim": "adamw_torch", "fp16": True, "seed": 42}
    run = _run(tmp_path, "run", {"training_args.json": json.dumps(args)})
    assert {c: v for c, v in _causes(run).items() if v >= 0.5} == {}


def test_learning_rate_typo_is_reported_from_the_value_alone(tmp_path):
    run = _run(tmp_path, "run", {"hparams.yaml": "optimizer: adam\nlr: 1.0\nbatch_size: 32\n"})
    causes = _causes(run)
    # a setting alone, no curve: named first, below the report threshold (the run shows nothing it would cause)
    assert max(causes, key=causes.get) == "lr_too_high" and 0.2 <= causes["lr_too_high"] < 0.5
    near = _run(tmp_path, "near", {"hparams.yaml": "optimizer: adam\nlr: 0.01\nbatch_size: 32\n"})
    assert "lr_too_high" not in _causes(near)


def test_constant_weight_init_and_bad_loss_scale(tmp_path):
    run = _run(tmp_path, "run", {"hparams.yaml": "optimizer: sgd\nlr: 0.1\nmodel:\n  init: zeros\n"
                                                 "fp16: true\nloss_scale: 0.5\n"})
    causes = _causes(run)
    # settings alone, no curve: both named, neither confident (the run shows nothing they would cause)
    assert 0.3 <= causes["weight_init_bad"] < 0.5
    assert 0.25 <= causes["loss_scale_bad"] < 0.5


def _port(tmp_path, name, model_print):
    root = tmp_path / name
    root.mkdir()
    for side, framework in (("run", "pytorch"), ("base", "tensorflow")):
        folder = root / side
        folder.mkdir()
        (folder / "hparams.yaml").write_text(f"framework: {framework}\n" + SAME)
        (folder / "train.log").write_text(model_print + "\n")
    return root / "run", root / "base"


def _diffed(run, base):
    from advisor.diagnosis import read_pair
    from advisor.extract import extract_facts

    pair, _ = read_pair(run, base, {})
    return {f.name for f in extract_facts(pair).facts if f.kind == "hparam_diff"}


def test_a_layer_default_of_a_layer_the_model_does_not_have_is_no_difference(tmp_path):
    """A PyTorch port of a TensorFlow MLP, each side printing its model (print(model) of the real torch module): an
    MLP has no BatchNorm, LayerNorm or GELU, so their framework defaults are not compared; its Linear layers'
    initialiser is. The same port of a model with BatchNorm1d keeps the BatchNorm defaults."""
    torch = pytest.importorskip("torch")
    nn = torch.nn
    mlp = str(nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)))
    names = _diffed(*_port(tmp_path, "mlp", mlp))
    assert "linear_init" in names
    assert not names & {"batchnorm_decay", "batchnorm_epsilon", "layernorm_epsilon", "gelu_approximate"}
    bn = str(nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 10)))
    names = _diffed(*_port(tmp_path, "bn", bn))
    assert {"batchnorm_decay", "batchnorm_epsilon", "linear_init"} <= names and "gelu_approximate" not in names
    # no model described on either side: every default is compared, as before
    assert "batchnorm_epsilon" in _diffed(*_port(tmp_path, "none", "step 1 loss 2.3"))


@pytest.mark.parametrize(
    ("run_opt", "base_opt", "differs"),
    [
        ("adam", "adam", set()),  # Adam reads no momentum: 0.9 against 0 changes nothing
        ("torch.optim.AdamW", "keras.optimizers.Adam", {"optimizer"}),  # another optimizer, neither reads momentum
        ("SGD", "SGD", {"momentum", "nesterov"}),  # SGD reads both
        ("Momentum", "RMSprop", {"momentum", "nesterov", "optimizer"}),  # nn.Momentum reads both, RMSprop momentum
    ],
)
def test_a_setting_the_optimizers_do_not_read_is_no_difference(tmp_path, run_opt, base_opt, differs):
    """The run writes momentum and nesterov whatever its optimizer; a difference counts only when an optimizer of
    either side reads the setting (torch.optim / keras.optimizers / mindspore.nn update rules)."""
    for side, opt, momentum, nesterov in (("run", run_opt, 0.9, "true"), ("base", base_opt, 0.0, "false")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "hparams.yaml").write_text(
            f"optimizer: {opt}\nlearning_rate: 0.001\nmomentum: {momentum}\nnesterov: {nesterov}\nbatch_size: 32\n"
        )
    names = _diffed(tmp_path / "run", tmp_path / "base")
    assert names & {"momentum", "nesterov", "optimizer"} == differs, names
