"""Plain PyTorch and PyTorch Lightning training programs.

PyTorch: ``print(model)`` and ``print("criterion:", criterion)`` at the start, one line per
logged step (``epoch E step S loss L lr R``) and per evaluation (``epoch E val_loss V val_acc A``),
hparams.yaml, and a data sample (data/train.npz, data/eval.npz) as advisor's README suggests.
Lightning: ``print(model)``, CSVLogger's metrics.csv and hparams.yaml (written by Lightning).
"""

from __future__ import annotations

from pathlib import Path

from common import console_log, load, save_sample, write_yaml


def _build(s: dict, n_in: int):
    import torch
    from torch import nn

    acts = {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid}
    mods: list = []
    width = n_in
    for units in s["hidden"]:
        mods.append(nn.Linear(width, units))
        if s["hidden_act"]:
            mods.append(acts[s["hidden_act"]]())
        width = units
    mods.append(nn.Linear(width, s["out_units"]))
    if s["out_act"] == "softmax":
        mods.append(nn.Softmax(dim=1))
    elif s["out_act"] == "sigmoid":
        mods.append(nn.Sigmoid())
    elif s["out_act"] == "relu":
        mods.append(nn.ReLU())
    model = nn.Sequential(*mods)
    if s["init"] in ("zeros", "huge"):
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, nn.Linear):
                    if s["init"] == "zeros":
                        nn.init.zeros_(m.weight)
                        nn.init.zeros_(m.bias)
                    else:
                        nn.init.normal_(m.weight, std=3.0)
    return model


def _criterion(s: dict):
    from torch import nn

    return {"CrossEntropyLoss": nn.CrossEntropyLoss, "MSELoss": nn.MSELoss, "BCEWithLogitsLoss": nn.BCEWithLogitsLoss,
            "BCELoss": nn.BCELoss, "L1Loss": nn.L1Loss, "NLLLoss": nn.NLLLoss}[s["loss"]]()


def _targets(s: dict, y, out):
    """Targets in the form the configured loss takes."""
    import torch

    if s["loss"] in ("CrossEntropyLoss", "NLLLoss"):
        return y.long()
    return y.float().reshape(out.shape) if out.shape[-1] == 1 else torch.nn.functional.one_hot(
        y.long(), out.shape[-1]).float()


def _predict(s: dict, out):
    if s["task"] == "regression":
        return None
    if out.shape[-1] == 1:
        if s["loss"] in ("MSELoss", "L1Loss") and s["task"] == "multiclass":
            return out.squeeze(-1).round().long()
        thr = 0.5 if s["out_act"] == "sigmoid" else 0.0
        return (out.squeeze(-1) > thr).long()
    return out.argmax(-1)


def _optimizer(s: dict, params):
    import torch

    if s["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=s["lr"], momentum=s.get("momentum", 0.0))
    return torch.optim.Adam(params, lr=s["lr"])


def _hparams(s: dict, framework: str) -> dict:
    hp = {"framework": framework, "dataset": s["dataset"], "model": "mlp", "hidden_sizes": s["hidden"],
          "optimizer": s["optimizer"], "lr": s["lr"], "batch_size": s["batch_size"], "max_epochs": s["epochs"],
          "criterion": s["loss"], "weight_init": {"zeros": "zeros", "huge": "normal"}.get(s["init"], "kaiming_uniform"),
          "seed": s.get("seed", 0)}
    if s["init"] == "huge":
        hp["init_std"] = 3.0
    if s["optimizer"] == "sgd":
        hp["momentum"] = s.get("momentum", 0.0)
    if s.get("write_num_classes") and s["task"] != "regression":
        hp["num_classes"] = s["n_classes"]
    return hp


def run_torch(s: dict, out_dir: Path) -> None:
    import numpy as np
    import torch

    torch.manual_seed(s.get("seed", 0))
    xt, yt, xe, ye = load(s["dataset"], normalize=s.get("normalize", True), label_noise=s.get("label_noise", 0.0))
    model = _build(s, xt.shape[1])
    crit = _criterion(s)
    opt = _optimizer(s, model.parameters())
    Xt, Yt, Xe, Ye = map(torch.as_tensor, (xt, yt, xe, ye))
    step = 0
    with console_log(out_dir):
        print(model)
        print("criterion:", crit)
        for epoch in range(1, s["epochs"] + 1):
            model.train()
            perm = torch.randperm(len(Xt))
            for i in range(0, len(Xt), s["batch_size"]):
                idx = perm[i:i + s["batch_size"]]
                out = model(Xt[idx])
                loss = crit(out, _targets(s, Yt[idx], out))
                opt.zero_grad()
                loss.backward()
                opt.step()
                step += 1
                if step % s.get("log_every", 5) == 0:
                    print(f"epoch {epoch} step {step} loss {loss.item():.4f} lr {s['lr']}")
            model.eval()
            with torch.no_grad():
                out = model(Xe)
                vloss = crit(out, _targets(s, Ye, out)).item()
                pred = _predict(s, out)
            line = f"epoch {epoch} val_loss {vloss:.4f}"
            if pred is not None:
                line += f" val_acc {float((pred == Ye.long()).float().mean()):.4f}"
            print(line)
    write_yaml(out_dir / "hparams.yaml", _hparams(s, "pytorch"))
    save_sample(out_dir, xt, np.asarray(yt), xe, np.asarray(ye))


def run_lightning(s: dict, out_dir: Path) -> None:
    import lightning as L
    import torch
    from lightning.pytorch.loggers import CSVLogger
    from torch.utils.data import DataLoader, TensorDataset

    L.seed_everything(s.get("seed", 0), verbose=False)
    xt, yt, xe, ye = load(s["dataset"], normalize=s.get("normalize", True), label_noise=s.get("label_noise", 0.0))

    class Module(L.LightningModule):
        def __init__(self, hp: dict, n_in: int) -> None:
            super().__init__()
            self.save_hyperparameters(hp)
            self.net = _build(s, n_in)
            self.crit = _criterion(s)

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, _):
            x, y = batch
            out = self(x)
            loss = self.crit(out, _targets(s, y, out))
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch, _):
            x, y = batch
            out = self(x)
            self.log("val_loss", self.crit(out, _targets(s, y, out)))
            pred = _predict(s, out)
            if pred is not None:
                self.log("val_acc", (pred == y.long()).float().mean())

        def configure_optimizers(self):
            return _optimizer(s, self.parameters())

    hp = _hparams(s, "pytorch")
    model = Module(hp, xt.shape[1])
    tl = DataLoader(TensorDataset(torch.as_tensor(xt), torch.as_tensor(yt)), batch_size=s["batch_size"], shuffle=True)
    vl = DataLoader(TensorDataset(torch.as_tensor(xe), torch.as_tensor(ye)), batch_size=256)
    with console_log(out_dir):
        print(model)
        trainer = L.Trainer(max_epochs=s["epochs"], logger=CSVLogger(str(out_dir), name="", version=""),
                            log_every_n_steps=s.get("log_every", 5), enable_progress_bar=False,
                            enable_checkpointing=False, enable_model_summary=True, accelerator="cpu", devices=1)
        trainer.fit(model, tl, vl)
