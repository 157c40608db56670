"""Train a small MLP on a 4-class problem with PyTorch Lightning."""
import lightning as L
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
centers = rng.normal(0, 1.0, size=(4, 20))


def make_data(n):
    y = rng.integers(0, 4, size=n)
    x = centers[y] + rng.normal(0, 1.5, size=(n, 20))
    return TensorDataset(torch.tensor(x, dtype=torch.float32), torch.tensor(y))


class Classifier(L.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 4))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


train_loader = DataLoader(make_data(4000), batch_size=64, shuffle=True)
val_loader = DataLoader(make_data(1000), batch_size=256)
trainer = L.Trainer(max_epochs=10, logger=False, enable_checkpointing=False)
trainer.fit(Classifier(), train_loader, val_loader)
