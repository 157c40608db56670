"""Hugging Face transformers ``Trainer`` programs: a small BERT built from a config (no download),
trained with ``Trainer`` + ``TrainingArguments`` on an offline sequence-classification task.

The run folder keeps what a user's run of such a script leaves: ``train.log`` (stdout and stderr,
with the ``{'loss': ..., 'grad_norm': ..., 'learning_rate': ..., 'epoch': ...}`` dicts, the eval
dicts and the final train summary Trainer prints), and the ``output_dir`` Trainer writes:
``checkpoint-N/`` (``trainer_state.json``, ``training_args.bin``, ``config.json``, the weights) and,
from ``trainer.save_model()``, the final ``config.json``, weights and ``training_args.bin``.

Two programs (see ``generate.py``):

- ``hf_bert_tokens``: a synthetic token task (each sequence holds its class's marker token twice
  among random filler tokens), logged at INFO level the way the transformers example scripts
  (``run_glue.py``) set it, so the ``***** Running training *****`` block is in the log;
- ``hf_bert_digits``: scikit-learn's digits, each pixel's 17 grey levels as a token id, 10 classes,
  at the library's default (warning) verbosity, so only the printed dicts and warnings are there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from common import load

_HF = {"runner": "hf", "task": "multiclass", "hidden": [], "seed": 0, "label_noise": 0.0}

#: program name -> (runner, healthy settings), merged into generate.PROGRAMS
PROGRAMS: dict[str, tuple[str, dict]] = {
    "hf_bert_tokens": (
        "hf",
        {
            **_HF,
            "dataset": "tokens",
            "model": "bert",
            "n_classes": 3,
            "num_labels": 3,
            "seq_len": 16,
            "vocab_size": 32,
            "hidden_size": 64,
            "optimizer": "adamw",
            "lr": 2e-3,
            "warmup_steps": 20,
            "epochs": 6,
            "batch_size": 32,
            "logging_steps": 10,
            "log_info": True,
            "few_epochs": 1,
        },
    ),
    "hf_distilbert_polarity": (
        "hf",
        {
            **_HF,
            "dataset": "polarity",
            "task": "binary",
            "model": "distilbert",
            "n_classes": 2,
            "num_labels": 2,
            "seq_len": 24,
            "vocab_size": 40,
            "optimizer": "adamw",
            "lr": 2e-3,
            "epochs": 5,
            "batch_size": 16,
            "logging_steps": 25,
            "disable_tqdm": True,
            "few_epochs": 1,
        },
    ),
}


def operators(base: dict) -> list[tuple[str, dict, str, list[str]]]:
    """(operator, changed settings, true cause, also-acceptable causes) for a Trainer program: two more seeds of
    the healthy run, then the faults a Trainer user makes in TrainingArguments, the labels or the model config."""
    n_train = 1200
    ops: list[tuple[str, dict, str, list[str]]] = [
        ("healthy_seed1", {"seed": 1}, None, []),
        ("healthy_seed2", {"seed": 2}, None, []),
        ("lr_high", {"lr": base["lr"] * 1000}, "lr_too_high", ["gradient_explosion"]),
        ("lr_low", {"lr": base["lr"] / 1000}, "lr_too_low", []),
        ("epochs", {"epochs": base["few_epochs"]}, "insufficient_epochs", []),
        ("labels", {"label_noise": 0.4}, "label_errors", []),
        ("batch_size", {"batch_size": n_train}, "insufficient_epochs", ["lr_too_low"]),
        # the base model frozen (requires_grad=False), so only the new classification head trains on top of a
        # randomly initialised encoder
        ("freeze", {"freeze": "encoder"}, "weight_freezing_error", []),
    ]
    if base["task"] == "multiclass":
        # num_labels=1: transformers then takes the task for regression (problem_type "regression", MSELoss on the
        # class ids as numbers)
        ops.append(("loss", {"num_labels": 1}, "loss_function_error", []))
    return ops


#: token ids: 0 padding, 1 [CLS]; the token task's markers are 2..2+C-1, filler tokens above them
PAD, CLS = 0, 1


def token_task(n_classes: int, n: int, length: int, vocab: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sequences of random filler tokens with the class's marker token at two random places."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    x = rng.integers(2 + n_classes, vocab, (n, length))
    for i in range(n):
        pos = rng.choice(np.arange(1, length), 2, replace=False)
        x[i, pos] = 2 + y[i]
    x[:, 0] = CLS
    return x.astype(np.int64), y.astype(np.int64)


def polarity_task(n: int, length: int, vocab: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Binary: three "polar" tokens among fillers (2..11 positive, 12..21 negative); the label is the majority's."""
    rng = np.random.default_rng(seed)
    x = rng.integers(22, vocab, (n, length))
    pos = rng.integers(0, 2, (n, 3))  # 1: a positive token
    for i in range(n):
        at = rng.choice(np.arange(1, length), 3, replace=False)
        x[i, at] = np.where(pos[i] == 1, rng.integers(2, 12, 3), rng.integers(12, 22, 3))
    x[:, 0] = CLS
    return x.astype(np.int64), (pos.sum(1) >= 2).astype(np.int64)


