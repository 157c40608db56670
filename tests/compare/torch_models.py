"""Real dumps of small torch models, taken with forward hooks (CPU, one thread). Needs torch.

``take_dump(model, x, folder, layout=...)`` runs the model once and writes
every leaf module's inputs and outputs in execution order, either in the
plain layout (``NNNN_{module}.forward.{input|output}.{i}.npy`` + manifest.json)
or in the msprobe layout (dump.json with statistics, plus ``.pt`` files in
tensor mode), as msprobe itself writes them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)
nn = torch.nn
F = torch.nn.functional

def _record(module_name: str, module, args, output, calls: list) -> None:
    ins = [a for a in args if isinstance(a, torch.Tensor)]
    outs = output if isinstance(output, (tuple, list)) else [output]
    outs = [o for o in outs if isinstance(o, torch.Tensor)]
    calls.append((module_name, type(module).__name__, [t.detach().clone() for t in ins],
                  [t.detach().clone() for t in outs]))


def run_hooked(model, x) -> list:
    """(module name, class name, input tensors, output tensors) per leaf module call, in order."""
    calls: list = []
    handles = []
    for name, mod in model.named_modules():
        if name and not list(mod.children()):
            handles.append(mod.register_forward_hook(
                lambda m, a, o, _n=name: _record(_n, m, a, o, calls)))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return calls


def _stats(t) -> dict:
    f = t.double()
    return {"Max": float(f.max()), "Min": float(f.min()), "Mean": float(f.mean()), "Norm": float(f.norm())}


def take_dump(model, x, folder: Path, layout: str = "npy", mode: str = "tensor") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    calls = run_hooked(model, x)
    if layout == "npy":
        manifest = []
        k = 0
        for name, cls, ins, outs in calls:
            for role, tensors in (("input", ins), ("output", outs)):
                for i, t in enumerate(tensors):
                    tname = f"{name}.forward.{role}.{i}"
                    fname = f"{k:04d}_{tname}.npy"
                    np.save(folder / fname, t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy())
                    manifest.append({"name": tname, "file": fname, "op_type": cls})
                    k += 1
        (folder / "manifest.json").write_text(json.dumps(manifest))
        return folder
    data = {}
    counters: dict[str, int] = {}
    tdir = folder / "dump_tensor_data"
    if mode == "tensor":
        tdir.mkdir(exist_ok=True)
    for name, cls, ins, outs in calls:
        n = counters.get(cls, 0)
        counters[cls] = n + 1
        op = f"Module.{name}.{cls}.forward.{n}"
        entry = {"input_args": [], "input_kwargs": {}, "output": []}
        for role, key, tensors in (("input", "input_args", ins), ("output", "output", outs)):
            for i, t in enumerate(tensors):
                rec = {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape), **_stats(t),
                       "requires_grad": False}
                if mode == "tensor":
                    rec["data_name"] = f"{op}.{role}.{i}.pt"
                    torch.save(t.contiguous(), tdir / rec["data_name"])
                entry[key].append(rec)
            if role == "input":
                entry["input_args"].append({"type": "int", "value": 1})
        data[op] = entry
    (folder / "dump.json").write_text(json.dumps({"task": mode, "level": "L0", "framework": "pytorch",
                                                 "dump_data_dir": "/somewhere/else", "data": data}))
    return folder


# -- models with an injectable deviation ----------------------------------

class Standardize(nn.Module):
    """(x - mean) / (std + eps): with eps = 0, a constant row gives 0/0 = NaN."""

    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + self.eps)


class Halve(nn.Module):
    def __init__(self, floor: bool = False):
        super().__init__()
        self.floor = floor

    def forward(self, x):
        return x // 0.5 if self.floor else x / 0.5


class ShuffledSum(nn.Module):
    """Sums the features in a random order each call (like an atomics-based reduction)."""

    def __init__(self, order_seed: int | None):
        super().__init__()
        self.order_seed = order_seed

    def forward(self, x):
        idx = torch.arange(x.shape[-1]) if self.order_seed is None else \
            torch.randperm(x.shape[-1], generator=torch.Generator().manual_seed(self.order_seed))
        # a float32 running sum: the order changes the rounding
        acc = torch.zeros_like(x[..., :1])
        for i in idx.tolist():
            acc = acc + x[..., i:i + 1] * x[..., i:i + 1]
        return x * (acc / x.shape[-1])


class MLP(nn.Module):
    def __init__(self, gelu="none", ln_eps=1e-5, standardize_eps=1e-6, floor=False, order_seed=None):
        super().__init__()
        self.std = Standardize(standardize_eps)
        self.fc1 = nn.Linear(32, 64)
        self.act = nn.GELU(approximate=gelu)
        self.fc2 = nn.Linear(64, 64)
        self.norm = nn.LayerNorm(64, eps=ln_eps)
        self.halve = Halve(floor)
        self.mix = ShuffledSum(order_seed)
        self.fc3 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.norm(self.fc2(self.act(self.fc1(self.std(x)))))
        return self.fc3(self.mix(self.halve(x)))


class Attention(nn.Module):
    """One attention block; ``half_softmax`` computes the softmax in float16; ``causal`` masks with -inf."""

    def __init__(self, half_softmax=False, causal=False):
        super().__init__()
        self.qkv = nn.Linear(32, 96)
        self.scores = Scores(causal)
        self.softmax = Softmax(half_softmax)
        self.mix = Mix()
        self.out = nn.Linear(32, 32)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        return self.out(self.mix(self.softmax(self.scores(q, k)), v))


class Scores(nn.Module):
    def __init__(self, causal: bool = False):
        super().__init__()
        self.causal = causal

    def forward(self, q, k):
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if self.causal:
            future = torch.ones(s.shape[-2:], dtype=torch.bool).triu(1)
            s = s.masked_fill(future, float("-inf"))
        return s


class Softmax(nn.Module):
    def __init__(self, half: bool):
        super().__init__()
        self.half_ = half

    def forward(self, s):
        return torch.softmax(s.half(), -1).float() if self.half_ else torch.softmax(s, -1)


class Mix(nn.Module):
    def forward(self, p, v):
        return p @ v


class CNN(nn.Module):
    def __init__(self, floor=False):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.halve = Halve(floor)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.conv2(self.halve(self.relu(self.bn(self.conv1(x)))))
        return self.fc(self.pool(x).flatten(1))


def build(cls, seed=0, **kw):
    torch.manual_seed(seed)
    m = cls(**kw)
    m.eval()
    return m
