"""Fine-tuning programs: a tiny GPT-2 built from a config, pre-trained here on a synthetic language (nothing comes
from a hub), then fine-tuned with the transformers ``Trainer``, in full or with PEFT LoRA adapters, each fault put in
the way people make it (#47).

The language: sequences of 32 token ids ``(s + d * i) mod 128``; pre-training sees the steps d = 1 to 6,
fine-tuning d = 7 and 9, which a model that learnt to continue a progression picks up in a few hundred steps. The
pre-trained checkpoint is made once per output folder (``_pretrained/``, ``save_pretrained``) and loaded with
``from_pretrained`` as a user loads a hub checkpoint.

The run folder keeps what a user's run leaves: ``train.log`` (the Trainer's dicts, warnings, the final summary,
logged at INFO level as the example scripts set it, so the ``***** Running training *****`` block is there),
``args.json`` (the script's model arguments, as ``run_clm.py`` users save them) and the ``output_dir`` the Trainer
writes (``trainer_state.json``, ``config.json``, ``adapter_config.json`` for LoRA).

Two programs (see ``generate.py``): ``hf_gpt2_full_ft`` (every weight trains, AdamW at 1e-3, a tiny model's rate)
and ``hf_gpt2_lora`` (rank 8, alpha 16 on ``c_attn``, at 2e-3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

VOCAB, LENGTH = 128, 32
PRETRAIN_STEPS, FINETUNE_STEPS = (1, 2, 3, 4, 5, 6), (7, 9)
_FT = {"runner": "hf_ft", "task": "causal_lm", "hidden": [], "seed": 0, "epochs": 3, "batch_size": 16,
       "warmup_steps": 0.1, "logging_steps": 5, "n_train": 800}

#: program name -> (runner, healthy settings), merged into generate.PROGRAMS
PROGRAMS: dict[str, tuple[str, dict]] = {
    "hf_gpt2_full_ft": ("hf_ft", {**_FT, "dataset": "progressions", "lr": 1e-3, "lora": False}),
    "hf_gpt2_lora": ("hf_ft", {**_FT, "dataset": "progressions", "lr": 2e-3, "lora": True}),
}


def operators(base: dict) -> list[tuple[str, dict, str, list[str]]]:
    """(operator, changed settings, true cause, also-acceptable causes) for a fine-tuning program."""
    ops: list[tuple[str, dict, str, list[str]]] = [
        ("healthy_seed1", {"seed": 1}, None, []),
        ("lr_high", {"lr": base["lr"] * 1000}, "lr_too_high", ["gradient_explosion"]),
        ("lr_low", {"lr": base["lr"] / 1000}, "lr_too_low", []),
        # warm-up steps written for a larger data set: the rate never gets past a few per cent of its peak
        ("warmup_longer_than_run", {"warmup_steps": 5000}, "lr_too_low", []),
        ("epochs", {"epochs": 0.1}, "insufficient_epochs", []),
        # every label -100 (a collator or chat template that masks the whole sequence): no token counts
        ("labels_masked", {"mask_labels": True}, "preprocessing_mismatch", ["label_errors"]),
    ]
    if base["lora"]:
        # target modules named for another architecture (LLaMA's q_proj/v_proj on GPT-2): peft finds none
        ops.append(("lora_targets", {"lora_targets": ["q_proj", "v_proj"]}, "weight_freezing_error", ["hparam_mismatch"]))
    else:
        ops.append(("healthy_seed2", {"seed": 2}, None, []))
        # labels drawn from another sequence: nothing in the input predicts them
        ops.append(("labels", {"shuffle_labels": True}, "label_errors", []))
        # gradient accumulation far beyond what the data set holds: a handful of updates in the whole run
        ops.append(("accumulation", {"accumulation": 16}, "insufficient_epochs", ["lr_too_low"]))
    return ops


def progressions(n: int, steps: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    start = rng.integers(0, VOCAB, size=(n, 1))
    step = rng.choice(np.array(steps), size=(n, 1))
    return (start + step * np.arange(LENGTH)[None, :]) % VOCAB


def run(s: dict, out_dir: Path) -> None:
    """Train in a child process whose stdout and stderr go to train.log, as ``python train.py > train.log 2>&1``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pretrained = _pretrained(out_dir.parents[1] / "_pretrained")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    with open(out_dir / "train.log", "w", encoding="utf-8") as fh:
        proc = subprocess.run(
            [sys.executable, __file__, json.dumps(s), str(out_dir), str(pretrained)],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=str(Path(__file__).parent),
            check=False,
        )
    if proc.returncode != 0 and not s.get("lora_targets"):  # peft refusing the targets is the fault's crash
        raise RuntimeError(f"{out_dir}: training exited with {proc.returncode}; see its train.log")