def _data(s: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    if s["dataset"] in ("tokens", "polarity"):
        if s["dataset"] == "tokens":
            x, y = token_task(s["n_classes"], 1500, s["seq_len"], s["vocab_size"], seed=123)
        else:
            x, y = polarity_task(1500, s["seq_len"], s["vocab_size"], seed=321)
        xt, yt, xe, ye = x[:1200], y[:1200], x[1200:], y[1200:]
        if s.get("label_noise", 0.0) > 0:
            rng = np.random.default_rng(1)
            idx = rng.choice(len(yt), int(s["label_noise"] * len(yt)), replace=False)
            yt = yt.copy()
            yt[idx] = rng.permutation(yt[idx])
        return xt, yt, xe, ye
    xt, yt, xe, ye = load(s["dataset"], normalize=True, label_noise=s.get("label_noise", 0.0))
    # digits scaled to [0, 1] -> the 17 grey levels 0..16 -> token ids 2..18, after a [CLS]

    def tok(x: np.ndarray) -> np.ndarray:
        ids = np.rint(x * 16).astype(np.int64) + 2
        return np.concatenate([np.full((len(x), 1), CLS, np.int64), ids], axis=1)

    return tok(xt), yt.astype(np.int64), tok(xe), ye.astype(np.int64)


class _Dataset:
    """A list of feature dicts, what a tokenised ``datasets`` split hands the Trainer."""

    def __init__(self, x: np.ndarray, y: np.ndarray, regression: bool) -> None:
        self.x, self.y, self.regression = x, y, regression

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict:
        import torch

        label = torch.tensor(float(self.y[i])) if self.regression else torch.tensor(int(self.y[i]))
        return {
            "input_ids": torch.as_tensor(self.x[i]),
            "attention_mask": torch.ones(len(self.x[i]), dtype=torch.long),
            "labels": label,
        }


def _metrics(eval_pred) -> dict:
    logits, labels = eval_pred
    logits = np.asarray(logits)
    if logits.ndim == 1 or logits.shape[-1] == 1:
        pred = np.rint(logits.reshape(-1))
    else:
        pred = logits.argmax(-1)
    return {"accuracy": float((pred == np.asarray(labels).reshape(-1)).mean())}


def run(s: dict, out_dir: Path) -> None:
    """Train in a child process whose stdout and stderr go to train.log, as ``python train.py > train.log 2>&1``
    keeps them (the transformers logger and tqdm write to the process's stderr)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    with open(out_dir / "train.log", "w", encoding="utf-8") as fh:
        proc = subprocess.run(
            [sys.executable, __file__, json.dumps(s), str(out_dir)],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=str(Path(__file__).parent),
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"{out_dir}: training exited with {proc.returncode}; see its train.log")


def _model(s: dict):
    """A model built from its config, never downloaded: a small BERT or DistilBERT with a classification head."""
    from transformers import BertConfig, DistilBertConfig, AutoModelForSequenceClassification

    if s["model"] == "distilbert":
        config = DistilBertConfig(
            vocab_size=s["vocab_size"],
            dim=32,
            n_layers=2,
            n_heads=2,
            hidden_dim=64,
            max_position_embeddings=s["seq_len"] + 8,
            num_labels=s["num_labels"],
            pad_token_id=PAD,
        )
    else:
        config = BertConfig(
            vocab_size=s["vocab_size"],
            hidden_size=s.get("hidden_size", 32),
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=2 * s.get("hidden_size", 32),
            max_position_embeddings=s["seq_len"] + 8,
            num_labels=s["num_labels"],
            pad_token_id=PAD,
        )
    if s.get("problem_type"):
        config.problem_type = s["problem_type"]
    model = AutoModelForSequenceClassification.from_config(config)
    if s.get("freeze") == "encoder":  # only the classification head trains (the base model is left as initialised)
        for p in model.base_model.parameters():
            p.requires_grad = False
    return model


def train(s: dict, out_dir: Path) -> None:
    import torch
    import transformers
    from transformers import Trainer, TrainingArguments

    torch.set_num_threads(1)
    if s.get("log_info"):
        transformers.utils.logging.set_verbosity_info()  # what run_glue.py does with --log_level info
    transformers.set_seed(s["seed"])
    xt, yt, xe, ye = _data(s)
    model = _model(s)
    regression = model.config.num_labels == 1
    args = TrainingArguments(
        output_dir=str(out_dir / "output"),
        learning_rate=s["lr"],
        num_train_epochs=s["epochs"],
        per_device_train_batch_size=s["batch_size"],
        per_device_eval_batch_size=128,
        weight_decay=0.01,
        warmup_steps=s.get("warmup_steps", 0),
        logging_steps=s["logging_steps"],
        eval_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=1,
        report_to=[],
        seed=s["seed"],
        use_cpu=True,
        disable_tqdm=s.get("disable_tqdm", False),
    )
    print(f"train samples: {len(xt)}, eval samples: {len(xe)}")
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=_Dataset(xt, yt, regression),
        eval_dataset=_Dataset(xe, ye, regression),
        compute_metrics=_metrics,
    )
    result = trainer.train()
    print(result)
    print(trainer.evaluate())
    trainer.save_model()
    trainer.save_state()


if __name__ == "__main__":
    train(json.loads(sys.argv[1]), Path(sys.argv[2]))
