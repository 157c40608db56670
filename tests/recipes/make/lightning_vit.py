"""Regenerate the Lightning ViT recipe runs (real Lightning + transformers, CPU).

    python tests/recipes/make/lightning_vit.py OUTDIR

writes OUTDIR/lightning_vit_recipe_rate_few_epochs/, OUTDIR/lightning_vit_lr_high/ and
OUTDIR/lightning_vit_lr_0p01/, each
holding what the run itself wrote: train.log (stdout+stderr), config.json
(the HF ViTConfig) and lightning_logs/version_0/{hparams.yaml,metrics.csv}
(Lightning's CSVLogger).  Checkpoints are deleted afterwards.

Recipe: DeiT, Touvron et al. 2021, https://arxiv.org/abs/2012.12877 -- AdamW,
lr 5e-4 x batch/512, weight decay 0.05, 5 warm-up epochs, cosine decay.  At
batch 32 that is lr 3.125e-5.  lightning_vit_lr_high uses lr 1.0 (32000x) with
no warm-up, everything else the same: it blows up (first logged loss ~126)
and ends stuck at ln(10).  lightning_vit_lr_0p01 (lr 1e-2, 320x, no warm-up)
is kept as a caution: this tiny ViT on this easy task trains fine at 1e-2
(better than at the scaled recipe), so a far-above-recipe lr alone is not a
proof of failure.

Each run is executed as a child process whose stdout/stderr go to train.log.
"""
import math
import os
import shutil
import subprocess
import sys

BATCH = 32
RUNS = {
    # name: (learning_rate, warmup_epochs)
    "lightning_vit_recipe_rate_few_epochs": (5e-4 * BATCH / 512, 5),   # 3.125e-5
    "lightning_vit_lr_high": (1.0, 0),                 # 32000x the scaled recipe
    "lightning_vit_lr_0p01": (1e-2, 0),                # 320x: still trains here
}
SEED = 1234
MAX_EPOCHS = 30
N_TRAIN, N_VAL = 1024, 256


def make_data(n, gen):
    """Noise images (NCHW); class = which cell of a 2x5 grid holds a bright block."""
    import torch
    x = torch.rand(n, 3, 32, 32, generator=gen) * 0.3
    y = torch.randint(0, 10, (n,), generator=gen)
    for i, c in enumerate(y.tolist()):
        r, col = divmod(c, 5)
        x[i, :, r * 16 + 2:r * 16 + 14, col * 6 + 1:col * 6 + 6] += 0.6
    return (x - 0.5) / 0.25, y


def hide_broken_torchvision():
    """The runs need no torchvision.  A torchvision whose build does not match
    the installed torch breaks `import lightning` (through torchmetrics) with
    "operator torchvision::nms does not exist"; if so, hide it from this
    process, as if it were not installed."""
    probe = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True)
    if probe.returncode == 0:
        return
    import importlib.metadata as md
    real_version = md.version

    def version(name):
        if name.lower() == "torchvision":
            raise md.PackageNotFoundError(name)
        return real_version(name)

    md.version = version
    sys.modules["torchvision"] = None


def train(name, outdir):
    hide_broken_torchvision()
    import torch
    torch.set_num_threads(1)
    import lightning as L
    from lightning.pytorch.callbacks import LearningRateMonitor
    from lightning.pytorch.loggers import CSVLogger
    from torch.utils.data import DataLoader, TensorDataset
    from transformers import ViTConfig, ViTForImageClassification

    class LitViT(L.LightningModule):
        def __init__(self, model_name="vit", image_size=32, patch_size=8, hidden_size=64,
                     num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                     num_labels=10, optimizer="AdamW", lr=3.125e-5, weight_decay=0.05,
                     betas=(0.9, 0.999), warmup_epochs=5, scheduler="cosine",
                     batch_size=32, max_epochs=30, steps_per_epoch=32, seed=1234):
            super().__init__()
            self.save_hyperparameters()
            config = ViTConfig(image_size=image_size, patch_size=patch_size, num_channels=3,
                               hidden_size=hidden_size, num_hidden_layers=num_hidden_layers,
                               num_attention_heads=num_attention_heads,
                               intermediate_size=intermediate_size, num_labels=num_labels)
            self.model = ViTForImageClassification(config)

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = self.model(pixel_values=x, labels=y).loss
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch, batch_idx):
            x, y = batch
            out = self.model(pixel_values=x, labels=y)
            acc = (out.logits.argmax(-1) == y).float().mean()
            self.log("val_loss", out.loss, prog_bar=True)
            self.log("val_acc", acc, prog_bar=True)

        def configure_optimizers(self):
            hp = self.hparams
            opt = torch.optim.AdamW(self.parameters(), lr=hp.lr, weight_decay=hp.weight_decay,
                                    betas=tuple(hp.betas))
            warm = hp.warmup_epochs * hp.steps_per_epoch
            total = hp.max_epochs * hp.steps_per_epoch

            def factor(step):
                if step < warm:
                    return (step + 1) / warm
                t = (step - warm) / max(1, total - warm)
                return 0.5 * (1.0 + math.cos(math.pi * min(1.0, t)))

            sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    lr, warmup = RUNS[name]
    L.seed_everything(SEED)
    gen = torch.Generator().manual_seed(SEED)
    x_train, y_train = make_data(N_TRAIN, gen)
    x_val, y_val = make_data(N_VAL, gen)
    train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=BATCH, shuffle=True)
    val_loader = DataLoader(TensorDataset(x_val, y_val), batch_size=BATCH)

    module = LitViT(lr=lr, warmup_epochs=warmup, batch_size=BATCH, max_epochs=MAX_EPOCHS,
                    steps_per_epoch=len(train_loader), seed=SEED)
    module.model.config.to_json_file(os.path.join(outdir, "config.json"))
    trainer = L.Trainer(max_epochs=MAX_EPOCHS, accelerator="cpu", enable_progress_bar=False,
                        logger=CSVLogger(outdir, name="lightning_logs"),
                        callbacks=[LearningRateMonitor(logging_interval="epoch")],
                        log_every_n_steps=8, default_root_dir=outdir)
    trainer.fit(module, train_loader, val_loader)
    print(trainer.validate(module, val_loader, verbose=False))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        train(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for name in RUNS:
        outdir = os.path.join(root, name)
        if os.path.isdir(os.path.join(outdir, "lightning_logs")):
            shutil.rmtree(os.path.join(outdir, "lightning_logs"))  # keep version_0
        os.makedirs(outdir, exist_ok=True)
        with open(os.path.join(outdir, "train.log"), "w") as log:
            rc = subprocess.call([sys.executable, os.path.abspath(__file__), "--child", name, outdir],
                                 stdout=log, stderr=subprocess.STDOUT, env=env, cwd=outdir)
        for dirpath, _, files in os.walk(outdir):   # no weights in the test material
            for f in files:
                if f.endswith(".ckpt"):
                    os.remove(os.path.join(dirpath, f))
        ck = os.path.join(outdir, "lightning_logs", "version_0", "checkpoints")
        if os.path.isdir(ck) and not os.listdir(ck):
            os.rmdir(ck)
        print(f"{name}: exit {rc}")


if __name__ == "__main__":
    main()
