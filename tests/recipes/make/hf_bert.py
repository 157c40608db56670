"""Regenerate the HF Trainer BERT fine-tuning recipe runs (real transformers, CPU).

    python tests/recipes/make/hf_bert.py OUTDIR

writes OUTDIR/hf_bert_recipe/ and OUTDIR/hf_bert_pretrain_lr/, each holding
what the run itself wrote: train.log (stdout+stderr of the script, with
Trainer's log dicts), config.json (the model config, as save_pretrained
writes it) and trainer_state.json (Trainer's state at the end of training).
No weights, no training_args.bin.

Model: a tiny BERT built from a BertConfig (hidden 64, 2 layers, 2 heads,
vocab 300), no download.  Task: synthetic sequence classification, label =
whether token 5 occurs in the sequence (balanced, learnable).

The fine-tuning recipe is for a *pre-trained* encoder (at lr 5e-5 a randomly
initialised tiny BERT stays at loss ln 2 in 3 epochs).  So the generator first
pre-trains the tiny BERT once (multi-label "which of tokens 3..8 occur",
lr 1e-3, into a temporary folder; its output is not part of the run folders),
standing in for the downloaded `bert-base-uncased` checkpoint; both runs then
load it with `from_pretrained` and fine-tune a fresh 2-way classifier head.

Recipe: Devlin et al. 2019, https://arxiv.org/abs/1810.04805 appendix A.3 --
AdamW, lr in {5e-5, 3e-5, 2e-5}, batch 16 or 32, 2-4 epochs, linear decay with
warmup.  The recipe run uses lr 5e-5, batch 32, 3 epochs, warmup 10%.  The
broken run changes only the learning rate (see RUNS).

Each run is executed as a child process whose stdout/stderr go to train.log,
as a user's `python train.py > train.log 2>&1` would.
"""
import os
import shutil
import subprocess
import sys
import tempfile

RUNS = {
    # name: learning_rate
    "hf_bert_recipe": 5e-5,        # Devlin et al. fine-tuning range 2e-5..5e-5
    # 1e-3 and 5e-3 still reach accuracy 1.0 on this tiny model; 1e-2 (200x the
    # recipe, 100x BERT's pre-training rate 1e-4) learns during warmup, then
    # collapses to loss ln 2 / majority-class accuracy once at peak rate.
    "hf_bert_pretrain_lr": 1e-2,
}
SEED = 1234
BATCH = 32
EPOCHS = 3
SEQ_LEN = 16
VOCAB = 300
N_TRAIN, N_VAL = 2048, 256
TARGET_TOKEN = 5
CLS, SEP, PAD = 1, 2, 0


PRETRAIN_TOKENS = [3, 4, 5, 6, 7, 8]


def make_pretrain_data(n, rng):
    """Multi-label: which of PRETRAIN_TOKENS occur (each with probability 0.5)."""
    import numpy as np
    ids = rng.integers(10, VOCAB, size=(n, SEQ_LEN))
    ids[:, 0] = CLS
    ids[:, -1] = SEP
    labels = rng.integers(0, 2, size=(n, len(PRETRAIN_TOKENS)))
    for i in range(n):
        pos = rng.permutation(np.arange(1, SEQ_LEN - 1))
        for j, t in enumerate(PRETRAIN_TOKENS):
            if labels[i, j]:
                ids[i, pos[j]] = t
    return ids.astype("int64"), labels.astype("float32")


def make_data(n, rng):
    """Random token sequences [CLS] t1..t14 [SEP]; label 1 iff TARGET_TOKEN occurs."""
    import numpy as np
    ids = rng.integers(10, VOCAB, size=(n, SEQ_LEN))
    ids[:, 0] = CLS
    ids[:, -1] = SEP
    labels = rng.integers(0, 2, size=n)
    for i in np.nonzero(labels)[0]:
        ids[i, rng.integers(1, SEQ_LEN - 1)] = TARGET_TOKEN
    return ids.astype("int64"), labels.astype("int64")


def _imports():
    # The torchvision wheel in this environment does not match torch; the script
    # does not need it, so keep transformers from importing it.
    sys.modules["torchvision"] = None
    import torch
    torch.set_num_threads(1)

    class DS(torch.utils.data.Dataset):
        def __init__(self, x, y):
            self.x, self.y = torch.tensor(x), torch.tensor(y)

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            return {"input_ids": self.x[i],
                    "attention_mask": torch.ones_like(self.x[i]),
                    "labels": self.y[i]}
    return DS


