"""Synthetic dump trees of a small tensor-parallel block: ``step{s}/rank{r}/`` plain .npy dumps with a manifest.

Each rank computes embed (its own data shard) -> gelu -> all_reduce (the mean
over ranks: every rank then holds the same tensor) -> fc2, and the weights
move a little each step. Faults, on the run side only:
- ``rank``: one rank's all-reduce output is corrupted at one step; from the
  next step every rank's weights differ (the corrupted gradients were averaged);
- ``operator``: gelu's tanh approximation on every rank at every step;
- ``data``: one rank reads another shard than the baseline's rank does;
- ``compute``: one rank's fc2 output is wrong at one step (a faulty card).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

D = 32


def _gelu(x: np.ndarray, tanh: bool) -> np.ndarray:
    if tanh:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    from math import erf

    return 0.5 * x * (1 + np.vectorize(erf)(x / math.sqrt(2)))


def write_tree(
    root: Path,
    ranks: int = 8,
    steps: int = 3,
    fault: str | None = None,
    fault_rank: int = 5,
    fault_step: int = 1,
    rank_dirs: bool = True,
) -> Path:
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((D, D)).astype(np.float32) / math.sqrt(D)
    w1 = rng.standard_normal((D, D)).astype(np.float32) / math.sqrt(D)
    for step in range(steps):
        drift = np.float32(1 + 0.01 * step)
        if fault == "rank" and step > fault_step:
            drift = np.float32(drift * 1.001)  # the averaged corrupted gradient moved every rank's weights
        gs, xs = [], []
        for rank in range(ranks):
            shard = rank + (ranks if fault == "data" and rank == fault_rank else 0)
            x = np.random.default_rng(1000 * step + shard).standard_normal((4, D)).astype(np.float32)
            h = x @ (w0 * drift)
            gs.append(_gelu(h, tanh=fault == "operator").astype(np.float32))
            xs.append((x, h))
        mean = np.mean(gs, axis=0).astype(np.float32)
        for rank in range(ranks):
            x, h = xs[rank]
            ar = mean.copy()
            if fault == "rank" and rank == fault_rank and step == fault_step:
                ar[0, :8] += np.float32(0.5)  # a corrupted collective
            out = ar @ w1
            if fault == "compute" and rank == fault_rank and step == fault_step:
                out = out * np.float32(1.05)
            tensors = [
                ("embed.forward.input.0", "Linear", x),
                ("embed.forward.output.0", "Linear", h),
                ("act.forward.output.0", "GELU", gs[rank]),
                ("allreduce.forward.output.0", "all_reduce", ar),
                ("fc2.forward.output.0", "Linear", out),
            ]
            folder = root / f"step{step}" / (f"rank{rank}" if rank_dirs else "")
            folder.mkdir(parents=True, exist_ok=True)
            entries = []
            for i, (name, op_type, arr) in enumerate(tensors):
                fname = f"{i:02d}_{name}.npy"
                np.save(folder / fname, arr, allow_pickle=False)
                entries.append({"name": name, "file": fname, "op_type": op_type})
            (folder / "manifest.json").write_text(json.dumps(entries), encoding="utf-8")
            if not rank_dirs:
                break
    return root
