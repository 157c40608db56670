"""Lightning programs run with Lightning's defaults, the way most users run them (a held-out probe).

Unlike ``torch_programs.run_lightning`` (progress bar off, a CSVLogger, the model printed), these keep
``Trainer(max_epochs=..., default_root_dir=RUN)`` as it comes: the progress bar (Lightning 2.6 picks
``RichProgressBar`` when rich is installed, as here, which prints only its last frame when stdout is a file;
``TQDMProgressBar`` otherwise, whose every refresh is a ``\\r``-separated frame in train.log), the model summary, the default logger
(TensorBoard, installed here: ``lightning_logs/version_0/events.out.tfevents.*`` and ``hparams.yaml`` from
``self.save_hyperparameters()``), ``self.log("train_loss", loss, prog_bar=True)``, ``self.log("val_loss", ...)``,
``self.log("val_acc", ...)``. The script runs in a child process whose stdout and stderr are the run's train.log,
as ``python train.py > train.log 2>&1`` keeps them.

Two programs (see ``PROGRAMS``):

- ``lightning_bar_cnn_digits``: a small 2D CNN (two conv blocks with BatchNorm, dropout before the head) on
  scikit-learn's 8x8 digits, Adam, the default (rich) bar, ``trainer.validate()`` after ``fit`` (its results
  table is printed);
- ``lightning_bar_mlp_synth``: an MLP on a ``make_classification`` problem (20 features, 4 classes) whose
  features come in raw units (each feature scaled and shifted, as measurements arrive) and are standardised by
  the script, SGD with momentum, ``TQDMProgressBar`` (what a user without rich gets by default).

``python lightning_bar_programs.py --log-only SRC DST`` copies a generated set keeping train.log alone (the
second view: a user who sends only the log), with its labels.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

_BASE = {"runner": "lightning_bar", "hidden_act": "relu", "init": "default", "normalize": True, "label_noise": 0.0,
         "seed": 0, "out_act": None, "loss": "CrossEntropyLoss", "task": "multiclass"}

#: program name -> (runner, healthy settings), merged into generate.PROGRAMS
PROGRAMS: dict[str, tuple[str, dict]] = {
    "lightning_bar_cnn_digits": ("lightning_bar", {**_BASE, "arch": "cnn", "dataset": "digits", "n_classes": 10,
                                                   "out_units": 10, "optimizer": "adam", "lr": 1e-3, "epochs": 12,
                                                   "batch_size": 32, "dropout": 0.25, "validate_after": True}),
    "lightning_bar_mlp_synth": ("lightning_bar", {**_BASE, "arch": "mlp", "dataset": "synth4", "n_classes": 4,
                                                  "hidden": [128, 64], "out_units": 4, "optimizer": "sgd",
                                                  "momentum": 0.9, "lr": 0.02, "epochs": 25, "batch_size": 64,
                                                  "tqdm_bar": True}),
}


def operators(base: dict) -> list[tuple[str, dict, str, list[str]]]:
    """(operator, changed settings, true cause, also-acceptable causes): a second seed healthy, then the fault
    operators of generate.py that apply to these programs."""
    ops: list[tuple[str, dict, str, list[str]]] = [
        ("healthy_seed1", {"seed": 1}, None, []),
        ("loss", {"loss": "MSELoss", "out_units": 1}, "loss_function_error", []),
        ("output_activation", {"out_act": "softmax"}, "loss_function_error", []),
        ("lr_high", {"lr": base["lr"] * (1000 if base["optimizer"] == "adam" else 100)}, "lr_too_high",
         ["gradient_explosion"]),
        ("lr_low", {"lr": base["lr"] / 1000}, "lr_too_low", []),
        ("epochs", {"epochs": 2}, "insufficient_epochs", []),
        ("init", {"init": "zeros"}, "weight_init_bad", []),
        ("labels", {"label_noise": 0.4}, "label_errors", []),
        ("batch_size", {"batch_size": 1024}, "insufficient_epochs", ["lr_too_low"]),
    ]
    if base["arch"] == "mlp":
        # (the CNN normalises its first convolution's output with BatchNorm, which takes out the input scale:
        # unscaled digits train as well there, so there is nothing to find)
        ops.append(("normalization", {"normalize": False}, "not_normalized", []))
        ops.append(("hidden_activation", {"hidden_act": None}, "wrong_operator", []))
        ops.append(("optimizer", {"optimizer": "adam"}, "lr_too_high", ["optimizer_error"]))
    return ops


def _synth(normalize: bool, label_noise: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """make_classification (20 features, 4 classes) in raw units; standardised on the training split unless
    normalize is False; label_noise shuffles that share of the training labels."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import train_test_split

    x, y = make_classification(n_samples=2000, n_features=20, n_informative=10, n_redundant=4, n_classes=4,
                               n_clusters_per_class=2, class_sep=1.5, random_state=7)
    rng = np.random.default_rng(7)
    x = x * 10 ** rng.uniform(0, 3, 20) + rng.uniform(-500, 500, 20)  # measurements in their own units
    xt, xe, yt, ye = train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)
    if normalize:
        mu, sd = xt.mean(0), xt.std(0) + 1e-8
        xt, xe = (xt - mu) / sd, (xe - mu) / sd
    if label_noise > 0:
        r = np.random.default_rng(seed + 1)
        idx = r.choice(len(yt), int(label_noise * len(yt)), replace=False)
        yt = yt.copy()
        yt[idx] = r.permutation(yt[idx])
    return xt.astype(np.float32), yt.astype(np.int64), xe.astype(np.float32), ye.astype(np.int64)


