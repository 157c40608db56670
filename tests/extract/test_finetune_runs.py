"""Fine-tuning runs (#47): a tiny GPT-2 pre-trained here on a synthetic language, then fine-tuned with the
transformers Trainer in full or with peft LoRA (benchmarks/mutations/hf_finetune_programs.py; the fixtures keep the
log, args.json and the output_dir's small files of three of its runs)."""

from __future__ import annotations

from pathlib import Path

from advisor.diagnosis import diagnose
from advisor.extract.base import RunPair
from advisor.extract import extract_facts
from advisor.inventory import RunFolder
from advisor.read.run import read_run

FIXTURES = Path(__file__).parent / "fixtures"


def facts_of(name: str) -> dict[str, list]:
    pair = RunPair(run=read_run(RunFolder.open(FIXTURES / name, "run")), baseline=None, options={})
    out: dict[str, list] = {}
    for f in extract_facts(pair).facts:
        out.setdefault(f.kind, []).append(f)
    return out


def test_a_run_that_loads_a_checkpoint_is_a_fine_tune_and_use_lora_false_is_not_lora():
    """args.json says use_lora: false; the log says 'loading weights file model.safetensors' (from_pretrained)."""
    fam = facts_of("ft_full_healthy")["model_family"][0]
    assert fam.regime == "finetune" and "loading weights file" in (fam.regime_from or "")


def test_a_language_model_head_classifies_tokens_over_its_vocabulary():
    """GPT2LMHeadModel over vocab_size 128: chance is ln 128; labels drawn from another sequence level there."""
    facts = facts_of("ft_full_labels_shuffled")
    task = facts["task"][0]
    assert task.task_type == "multiclass" and task.n_classes == 128
    assert facts["loss_setup"][0].family == "cross_entropy"
    report = diagnose(FIXTURES / "ft_full_labels_shuffled")
    assert [s.id for s in report.summary.symptoms] == ["loss_at_chance"]
    assert "ln(128)" in report.summary.symptoms[0].text
    # a model that guesses is not one that needed more epochs
    assert all(c.id != "insufficient_epochs" or c.confidence < 0.5 for c in report.causes)


def test_published_recipes_do_not_judge_a_toy_model():
    """LoRA at 2e-3 with alpha/r 2 on a 114 k-parameter model (peft prints it): the QLoRA recipe (lr 2e-4 for
    7B-13B) is for other sizes. The run trains; nothing is named."""
    facts = facts_of("ft_lora_healthy")
    assert "recipe_check" not in facts
    report = diagnose(FIXTURES / "ft_lora_healthy")
    assert not report.causes and not report.smells
    healthy = diagnose(FIXTURES / "ft_full_healthy")
    assert healthy.summary.symptom_status == "trains_well" and not healthy.causes
