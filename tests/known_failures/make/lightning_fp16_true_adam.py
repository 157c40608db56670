"""Regenerate the pure-fp16 Adam runs (real LightningCLI, torch CPU).

    python tests/known_failures/make/lightning_fp16_true_adam.py OUTDIR

writes OUTDIR/lightning_fp16_true_adam_eps_default/ and OUTDIR/lightning_fp16_true_adam_eps_1e-4/, each
holding what the run itself wrote: train.log (stdout+stderr of the script) and lightning_logs/version_0/
{config.yaml (LightningCLI's), hparams.yaml, metrics.csv (CSVLogger)}. Checkpoints are deleted.

Both train a bag-of-embeddings classifier (an nn.Embedding of 64 tokens, of which the data uses 40, a
mean, a linear head) with ``trainer.precision=16-true``: weights, gradients and Adam's moments all in
float16, no fp32 master copy. The only difference is Adam's ``eps``. At torch's default 1e-8, eps rounds
to 0 in float16; the embedding rows of the 24 unused tokens get a gradient of exactly 0, so their first
Adam step is 0 / (sqrt(0) + 0) = NaN, and the NaN reaches every logit on the next forward: the loss is NaN
from the second step on. With eps 1e-4 (representable in float16) the same run trains.

Each run is executed as a child process whose stdout/stderr go to train.log, as a user's
``python train.py fit ... > train.log 2>&1`` would.
"""
import os
import shutil
import subprocess
import sys

RUNS = {"lightning_fp16_true_adam_eps_default": None, "lightning_fp16_true_adam_eps_1e-4": 1e-4}
VOCAB, USED, DIM, CLASSES = 64, 40, 16, 4

CHILD = r'''
import torch, lightning as L
from lightning.pytorch.cli import LightningCLI

VOCAB, USED, DIM, CLASSES = %d, %d, %d, %d


class Bag(L.LightningModule):
    def __init__(self, vocab: int = VOCAB, dim: int = DIM, classes: int = CLASSES):
        super().__init__()
        self.save_hyperparameters()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, x):
        return self.head(self.emb(x).mean(1))

    def training_step(self, batch, i):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self(x).float(), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss


class Tokens(L.LightningDataModule):
    def __init__(self, batch_size: int = 32):
        super().__init__()
        self.batch_size = batch_size

    def train_dataloader(self):
        g = torch.Generator().manual_seed(0)
        x = torch.randint(0, USED, (1024, 12), generator=g)
        y = (x %% CLASSES).mode(1).values  # the most frequent residue: learnable
        return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=self.batch_size)


LightningCLI(Bag, Tokens, seed_everything_default=0, save_config_kwargs={"overwrite": True},
             trainer_defaults={"logger": {"class_path": "lightning.pytorch.loggers.CSVLogger", "init_args": {"save_dir": "."}},
                               "log_every_n_steps": 4, "enable_checkpointing": False})
''' % (VOCAB, USED, DIM, CLASSES)


def main() -> None:
    out = os.path.abspath(sys.argv[1])
    for name, eps in RUNS.items():
        run = os.path.join(out, name)
        shutil.rmtree(run, ignore_errors=True)
        os.makedirs(run)
        script = os.path.join(run, "_train.py")
        with open(script, "w") as f:
            f.write(CHILD)
        args = [sys.executable, script, "fit", "--trainer.precision=16-true", "--trainer.max_epochs=3",
                "--trainer.accelerator=cpu", "--optimizer=Adam", "--optimizer.lr=0.01"]
        if eps is not None:
            args.append(f"--optimizer.eps={eps}")
        with open(os.path.join(run, "train.log"), "w") as log:
            subprocess.run(args, cwd=run, stdout=log, stderr=subprocess.STDOUT, check=False,
                           env=dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="120"))
        os.remove(script)
        for root, _dirs, files in os.walk(run):
            for fn in files:
                if fn.endswith(".ckpt"):
                    os.remove(os.path.join(root, fn))


if __name__ == "__main__":
    main()