def _pretrained(folder: Path) -> Path:
    """The pre-trained checkpoint (made once): 600 steps on the progressions of PRETRAIN_STEPS."""
    if (folder / "config.json").is_file():
        return folder
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_positions=LENGTH, n_embd=64, n_layer=2, n_head=2,
                                       bos_token_id=0, eos_token_id=0))
    args = TrainingArguments(output_dir=str(folder / "_trainer"), learning_rate=2e-3, num_train_epochs=4,
                             per_device_train_batch_size=32, warmup_steps=0.05, report_to=[], save_strategy="no",
                             disable_tqdm=True, logging_steps=50, use_cpu=True)
    Trainer(model=model, args=args, train_dataset=_Dataset(progressions(4800, PRETRAIN_STEPS, 99))).train()
    model.save_pretrained(folder)
    return folder


class _Dataset:
    def __init__(self, ids: np.ndarray, labels: np.ndarray | None = None) -> None:
        self.ids, self.labels = ids, ids if labels is None else labels

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict:
        import torch

        return {"input_ids": torch.tensor(self.ids[i]), "labels": torch.tensor(self.labels[i])}


def train(s: dict, out_dir: Path, pretrained: Path) -> None:
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    torch.set_num_threads(1)
    transformers.utils.logging.set_verbosity_info()  # what run_clm.py does with --log_level info
    transformers.set_seed(s["seed"])
    (out_dir / "args.json").write_text(json.dumps({"model_name_or_path": str(pretrained.name), "use_lora": s["lora"]}))
    model = AutoModelForCausalLM.from_pretrained(pretrained)
    if s["lora"]:
        from peft import LoraConfig, get_peft_model

        targets = s.get("lora_targets", ["c_attn"])
        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules=targets, task_type="CAUSAL_LM",
                                                 fan_in_fan_out=True))
        model.print_trainable_parameters()
    ids = progressions(s["n_train"], FINETUNE_STEPS, s["seed"])
    labels = ids.copy()
    if s.get("shuffle_labels"):
        labels = labels[np.random.default_rng(s["seed"] + 7).permutation(len(labels))]
    if s.get("mask_labels"):
        labels = np.full_like(labels, -100)
    args = TrainingArguments(
        output_dir=str(out_dir / "output"),
        learning_rate=s["lr"],
        num_train_epochs=s["epochs"],
        per_device_train_batch_size=s["batch_size"],
        gradient_accumulation_steps=s.get("accumulation", 1),
        warmup_steps=s["warmup_steps"],
        weight_decay=0.01,
        logging_steps=s["logging_steps"],
        eval_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=1,
        report_to=[],
        seed=s["seed"],
        use_cpu=True,
        disable_tqdm=True,
    )
    trainer = Trainer(model=model, args=args, train_dataset=_Dataset(ids, labels),
                      eval_dataset=_Dataset(progressions(160, FINETUNE_STEPS, s["seed"] + 1000)))
    print(trainer.train())
    print(trainer.evaluate())
    trainer.save_model()
    trainer.save_state()


if __name__ == "__main__":
    train(json.loads(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