def _data(s: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    if s["dataset"] == "synth4":
        return _synth(s["normalize"], s["label_noise"], s["seed"])
    from common import load

    xt, yt, xe, ye = load(s["dataset"], normalize=s["normalize"], label_noise=s["label_noise"], seed=s["seed"])
    return xt.reshape(-1, 1, 8, 8), yt, xe.reshape(-1, 1, 8, 8), ye


def _net(s: dict, n_in: int):
    from torch import nn

    mods: list = []
    if s["arch"] == "cnn":
        mods += [nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                 nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                 nn.Flatten(), nn.Dropout(s["dropout"]), nn.Linear(32 * 2 * 2, s["out_units"])]
    else:
        width = n_in
        for units in s["hidden"]:
            mods.append(nn.Linear(width, units))
            if s["hidden_act"]:
                mods.append(nn.ReLU())
            width = units
        mods.append(nn.Linear(width, s["out_units"]))
    if s["out_act"] == "softmax":
        mods.append(nn.Softmax(dim=1))
    net = nn.Sequential(*mods)
    if s["init"] == "zeros":
        for m in net.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                nn.init.zeros_(m.weight)
                nn.init.zeros_(m.bias)
    return net


def train(s: dict, out_dir: Path) -> None:
    """The user's script: a LightningModule, Lightning's defaults, ``trainer.fit``."""
    import lightning as L
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_num_threads(1)
    L.seed_everything(s["seed"])
    xt, yt, xe, ye = _data(s)

    class Classifier(L.LightningModule):
        def __init__(self, n_in: int, n_classes: int, lr: float, optimizer: str, momentum: float,
                     batch_size: int, loss: str) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.net = _net(s, n_in)
            self.criterion = nn.MSELoss() if loss == "MSELoss" else nn.CrossEntropyLoss()

        def forward(self, x):
            return self.net(x)

        def _loss(self, out, y):
            if isinstance(self.criterion, nn.MSELoss):
                return self.criterion(out.squeeze(-1), y.float())
            return self.criterion(out, y)

        def _pred(self, out):
            return out.squeeze(-1).round().long() if out.shape[-1] == 1 else out.argmax(-1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = self._loss(self(x), y)
            self.log("train_loss", loss, prog_bar=True)
            return loss

        def validation_step(self, batch, batch_idx):
            x, y = batch
            out = self(x)
            self.log("val_loss", self._loss(out, y), prog_bar=True)
            self.log("val_acc", (self._pred(out) == y).float().mean(), prog_bar=True)

        def configure_optimizers(self):
            if self.hparams.optimizer == "sgd":
                return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=self.hparams.momentum)
            return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)

    model = Classifier(n_in=int(np.prod(xt.shape[1:])), n_classes=s["n_classes"], lr=s["lr"],
                       optimizer=s["optimizer"], momentum=s.get("momentum", 0.0), batch_size=s["batch_size"],
                       loss=s["loss"])
    train_dl = DataLoader(TensorDataset(torch.as_tensor(xt), torch.as_tensor(yt)), batch_size=s["batch_size"],
                          shuffle=True)
    val_dl = DataLoader(TensorDataset(torch.as_tensor(xe), torch.as_tensor(ye)), batch_size=256)
    callbacks = []
    if s.get("tqdm_bar"):  # Lightning's default where rich is not installed (here it is)
        from lightning.pytorch.callbacks import TQDMProgressBar

        callbacks.append(TQDMProgressBar())
    trainer = L.Trainer(max_epochs=s["epochs"], default_root_dir=str(out_dir), callbacks=callbacks,
                        accelerator="cpu")
    trainer.fit(model, train_dl, val_dl)
    if s.get("validate_after"):
        trainer.validate(model, val_dl)


def run(s: dict, out_dir: Path) -> None:
    """Train in a child process whose stdout and stderr go to train.log (``python train.py > train.log 2>&1``)."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    env.pop("TQDM_MINITERS", None)
    with open(out_dir / "train.log", "w", encoding="utf-8") as fh:
        proc = subprocess.run([sys.executable, __file__, json.dumps(s), str(out_dir)], stdout=fh,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                              cwd=str(Path(__file__).parent), check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{out_dir}: training exited with {proc.returncode}; see its train.log")


def log_only(src: Path, dst: Path, prefix: str = "lightning_bar_") -> int:
    """Copy the runs of src (a generated set) whose program starts with prefix into dst, train.log alone."""
    labels = json.loads((src / "labels.json").read_text(encoding="utf-8"))
    kept = {k: v for k, v in labels.items() if k.startswith(prefix)}
    for name in kept:
        (dst / name).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / name / "train.log", dst / name / "train.log")
    (dst / "labels.json").write_text(json.dumps(kept, indent=1), encoding="utf-8")
    return len(kept)


if __name__ == "__main__":
    if sys.argv[1] == "--log-only":
        print(f"{log_only(Path(sys.argv[2]), Path(sys.argv[3]))} runs copied (train.log alone)")
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        train(json.loads(sys.argv[1]), Path(sys.argv[2]))
