"""Regenerate the peft LoRA recipe runs (real transformers + peft, CPU).

    python tests/recipes/make/peft_lora.py OUTDIR

writes OUTDIR/peft_lora_recipe/ and OUTDIR/peft_lora_scale_high/, each holding
what the run itself wrote: train.log (stdout+stderr of the script, with
Trainer's log dicts, print(model) and print_trainable_parameters()),
config.json (the base model's config), adapter_config.json (peft's, as
save_pretrained writes it) and trainer_state.json (Trainer's state at the end).
No weights, no training_args.bin.

Model: a tiny Llama built from a LlamaConfig (hidden 64, 2 layers, 4 heads,
vocab 256), no download.  LoRA adapts a *pre-trained* base, so the generator
first pre-trains the base once (full fine-tuning, lr 1e-3, into a temporary
folder whose output is not part of the run folders), standing in for the
downloaded base checkpoint.  Base data: a Markov chain where token t is
followed by one of t+1..t+4 (mod 256) uniformly -- the best loss is ln 4.
Fine-tuning data: the same chain made deterministic (t is always followed by
t+1), which the base model does not know (its loss starts near ln 4 = 1.386)
and LoRA can learn.

Recipe: LoRA, Hu et al. 2021, https://arxiv.org/abs/2106.09685, with the
QLoRA training settings of Dettmers et al. 2023,
https://arxiv.org/abs/2305.14314 (AdamW lr 2e-4, batch 16, constant schedule,
warmup ratio 0.03, max_grad_norm 0.3, lora_dropout 0.05, all linear layers):
r=8, lora_alpha=16, i.e. scaling alpha/r = 2.  The broken run keeps
everything but sets lora_alpha=8192 (scaling 1024; see RUNS for why not 1024).

Each run is executed as a child process whose stdout/stderr go to train.log,
as a user's `python train.py > train.log 2>&1` would.
"""
import os
import subprocess
import sys
import tempfile

RUNS = {
    # name: (r, lora_alpha)
    "peft_lora_recipe": (8, 16),        # scaling 2
    # On this tiny fp32 model lora_alpha=1024 (scaling 128) and 4096 (512) do not
    # break training: the loss falls faster than the recipe's, with grad_norm
    # 25-250x the recipe's.  lora_alpha=8192 (scaling 1024) blows the loss up
    # from 1.6 to ~4.6 in the first steps and it ends worse than it started.
    "peft_lora_scale_high": (8, 8192),  # scaling 1024
}
SEED = 1234
LR = 2e-4
BATCH = 16
EPOCHS = 2
SEQ_LEN = 32
VOCAB = 256
N_PRETRAIN, N_TRAIN, N_VAL = 4096, 2048, 256


def make_chain(n, rng, deterministic):
    import numpy as np
    ids = np.empty((n, SEQ_LEN), dtype="int64")
    ids[:, 0] = rng.integers(0, VOCAB, size=n)
    for j in range(1, SEQ_LEN):
        step = 1 if deterministic else rng.integers(1, 5, size=n)
        ids[:, j] = (ids[:, j - 1] + step) % VOCAB
    return ids


def _imports():
    # The torchvision wheel in this environment does not match torch; the script
    # does not need it, so keep transformers from importing it.
    sys.modules["torchvision"] = None
    import torch
    torch.set_num_threads(1)

    class DS(torch.utils.data.Dataset):
        def __init__(self, x):
            self.x = torch.tensor(x)

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            return {"input_ids": self.x[i],
                    "attention_mask": torch.ones_like(self.x[i]),
                    "labels": self.x[i]}
    return DS


def pretrain(ckpt):
    """Stand-in for the published base checkpoint: saved to ckpt (a temp folder)."""
    DS = _imports()
    import numpy as np
    from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments, set_seed
    set_seed(SEED)
    rng = np.random.default_rng(SEED + 1)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                         max_position_embeddings=64, bos_token_id=None, eos_token_id=None,
                         pad_token_id=None, tie_word_embeddings=False)
    model = LlamaForCausalLM(config)
    args = TrainingArguments(output_dir=os.path.join(ckpt, "_trainer"), learning_rate=1e-3,
                             per_device_train_batch_size=32, num_train_epochs=3,
                             warmup_steps=0.05, logging_steps=32, save_strategy="no",
                             report_to=[], disable_tqdm=True, seed=SEED, use_cpu=True)
    Trainer(model=model, args=args, train_dataset=DS(make_chain(N_PRETRAIN, rng, False))).train()
    model.save_pretrained(ckpt)


def train(name, outdir, ckpt):
    DS = _imports()
    import numpy as np
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import LlamaForCausalLM, Trainer, TrainingArguments, set_seed

    r, alpha = RUNS[name]
    set_seed(SEED)
    rng = np.random.default_rng(SEED)
    x_train = make_chain(N_TRAIN, rng, True)
    x_val = make_chain(N_VAL, rng, True)

    model = LlamaForCausalLM.from_pretrained(ckpt)
    lora = LoraConfig(task_type=TaskType.CAUSAL_LM, r=r, lora_alpha=alpha,
                      lora_dropout=0.05, target_modules="all-linear", bias="none")
    model = get_peft_model(model, lora)
    print(model)
    model.print_trainable_parameters()
    print(f"LoRA fine-tuning: r={r} lora_alpha={alpha} (scaling {alpha / r:g}) AdamW lr={LR} "
          f"batch_size={BATCH} epochs={EPOCHS} train={N_TRAIN} val={N_VAL}", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "lora-out")
        args = TrainingArguments(
            output_dir=out,
            learning_rate=LR,
            per_device_train_batch_size=BATCH,
            per_device_eval_batch_size=BATCH,
            num_train_epochs=EPOCHS,
            lr_scheduler_type="constant_with_warmup",
            warmup_steps=0.03,           # ratio of total steps
            max_grad_norm=0.3,
            weight_decay=0.0,
            logging_steps=4,
            eval_strategy="epoch",
            save_strategy="no",
            report_to=[],
            disable_tqdm=True,
            seed=SEED,
            use_cpu=True,
        )
        trainer = Trainer(model=model, args=args,
                          train_dataset=DS(x_train), eval_dataset=DS(x_val))
        result = trainer.train()
        print(result, flush=True)
        metrics = trainer.evaluate()
        print(metrics, flush=True)
        trainer.state.save_to_json(os.path.join(outdir, "trainer_state.json"))
        model.peft_config["default"].save_pretrained(outdir)        # adapter_config.json
        model.get_base_model().config.to_json_file(os.path.join(outdir, "config.json"))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--pretrain":
        pretrain(sys.argv[2])
        return
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        train(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    env = dict(os.environ, PYTHONUNBUFFERED="1", TOKENIZERS_PARALLELISM="false")
    me = os.path.abspath(__file__)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = "tiny-llama-base"    # relative to tmp, so the log names it like a hub id
        rc = subprocess.call([sys.executable, me, "--pretrain", ckpt], env=env, cwd=tmp,
                             stdout=subprocess.DEVNULL)
        print(f"pretrain: exit {rc}")
        if rc:
            sys.exit(rc)
        for name in RUNS:
            outdir = os.path.abspath(os.path.join(root, name))
            os.makedirs(outdir, exist_ok=True)
            with open(os.path.join(outdir, "train.log"), "w") as log:
                rc = subprocess.call([sys.executable, me, "--child", name, outdir, ckpt],
                                     stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp)
            print(f"{name}: exit {rc}")


if __name__ == "__main__":
    main()
