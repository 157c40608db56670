"""advisor.extract.hparams: spellings -> canonical vocabulary, framework defaults, baseline diff, sanity checks."""

from __future__ import annotations

import json

import pytest

from advisor.extract.base import RunPair
from advisor.extract.hparams import extract
from advisor.inventory import RunFolder


def _write(folder, name, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder


def _run(tmp_path, files: dict[str, str], baseline: dict[str, str] | None = None):
    run = tmp_path / "run"
    for name, text in files.items():
        _write(run, name, text)
    base = None
    if baseline is not None:
        for name, text in baseline.items():
            _write(tmp_path / "base", name, text)
        base = RunFolder.scan(tmp_path / "base", side="baseline")
    return extract(RunPair(run=RunFolder.scan(run), baseline=base))


def _hp(ex, side="run"):
    return {f.name: f for f in ex.facts if f.kind == "hyperparameter" and f.side == side}


def _kind(ex, kind):
    return [f for f in ex.facts if f.kind == kind]


SPELLINGS = [
    ("hparams.yaml", "optimizer:\n  name: Adam\n  lr: 1.0e-3\nbs: 64\nmax_epochs: 20\nwd: 0.0001\n"
                     "scheduler: {type: torch.optim.lr_scheduler.CosineAnnealingLR, T_max: 20}\n",
     {"optimizer": "adam", "learning_rate": 0.001, "batch_size": 64.0, "epochs": 20.0, "weight_decay": 0.0001,
      "lr_scheduler": "cosine"}),
    ("config.json", json.dumps({"solver": {"base_lr": "1e-2", "momentum": 0.9, "type": "SGD"},
                                "batch_size": 128, "num_epochs": 90, "weight_decay": 5e-4}),
     {"learning_rate": 0.01, "momentum": 0.9, "batch_size": 128.0, "epochs": 90.0, "weight_decay": 0.0005}),
    ("args.json", json.dumps({"lr": 0.1, "optim": "torch.optim.SGD", "per_device_train_batch_size": 32,
                              "keep_prob": 0.8, "criterion": "CrossEntropyLoss", "init": "xavier"}),
     {"optimizer": "sgd", "learning_rate": 0.1, "batch_size": 32.0, "dropout": pytest.approx(0.2),
      "loss": "cross_entropy", "weight_init": "xavier_uniform"}),
    ("config.yaml", "optimizer: {type: AdamW, lr: 5.0e-5, eps: 1.0e-6, betas: [0.9, 0.98]}\n"
                    "fp16: {enabled: true, loss_scale: 0, initial_scale_power: 16}\n"
                    "train_micro_batch_size_per_gpu: 8\ngradient_accumulation_steps: 4\n",
     {"optimizer": "adamw", "learning_rate": 5e-5, "adam_epsilon": 1e-6, "adam_beta2": 0.98, "precision": "fp16",
      "loss_scale": 65536.0, "loss_scale_mode": "dynamic", "global_batch_size": 32.0}),
]


SPELLINGS += [
    ("config.json", json.dumps({"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001,
                                                                                "epsilon": 1e-07}},
                                "framework": "keras", "batch_size": 32}),  # Keras model.optimizer.get_config()
     {"optimizer": "adam", "learning_rate": 0.001, "adam_epsilon": 1e-07, "framework": "tensorflow"}),
    ("config.yaml", "SOLVER:\n  BASE_LR: 0.02\n  IMS_PER_BATCH: 16\n  MAX_ITER: 90000\n  MOMENTUM: 0.9\n"
                    "  WARMUP_ITERS: 1000\nMODEL:\n  RESNETS:\n    NORM: FrozenBN\n",  # detectron2
     {"learning_rate": 0.02, "global_batch_size": 16.0, "max_steps": 90000.0, "momentum": 0.9, "warmup_steps": 1000.0}),
    ("hparams.yaml", "optim_wrapper:\n  optimizer: {type: SGD, lr: 0.01, momentum: 0.9, weight_decay: 0.0001}\n"
                     "train_dataloader: {batch_size: 2}\nmodel:\n  backbone:\n    norm_cfg: {type: BN, momentum: 0.03}\n",
     {"optimizer": "sgd", "learning_rate": 0.01, "momentum": 0.9, "batch_size": 2.0,
      "batchnorm_decay": pytest.approx(0.97)}),  # mmengine: BN momentum in the PyTorch convention
]


