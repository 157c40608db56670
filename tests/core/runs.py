"""Real (tiny) training runs for the core tests: least-squares regression by
gradient descent in numpy, logging like a hand-written loop would.

At lr 0.05 it converges; at lr 1.5 the iteration diverges (the largest
eigenvalue of X^T X / n is about 3.5 here, so any lr above ~0.57 blows up)
until the loss overflows to inf and then NaN.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def train_regression(folder: Path, lr: float, steps: int = 120, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    n, d = 256, 8
    X = rng.normal(size=(n, d)) * np.linspace(0.5, 2.5, d)
    w_true = rng.normal(size=d)
    y = X @ w_true + 0.1 * rng.normal(size=n)
    w = np.zeros(d)
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    with np.errstate(over="ignore", invalid="ignore"):
        for step in range(1, steps + 1):
            err = X @ w - y
            loss = float(np.mean(err ** 2))
            grad = 2 * X.T @ err / n
            w = w - lr * grad
            lines.append(json.dumps({"step": step, "loss": loss, "lr": lr}))
    (folder / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "hparams.yaml").write_text(f"optimizer:\n  name: sgd\n  lr: {lr}\nbatch_size: {n}\nepochs: {steps}\n")
    return folder
