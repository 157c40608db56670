"""Model-family recognition and the recipe comparison, on settings written as users write them and on real cases.

The real cases (``../shared/eval-real-dev``) are read where that folder exists and skipped where it does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.extract.model_family import family_of_name
from advisor.inventory import RunFolder
from advisor.knowledge.recipes import RECIPES, recipe_for

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT.parent / "shared" / "eval-real-dev" / "cases"


def _facts(folder: Path, kind: str) -> list:
    return [f for f in extract_facts(RunPair(run=RunFolder.open(str(folder), "run"))).facts if f.kind == kind]


def _checks(folder: Path) -> dict:
    return {f.setting: f for f in _facts(folder, "recipe_check")}


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("configs/guided_anchoring/ga_faster_r50_fpn_1x_coco.py", "rcnn"),
        ("mask_rcnn_R_50_FPN_3x.yaml", "rcnn"),
        ("./models/yolov5s.yaml", "yolo"),
        ("yolov8n.pt", "yolo"),
        ("bert-base-uncased", "bert"),
        ("google/mt5-small", "t5"),
        ("meta-llama/Llama-2-7b-hf", "llm"),
        ("resnet50_imagenet2012_config.yaml", "resnet"),
        ("vit_base_patch16_224", "vit"),
        ("./data/coco128.yaml", None),
        ("make training faster", None),
        ("mobilenet_v2", None),
    ],
)
def test_family_of_name(name: str, family: str | None) -> None:
    got = family_of_name(name)
    assert (got[0] if got else None) == family


def test_every_recipe_cites_a_reference_and_every_family_has_a_row() -> None:
    from advisor.knowledge.recipes import FAMILY_NAMES

    for r in RECIPES:
        assert r.references and all(u.startswith("https://") for u in r.references), r.title
    for name, *_ in FAMILY_NAMES:
        assert recipe_for(name, "scratch") or recipe_for(name, "finetune"), name


def test_docs_list_every_recipe_and_reference() -> None:
    text = (ROOT / "docs" / "recipes.md").read_text(encoding="utf-8")
    for r in RECIPES:
        assert r.title in text
        for u in r.references:
            assert u in text


def test_linear_rule_moves_the_rate_with_the_batch() -> None:
    rcnn = recipe_for("rcnn", "scratch")
    assert rcnn is not None and rcnn.rate_at(2) == (pytest.approx(0.0025), None)
    assert rcnn.rate_at(None) == (0.02, None)


def _run(tmp_path: Path, hparams: str, log: str = "") -> Path:
    (tmp_path / "hparams.yaml").write_text(hparams, encoding="utf-8")
    if log:
        (tmp_path / "train.log").write_text(log, encoding="utf-8")
    return tmp_path


def test_resnet_at_the_batch_256_rate_on_batch_32_is_8x_the_scaled_recipe(tmp_path: Path) -> None:
    run = _run(tmp_path, "model: resnet50\noptimizer: sgd\nlr: 0.1\nbatch_size: 32\nmomentum: 0.9\n")
    lr = _checks(run)["learning_rate"]
    assert lr.family == "resnet" and lr.recipe_value == pytest.approx(0.0125)
    assert lr.times_above == pytest.approx(8.0) and lr.direction == "above"
    assert "He et al. 2016" in lr.text and "0.0125" in lr.text


def test_the_scaled_rate_is_within_and_adam_is_not_compared_with_an_sgd_recipe(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert _checks(_run(a, "model: resnet50\noptimizer: sgd\nlr: 0.0125\nbatch_size: 32\n"))["learning_rate"].direction == "within"
    assert "learning_rate" not in _checks(_run(b, "model: resnet50\noptimizer: adam\nlr: 0.001\nbatch_size: 32\n"))


def test_a_rate_read_from_the_log_is_not_called_below_the_recipe(tmp_path: Path) -> None:
    log = "".join(f"epoch 12 iter {i} lr: 5.000e-05 loss: 0.5\n" for i in range(1, 6))
    run = _run(tmp_path, "config: configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py\ngpus: 1\n", log)
    assert "learning_rate" not in _checks(run)


def test_a_lora_adapter_with_alpha_64x_r_is_named(tmp_path: Path) -> None:
    (tmp_path / "adapter_config.json").write_text(
        '{"peft_type": "LORA", "r": 8, "lora_alpha": 1024, "base_model_name_or_path": "meta-llama/Llama-2-7b-hf"}',
        encoding="utf-8",
    )
    run = _run(tmp_path, "learning_rate: 2.0e-4\nper_device_train_batch_size: 4\n")
    lora = _checks(run)["lora_scale"]
    assert lora.times_above == pytest.approx(64.0)
    report = diagnose(run)
    named = [c for c in report.causes + report.smells if c.id == "lr_too_high"]
    assert named and "alpha/r = 128" in " ".join(e.text for c in named for e in c.evidence)


def _real(case: str) -> Path:
    folder = REAL / case / "run"
    if not folder.is_dir():
        pytest.skip("../shared/eval-real-dev is not here")
    return folder


def test_an_8_gpu_detection_config_on_one_gpu_is_named_with_the_scaled_rate() -> None:
    run = _real("mmdet_issue4383_garpn_1gpu_lr")
    lr = _checks(run)["learning_rate"]
    assert lr.family == "rcnn" and lr.recipe_value == pytest.approx(0.0025) and lr.times_above > 7
    assert "assumed" in (lr.batch_from or "")
    top = diagnose(run).causes[0]
    assert top.id == "lr_too_high" and top.confidence >= 0.5


def test_yolo_from_scratch_for_ten_epochs_is_named_against_the_300_of_the_recipe() -> None:
    run = _real("yolov5_issue44_scratch_map0_epochs")
    fam = _facts(run, "model_family")[0]
    assert fam.family == "yolo" and fam.regime == "scratch"
    ep = _checks(run)["epochs"]
    assert ep.recipe_value == 300 and ep.times_below == pytest.approx(30.0)


def test_mt5_in_fp16_is_named_as_a_family_that_overflows() -> None:
    run = _real("hf_issue10819_mt5_fp16_eval_nan")
    assert _checks(run)["precision"].family == "t5"
    assert diagnose(run).causes[0].id == "fp_overflow"


def test_a_crash_on_an_api_keras_3_removed_is_an_environment_mismatch() -> None:
    # train.log: real Keras 3.15 output of Keras 2 code (Adam(lr=...)); only the site-packages path shortened
    report = diagnose(ROOT / "tests" / "recipes" / "runs" / "keras3_api_change")
    assert report.causes[0].id == "environment_mismatch" and report.causes[0].confidence >= 0.5
    assert "not recognized" in report.causes[0].evidence[0].text


def test_a_model_from_random_weights_follows_the_pre_training_row():
    from advisor.knowledge.recipes import recipe_for

    assert recipe_for("bert", "scratch").regime == "pretrain"  # a BERT built from a config is pre-trained, not fine-tuned
    assert recipe_for("bert", "finetune").regime == "finetune"
    assert recipe_for("resnet", "scratch").regime == "scratch"
