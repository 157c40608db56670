"""Library versions the run's files state (library_version facts), and the known failure they decide: the
Trainer's per-micro-batch loss normalisation with gradient accumulation before transformers 4.46."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.extract.library_versions import version_code
from advisor.inventory import RunFolder

#: what `transformers env` (transformers 5.25.0, this machine) printed: the report the issue templates ask for
ENV_REPORT = """
Copy-and-paste the text below in your GitHub issue and FILL OUT the two last points.

- `transformers` version: 5.25.0
- Platform: Linux-6.18.44-fc-v1147-x86_64-with-glibc2.36
- Python version: 3.11.7
- Huggingface_hub version: 2.4.0
- Safetensors version: 0.8.0
- Accelerate version: 1.16.0
- Accelerate config: \tnot found
- DeepSpeed version: not installed
- PyTorch version (accelerator?): 2.13.0+cpu (NA)
- Using distributed or parallel set-up in script?: <fill in>
"""


def _versions(folder: Path, side: str = "run") -> dict:
    facts = extract_facts(RunPair(run=RunFolder.open(str(folder), "run"))).facts
    return {f.library: f for f in facts if f.kind == "library_version" and f.side == side}


def _trainer_log(scale: float = 1.0) -> str:
    return "".join(
        str({"loss": round(scale * (2.0 + 8.0 * math.exp(-i / 10)), 4), "grad_norm": 1.1, "learning_rate": 2e-5,
             "epoch": round(i / 60, 3)}) + "\n"
        for i in range(1, 61)
    )


def test_the_environment_report_of_transformers_env_is_read(tmp_path: Path) -> None:
    (tmp_path / "train.log").write_text(ENV_REPORT + _trainer_log(), encoding="utf-8")
    v = _versions(tmp_path)
    assert set(v) == {"transformers", "accelerate", "torch"}  # "DeepSpeed version: not installed" is no version
    assert v["transformers"].version == "5.25.0" and v["transformers"].version_code == 5_025_000
    assert v["torch"].version == "2.13.0+cpu" and v["torch"].source.line == 12
    assert v["accelerate"].stated_in == "Accelerate version: 1.16.0"


def test_pinned_versions_and_a_config_key_are_read_and_the_log_wins_over_the_saved_config(tmp_path: Path) -> None:
    (tmp_path / "train.log").write_text("pip freeze:\ntorch==2.1.0\npeft==0.7.1\nepoch 1 loss 0.5\n", encoding="utf-8")
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "llama", "transformers_version": "4.44.0", "torch_version": "2.3.0"}), encoding="utf-8"
    )
    v = _versions(tmp_path)
    assert v["torch"].version == "2.1.0" and v["torch"].source.path == "train.log"
    assert v["peft"].version_code == version_code("0", "7", "1") == 7001
    assert v["transformers"].version == "4.44.0" and v["transformers"].stated_in == "transformers_version in config.json"


@pytest.mark.parametrize("line", ["torch 2 layers deep, loss 0.3", "Python version: 3.10.12", "CUDA version: 12.1"])
def test_numbers_after_words_are_not_versions(tmp_path: Path, line: str) -> None:
    (tmp_path / "train.log").write_text(line + "\nepoch 1 loss 0.5\n", encoding="utf-8")
    assert _versions(tmp_path) == {}


def _hf_run(folder: Path, version: str, accumulation: int, batch: int, scale: float = 1.0) -> Path:
    folder.mkdir(parents=True)
    report = ENV_REPORT.replace("5.25.0", version)  # the report's documented format, at the release under test
    (folder / "train.log").write_text(report + _trainer_log(scale), encoding="utf-8")
    (folder / "config.json").write_text(
        json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 32000}), encoding="utf-8"
    )
    (folder / "training_args.json").write_text(
        json.dumps({"learning_rate": 2e-5, "per_device_train_batch_size": batch, "gradient_accumulation_steps": accumulation,
                    "warmup_ratio": 0.03, "num_train_epochs": 1, "lr_scheduler_type": "cosine"}),
        encoding="utf-8",
    )
    return folder


def _rules(report) -> set[str]:
    return {e.rule for c in report.causes + report.smells for e in c.evidence}


def test_accumulation_on_a_release_before_the_fix_is_a_warning_on_a_run_without_a_symptom(tmp_path: Path) -> None:
    report = diagnose(_hf_run(tmp_path / "old", "4.45.2", 8, 4))
    assert "gradient-accumulation-loss-normalised-per-micro-batch" in _rules(report)
    assert not [c for c in report.causes if c.confidence >= 0.5]
    fixed = diagnose(_hf_run(tmp_path / "new", "4.46.0", 8, 4))
    assert "gradient-accumulation-loss-normalised-per-micro-batch" not in _rules(fixed)


def test_a_run_behind_a_baseline_without_accumulation_is_explained_by_the_release(tmp_path: Path) -> None:
    run = _hf_run(tmp_path / "run", "4.45.2", 8, 4, scale=1.2)
    base = _hf_run(tmp_path / "base", "4.45.2", 1, 32)
    report = diagnose(run, baseline=base)
    top = report.causes[0]
    assert top.id == "environment_mismatch" and top.confidence >= 0.5
    assert any("4.45.2" in e.text and "accumulates 8" in e.text for e in top.evidence)
    fixed = diagnose(_hf_run(tmp_path / "run46", "4.46.1", 8, 4, scale=1.2), baseline=base)
    assert "gradient-accumulation-loss-normalised-per-micro-batch-and-behind-baseline" not in _rules(fixed)
