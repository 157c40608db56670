"""Train a small MLP on a 4-class problem with a plain PyTorch loop."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--epochs", type=int, default=15)
parser.add_argument("--batch-size", type=int, default=64)
args = parser.parse_args()

torch.manual_seed(0)
rng = np.random.default_rng(0)
centers = rng.normal(0, 1.0, size=(4, 20))


def make_data(n):
    y = rng.integers(0, 4, size=n)
    x = centers[y] + rng.normal(0, 1.5, size=(n, 20))
    return torch.tensor(x, dtype=torch.float32), torch.tensor(y)


x_train, y_train = make_data(4000)
x_val, y_val = make_data(1000)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.bn1 = nn.BatchNorm1d(64)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        x = self.drop(F.relu(self.bn1(self.fc1(x))))
        return self.fc2(x)


model = Net()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True)
val_loader = DataLoader(TensorDataset(x_val, y_val), batch_size=256)


def train_one_epoch():
    model.train()
    total = 0.0
    for xb, yb in train_loader:
        optimizer.zero_grad()
        out = model(xb)
        loss = criterion(out, yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(train_loader.dataset)


def evaluate():
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for xb, yb in val_loader:
            out = model(xb)
            loss_sum += criterion(out, yb).item() * xb.size(0)
            correct += (out.argmax(1) == yb).sum().item()
            total += yb.size(0)
    return loss_sum / total, correct / total


for epoch in range(1, args.epochs + 1):
    train_loss = train_one_epoch()
    val_loss, val_acc = evaluate()
    print(f"Epoch {epoch}/{args.epochs} - loss: {train_loss:.4f} - val_loss: {val_loss:.4f} - val_acc: {val_acc:.4f}")