@pytest.mark.parametrize("name,text,expected", SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_spellings_map_to_canonical_names(tmp_path, name, text, expected):
    hp = _hp(_run(tmp_path, {name: text}))
    got = {k: hp[k].value for k in expected}
    assert got == expected
    assert all(not hp[k].is_default for k in expected)


def test_hugging_face_training_args(tmp_path):
    args = {"learning_rate": 5e-05, "per_device_train_batch_size": 16, "num_train_epochs": 3.0, "max_steps": -1,
            "warmup_steps": 0, "weight_decay": 0.0, "adam_beta1": 0.9, "adam_beta2": 0.999, "adam_epsilon": 1e-08,
            "max_grad_norm": 1.0, "fp16": False, "bf16": True, "optim": "adamw_torch", "lr_scheduler_type": "linear",
            "gradient_accumulation_steps": 2, "seed": 42, "label_smoothing_factor": 0.1}
    ex = _run(tmp_path, {"training_args.json": json.dumps(args)})
    hp = _hp(ex)
    assert hp["framework"].value == "pytorch"
    assert hp["optimizer"].value == "adamw"
    assert hp["precision"].value == "bf16"  # fp16: false must not hide bf16: true
    assert "max_steps" not in hp  # -1 means "not set"
    assert hp["global_batch_size"].value == 32.0
    assert hp["lr_scheduler"].value == "linear"
    assert hp["grad_clip_norm"].value == 1.0 and hp["label_smoothing"].value == 0.1
    assert hp["weight_decay"].value == 0.0 and not hp["weight_decay"].is_default
    (lr,) = _kind(ex, "learning_rate_check")
    assert lr.optimizer_family == "adaptive" and lr.has_warmup is False
    assert [c.stage for c in ex.checks] == ["hyperparameters"]


def test_framework_defaults_fill_missing_keys_with_their_source(tmp_path):
    hp = _hp(_run(tmp_path, {"hparams.yaml": "framework: mindspore\noptimizer: AdamWeightDecay\nlr: 0.001\n"}))
    assert hp["adam_epsilon"].value == 1e-6 and hp["adam_epsilon"].is_default
    assert "mindspore.cn" in hp["adam_epsilon"].default_source
    assert hp["gelu_approximate"].value is True
    assert hp["layernorm_epsilon"].value == 1e-7
    assert hp["batchnorm_decay"].value == 0.9


def test_two_frameworks_that_differ_only_by_a_default(tmp_path):
    same = "optimizer: adam\nlearning_rate: 0.001\nbatch_size: 64\nepochs: 10\n"
    ex = _run(tmp_path, {"hparams.yaml": "framework: pytorch\n" + same},
              baseline={"hparams.yaml": "framework: keras\n" + same})
    diffs = {d.name: d for d in _kind(ex, "hparam_diff")}
    eps = diffs["adam_epsilon"]
    assert (eps.run_value, eps.baseline_value) == (1e-8, 1e-7)
    assert eps.involves_default and eps.default_scope == "optimizer"
    assert eps.run_framework == "pytorch" and eps.baseline_framework == "tensorflow"
    assert "weight_decay_mode" not in diffs  # no decay on either side: how it is applied does not matter
    assert diffs["batchnorm_decay"].default_scope == "layer"
    # what was written down is equal on both sides, so it is not a difference
    assert not {"learning_rate", "batch_size", "epochs", "optimizer", "framework"} & set(diffs)


def test_same_weight_decay_applied_differently(tmp_path):
    same = "optimizer: adam\nlearning_rate: 0.001\nweight_decay: 0.01\n"
    ex = _run(tmp_path, {"hparams.yaml": "framework: pytorch\n" + same},
              baseline={"hparams.yaml": "framework: keras\n" + same})
    diffs = {d.name: d for d in _kind(ex, "hparam_diff")}
    mode = diffs["weight_decay_mode"]
    assert (mode.run_value, mode.baseline_value) == ("l2", "decoupled") and mode.default_scope == "optimizer"
    assert "weight_decay" not in diffs


def test_same_framework_same_settings_has_no_diff(tmp_path):
    text = "framework: pytorch\noptimizer: sgd\nlr: 0.1\nmomentum: 0.9\nbatch_size: 128\nseed: 1\n"
    ex = _run(tmp_path, {"hparams.yaml": text}, baseline={"config.yaml": text.replace("seed: 1", "seed: 2")})
    assert _kind(ex, "hparam_diff") == []


def test_batchnorm_momentum_copied_literally_into_mindspore(tmp_path):
    ex = _run(tmp_path, {"hparams.yaml": "framework: mindspore\nbn_momentum: 0.1\n"},
              baseline={"hparams.yaml": "framework: pytorch\nbn_momentum: 0.1\n"})
    (d,) = [d for d in _kind(ex, "hparam_diff") if d.name == "batchnorm_decay"]
    assert d.run_value == pytest.approx(0.1) and d.baseline_value == pytest.approx(0.9)
    assert d.unusual_side == "run" and not d.involves_default


def test_learning_rate_band_for_sgd_scales_with_batch(tmp_path):
    ex = _run(tmp_path, {"hparams.yaml": "optimizer: sgd\nlr: 10.0\nmomentum: 0.9\nbatch_size: 64\n"})
    (c,) = _kind(ex, "learning_rate_check")
    assert c.usual_high == pytest.approx(0.25)  # 0.1 * 64/256 * 10
    assert c.times_above_usual == pytest.approx(40.0)
    assert c.has_warmup is None and not c.is_large_batch


def test_no_learning_rate_check_without_optimizer(tmp_path):
    ex = _run(tmp_path, {"hparams.yaml": "lr: 10.0\n"})
    assert _kind(ex, "learning_rate_check") == []


def test_bad_files_are_reported_and_the_rest_goes_on(tmp_path):
    ex = _run(tmp_path, {"hparams.yaml": "lr: !!python/name:os.system\n", "config.json": b"\xff\xfe".decode("latin-1"),
                         "args.json": json.dumps({"lr": 0.01, "optimizer": "adam"})})
    status = {i.path: (i.status, i.why or "") for i in ex.inputs}
    assert status["hparams.yaml"][0] == "unreadable" and "tag refused" in status["hparams.yaml"][1]
    assert status["config.json"][0] == "unreadable"
    assert status["args.json"] == ("used", "")
    assert _hp(ex)["learning_rate"].value == 0.01


def test_file_without_known_keys_keeps_its_settings_under_their_names(tmp_path):
    ex = _run(tmp_path, {"config.json": json.dumps({"task": "statistics", "dump_path": "./dump"})})
    (rec,) = ex.inputs
    assert rec.status == "used" and "2 setting(s) outside the vocabulary" in rec.why
    assert {(f.name, f.value, f.source.cite()) for f in _kind(ex, "setting")} == {
        ("task", "statistics", "config.json:1"), ("dump_path", "./dump", "config.json:1")}
    assert _hp(ex) == {} and ex.checks == []  # no hyper-parameter stage ran on it


def test_duplicated_keys_and_overridden_settings_are_noted(tmp_path):
    ex = _run(tmp_path, {"hparams.yaml": "lr: 0.01\nbatch_size: 32\nlr: 5.0\n",
                         "config.json": '{"lr": 0.1, "batch_size": 32, "batch_size": 64}'})
    assert _hp(ex)["learning_rate"].value == 5.0  # YAML: the last of a duplicated key wins
    rec = {i.path: i for i in ex.inputs}
    assert rec["hparams.yaml"].status == "used" and "key 'lr' appears twice (line 3 wins" in rec["hparams.yaml"].why
    cfg = rec["config.json"]
    assert cfg.status == "ignored" and "already taken from hparams.yaml" in cfg.why  # not "no key found"
    assert "key 'batch_size' appears twice" in cfg.why and "learning_rate = 0.1 here, 5 in hparams.yaml" in cfg.why
    clean = _run(tmp_path / "clean", {"hparams.yaml": "lr: 0.01\n", "args.yaml": "author: me\n"})
    assert {i.path: i for i in clean.inputs}["args.yaml"].why == "1 setting(s) outside the vocabulary kept under their own names"
    empty = _run(tmp_path / "empty", {"hparams.yaml": "lr: 0.01\n", "args.yaml": "{}\n"})
    assert {i.path: i for i in empty.inputs}["args.yaml"].why == "no setting found in it"
    assert {i.path: i for i in clean.inputs}["hparams.yaml"].why is None


def test_non_finite_settings_are_noted_not_dropped_silently(tmp_path):
    ex = _run(tmp_path, {"hparams.yaml": "lr: .nan\nbatch_size: 32\n"})
    assert "learning_rate" not in _hp(ex)
    assert "'lr' is nan (not a usable number; ignored)" in {i.path: i for i in ex.inputs}["hparams.yaml"].why


def test_settings_cite_their_line(tmp_path):
    ex = _run(tmp_path, {"hparams.yaml": "# run 7\nmodel:\n  depth: 4\noptim:\n  lr: 0.01\nbatch_size: 32\n"})
    hp = _hp(ex)
    assert hp["learning_rate"].source.cite() == "hparams.yaml:5" and hp["batch_size"].source.cite() == "hparams.yaml:6"
    js = _run(tmp_path / "j", {"config.json": '{\n  "optimizer": {\n    "lr": 0.1\n  },\n  "batch_size": 8\n}\n'})
    assert _hp(js)["learning_rate"].source.line == 3 and _hp(js)["batch_size"].source.line == 5