def pretrain(ckpt):
    """Stand-in for the published checkpoint: saved to ckpt (a temp folder)."""
    DS = _imports()
    import numpy as np
    from transformers import (BertConfig, BertForSequenceClassification, Trainer,
                              TrainingArguments, set_seed)
    set_seed(SEED)
    rng = np.random.default_rng(SEED + 1)
    x, y = make_pretrain_data(8192, rng)
    config = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128,
                        max_position_embeddings=64, num_labels=len(PRETRAIN_TOKENS),
                        problem_type="multi_label_classification", pad_token_id=PAD)
    model = BertForSequenceClassification(config)
    args = TrainingArguments(output_dir=os.path.join(ckpt, "_trainer"), learning_rate=1e-3,
                             per_device_train_batch_size=32, num_train_epochs=4,
                             warmup_steps=0.1, logging_steps=128, save_strategy="no",
                             report_to=[], disable_tqdm=True, seed=SEED, use_cpu=True)
    Trainer(model=model, args=args, train_dataset=DS(x, y)).train()
    enc = model.bert                    # the encoder only, like a published base model
    enc.config.problem_type = None
    enc.config.num_labels = 2
    enc.save_pretrained(ckpt)


def train(name, outdir, lr, ckpt):
    DS = _imports()
    import numpy as np
    from transformers import BertForSequenceClassification, Trainer, TrainingArguments, set_seed

    set_seed(SEED)
    rng = np.random.default_rng(SEED)
    x_train, y_train = make_data(N_TRAIN, rng)
    x_val, y_val = make_data(N_VAL, rng)

    model = BertForSequenceClassification.from_pretrained(ckpt, num_labels=2)
    print(model)
    print(f"Fine-tuning BERT: AdamW lr={lr} batch_size={BATCH} epochs={EPOCHS} "
          f"warmup=0.1 train={N_TRAIN} val={N_VAL}", flush=True)

    def compute_metrics(p):
        preds = np.argmax(p.predictions, axis=-1)
        return {"accuracy": float((preds == p.label_ids).mean())}

    with tempfile.TemporaryDirectory() as tmp:
        args = TrainingArguments(
            output_dir=os.path.join(tmp, "bert-finetuned"),
            learning_rate=lr,
            per_device_train_batch_size=BATCH,
            per_device_eval_batch_size=BATCH,
            num_train_epochs=EPOCHS,
            warmup_steps=0.1,            # ratio of total steps
            weight_decay=0.01,
            lr_scheduler_type="linear",
            logging_steps=4,
            eval_strategy="epoch",
            save_strategy="no",
            report_to=[],
            disable_tqdm=True,
            seed=SEED,
            use_cpu=True,
        )
        trainer = Trainer(model=model, args=args,
                          train_dataset=DS(x_train, y_train),
                          eval_dataset=DS(x_val, y_val),
                          compute_metrics=compute_metrics)
        result = trainer.train()
        print(result, flush=True)
        metrics = trainer.evaluate()
        print(metrics, flush=True)
        trainer.state.save_to_json(os.path.join(outdir, "trainer_state.json"))
        final = os.path.join(tmp, "bert-finetuned", "final")
        trainer.save_model(final)          # what a user keeps; only its config.json is copied
        shutil.copyfile(os.path.join(final, "config.json"), os.path.join(outdir, "config.json"))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--pretrain":
        pretrain(sys.argv[2])
        return
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        train(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    env = dict(os.environ, PYTHONUNBUFFERED="1", TOKENIZERS_PARALLELISM="false")
    me = os.path.abspath(__file__)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = "tiny-bert-base"     # relative to tmp, so the log names it like a hub id
        rc = subprocess.call([sys.executable, me, "--pretrain", ckpt], env=env, cwd=tmp,
                             stdout=subprocess.DEVNULL)
        print(f"pretrain: exit {rc}")
        if rc:
            sys.exit(rc)
        for name, lr in RUNS.items():
            outdir = os.path.abspath(os.path.join(root, name))
            os.makedirs(outdir, exist_ok=True)
            with open(os.path.join(outdir, "train.log"), "w") as log:
                rc = subprocess.call([sys.executable, me, "--child", name, outdir, repr(lr), ckpt],
                                     stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp)
            print(f"{name}: exit {rc}")


if __name__ == "__main__":
    main()
