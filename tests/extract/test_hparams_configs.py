"""Config files real runs write -> hyper-parameters (canonical) and settings (everything else, as written).

Samples in config_samples/ (README.md there says which were written by the real libraries).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract.base import RunPair
from advisor.extract.hparams import extract
from advisor.inventory import RunFolder
from advisor.read.runs import pick_latest

SAMPLES = Path(__file__).resolve().parent / "config_samples"


def _extract(run: Path, baseline: Path | None = None):
    base = pick_latest(RunFolder.scan(baseline, "baseline"))[0] if baseline is not None else None
    return extract(RunPair(run=pick_latest(RunFolder.scan(run))[0], baseline=base))


def _hp(ex, side="run"):
    return {f.name: f for f in ex.facts if f.kind == "hyperparameter" and f.side == side and not f.is_default}


def _settings(ex, side="run"):
    return {f.name: f for f in ex.facts if f.kind == "setting" and f.side == side}


CASES = [
    ("mindspore_resnet", {"optimizer": "sgd", "learning_rate": 0.1, "batch_size": 32.0, "epochs": 90.0,
                          "warmup_epochs": 5.0, "loss_scale": 1024.0, "num_classes": 10.0, "momentum": 0.9,
                          "lr_scheduler": "polynomial", "conv_init": "xavier_uniform", "linear_init": "truncated_normal"},
     {"lr_init": 0.01, "lr_end": 1e-05, "device_target": "GPU", "all_reduce_fusion_config": "[85, 160]"}),
    ("mindspore_bert", {"optimizer": "lamb", "learning_rate": 2e-05, "weight_decay": 0.01, "epochs": 3.0,
                        "num_classes": 2.0, "batch_size": 32.0},
     {"optimizer_cfg.AdamWeightDecay.learning_rate": 5e-05, "optimizer_cfg.AdamWeightDecay.eps": 1e-06,
      "optimizer_cfg.Momentum.momentum": 0.9, "bert_net_cfg.seq_length": 128.0}),
    ("deepspeed", {"optimizer": "adamw", "learning_rate": 0.0002, "adam_beta2": 0.95, "adam_epsilon": 1e-08,
                   "batch_size": 8.0, "global_batch_size": 64.0, "gradient_accumulation_steps": 2.0,
                   "precision": "fp16", "loss_scale": 65536.0, "loss_scale_mode": "dynamic", "warmup_steps": 500.0,
                   "grad_clip_norm": 1.0},
     {"fp16.loss_scale_window": 1000.0, "fp16.hysteresis": 2.0, "zero_optimization.stage": 2.0}),
    ("detectron2", {"learning_rate": 0.02, "global_batch_size": 16.0, "max_steps": 90000.0, "momentum": 0.9,
                    "warmup_steps": 1000.0, "num_classes": 80.0, "precision": "fp32", "lr_scheduler": "warmup+step"},
     {"SOLVER.WARMUP_FACTOR": 0.001, "INPUT.MIN_SIZE_TRAIN": "[640, 672, 704, 736, 768, 800]",
      "MODEL.RESNETS.NORM": "FrozenBN", "SOLVER.STEPS": "[60000, 80000]"}),
    ("mmdet", {"optimizer": "sgd", "learning_rate": 0.02, "momentum": 0.9, "weight_decay": 0.0001, "epochs": 12.0,
               "batch_size": 2.0, "warmup_steps": 500.0, "num_classes": 80.0, "lr_scheduler": "step"},
     {"lr_config.warmup_ratio": 0.001, "model.roi_head.bbox_head.loss_cls.type": "CrossEntropyLoss",
      "model.backbone.depth": 50.0}),
    ("hf_model", {"num_classes": 3.0, "dropout": 0.1, "layernorm_epsilon": 1e-12, "init_std": 0.02,
                  "gelu_approximate": False},
     {"problem_type": "single_label_classification", "id2label": '{"0": "negative", "1": "neutral", "2": "positive"}',
      "architectures": '["BertForSequenceClassification"]', "num_hidden_layers": 1.0}),
]


@pytest.mark.parametrize("name,canonical,generic", CASES, ids=[c[0] for c in CASES])
def test_config_files_of_real_tools(name, canonical, generic):
    ex = _extract(SAMPLES / name)
    hp = _hp(ex)
    assert {k: hp[k].value for k in canonical if k in hp} == canonical
    settings = _settings(ex)
    assert {k: settings[k].value for k in generic if k in settings} == generic
    assert all(f.source.line for f in settings.values())  # every setting cites file:line
    assert all(hp[k].source.line for k in canonical if not hp[k].raw_key.startswith("derived"))


def test_settings_cite_the_line_they_were_read_from():
    ex = _extract(SAMPLES / "mmdet")
    assert _hp(ex)["learning_rate"].source.cite() == "20240311_101500.log:39"
    assert _settings(ex)["lr_config.warmup_ratio"].source.cite() == "20240311_101500.log:45"
    ms = _extract(SAMPLES / "mindspore_bert")
    assert _hp(ms)["learning_rate"].raw_key == "optimizer_cfg.Lamb.learning_rate"  # the section optimizer: names
    rec = {i.path: i for i in ms.inputs}["task_classifier_config.yaml"]
    assert "only the first YAML document is read (more follow from line 30)" in rec.why


def test_hugging_face_output_folder_reads_the_latest_checkpoint_and_the_training_arguments():
    ex = _extract(SAMPLES / "hf_output")
    hp = _hp(ex)
    assert hp["learning_rate"].value == 0.001 and hp["optimizer"].value == "adamw" and hp["framework"].value == "pytorch"
    assert hp["num_classes"].value == 3.0 and hp["num_classes"].source.path == "checkpoint-12/config.json"
    assert _settings(ex)["problem_type"].value == "single_label_classification"
    assert {i.path for i in ex.inputs} == {"training_args.json", "checkpoint-12/config.json",
                                           "checkpoint-12/trainer_state.json"}


def test_trainer_state_alone_gives_the_batch_size_and_the_length_of_training(tmp_path):
    shutil.copy(SAMPLES / "hf_output" / "checkpoint-12" / "trainer_state.json", tmp_path)
    ex = _extract(tmp_path)
    hp = _hp(ex)
    assert {k: hp[k].value for k in ("batch_size", "epochs", "max_steps", "framework")} == {
        "batch_size": 8.0, "epochs": 2.0, "max_steps": 12.0, "framework": "pytorch"}
    assert hp["epochs"].source.cite() == "trainer_state.json:58"
    assert not _settings(ex)  # progress and history are not settings


@pytest.mark.parametrize("text,canonical,generic", [
    ("loss:\n  type: focal\n  eps: 1.0e-6\noptimizer:\n  type: adam\n  eps: 1.0e-8\n",
     {"adam_epsilon": 1e-8, "loss": "focal", "optimizer": "adam"}, {"loss.eps": 1e-6}),
    ("ema:\n  momentum: 0.9999\noptimizer: {type: sgd, momentum: 0.9}\n", {"momentum": 0.9, "optimizer": "sgd"},
     {"ema.momentum": 0.9999}),
    ("model:\n  attention:\n    eps: 1.0e-6\n", {}, {"model.attention.eps": 1e-6}),
    ("criterion:\n  weight_decay: 0.5\nweight_decay: 0.01\n", {"weight_decay": 0.01}, {"criterion.weight_decay": 0.5}),
    ("lr_config: {policy: step, warmup_ratio: 0.001}\n", {"lr_scheduler": "step"}, {"lr_config.warmup_ratio": 0.001}),
    ("warmup_steps: 0.1\n", {"warmup_ratio": 0.1}, {}),  # transformers 5: below 1, a share of the steps
], ids=["loss.eps", "ema.momentum", "model eps", "criterion.weight_decay", "mmcv warmup_ratio", "warmup_steps<1"])
def test_keys_keep_their_section(tmp_path, text, canonical, generic):
    (tmp_path / "hparams.yaml").write_text(text)
    ex = _extract(tmp_path)
    hp, settings = _hp(ex), _settings(ex)
    assert {k: hp[k].value for k in hp if k != "global_batch_size"} == canonical
    assert {k: settings[k].value for k in generic if k in settings} == generic


def _pair(tmp_path, run_text: str, base_text: str):
    for side, text in (("run", run_text), ("base", base_text)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "hparams.yaml").write_text(text)
    return tmp_path / "run", tmp_path / "base"


def test_a_changed_generic_setting_is_a_difference_and_paths_are_not(tmp_path):
    run, base = _pair(tmp_path, "lr: 0.01\ncrop_size: [448, 448]\naugment: false\noutput_dir: runs/a\nrun_name: a\n"
                                "mixup_alpha: 0.2\n",
                      "lr: 0.01\ncrop_size: [512, 512]\naugment: false\noutput_dir: runs/b\nrun_name: b\n")
    ex = _extract(run, base)
    diffs = {f.name: f for f in ex.facts if f.kind == "setting_diff"}
    assert set(diffs) == {"crop_size", "mixup_alpha"}
    assert (diffs["crop_size"].run_value, diffs["crop_size"].baseline_value) == ("[448, 448]", "[512, 512]")
    assert (diffs["crop_size"].run_source, diffs["crop_size"].baseline_source) == ("hparams.yaml:2", "hparams.yaml:2")
    assert diffs["mixup_alpha"].baseline_value is None  # added in the run's file
    report = diagnose(run, base)
    cause = next(c for c in report.causes if c.id == "hparam_mismatch")
    assert any("crop_size is [448, 448] in the run (hparams.yaml:2)" in e.text for e in cause.evidence)


def test_a_users_rule_matches_a_generic_setting(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "hparams.yaml").write_text("lr: 0.01\naugment: false\n")
    rule = tmp_path / "augment-off.yaml"
    rule.write_text(Path(SAMPLES / ".." / ".." / ".." / "docs" / "writing-rules.md").read_text()
                    .split("```yaml\n# generic-setting-example\n", 1)[1].split("```", 1)[0])
    report = diagnose(tmp_path / "run", rules=[rule])
    (cause,) = [c for c in report.causes if c.id == "augmentation_off"]
    assert "augment is false" in cause.evidence[0].text.lower()
    (tmp_path / "run" / "hparams.yaml").write_text("lr: 0.01\naugment: true\n")
    assert not [c for c in diagnose(tmp_path / "run", rules=[rule]).causes if c.id == "augmentation_off"]


def test_many_settings_are_capped_with_a_note(tmp_path):
    (tmp_path / "hparams.json").write_text(json.dumps({"lr": 0.1, **{f"k{i}": i for i in range(10_000)}}))
    ex = _extract(tmp_path)
    assert len(_settings(ex)) == 600 and _hp(ex)["learning_rate"].value == 0.1
    assert any("9400 more not kept" in (c.note or "") for c in ex.checks)


def test_lightning_folder_reads_the_latest_version():
    ex = _extract(SAMPLES / "lightning")
    assert _hp(ex)["learning_rate"].value == 0.01 and _settings(ex)["crop_size"].value == 28.0


def test_hparams_of_a_copied_folder_are_not_diffed_against_themselves(tmp_path):
    shutil.copytree(SAMPLES / "detectron2", tmp_path / "base")
    ex = _extract(SAMPLES / "detectron2", tmp_path / "base")
    assert not [f for f in ex.facts if f.kind in ("setting_diff", "hparam_diff")]
