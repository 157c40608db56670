"""Generate example training runs with one known fault each (and healthy controls).

Every run is a small *real* training job (torch on CPU, one thread, seeded):
scikit-learn's bundled data sets (digits, iris, wine, breast cancer) or
generated ones, a small MLP / CNN / attention model, and one fault injected
in the code, the data, the hyper-parameters or the precision. Each run folder
holds the artifacts of docs/run-layout.md in one of their many
spellings (key/value logs, MindSpore LossMonitor lines, Hugging Face Trainer
prints and trainer_state.json, Keras progress lines and CSVLogger files,
Lightning metrics.csv, metrics.jsonl, hparams/config/args files with
``framework:``, data/train.npz + data/eval.npz, tensors.jsonl from
``advisor.capture``, dump/ folders with manifest.json) so that the advisor's
readers meet the formats users really have.

Usage::

    python examples/generate.py [OUT] [--only NAME_OR_CAUSE ...] [--list] [-j JOBS]
    python examples/generate.py --committed        # rewrites the small runs under examples/

OUT defaults to examples/generated/ (git-ignored). OUT/labels.json maps each
run name to its true cause id (null for a healthy control), its run folder
and its baseline folder (or null). The whole set takes a few minutes on two
cores; every number is seeded, so two generations give the same files.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "generated"
FP16_MAX = 65504.0


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------
def load_dataset(name: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Raw features and labels, split 75/25 with a seeded stratified shuffle."""
    from sklearn import datasets

    if name == "digits":
        x, y = datasets.load_digits(return_X_y=True)
    elif name == "iris":
        x, y = datasets.load_iris(return_X_y=True)
    elif name == "wine":
        x, y = datasets.load_wine(return_X_y=True)
    elif name == "cancer":
        x, y = datasets.load_breast_cancer(return_X_y=True)
    elif name == "blobs":
        x, y = datasets.make_classification(n_samples=1600, n_features=20, n_informative=12, n_redundant=4,
                                            n_classes=4, n_clusters_per_class=2, class_sep=1.5, random_state=seed)
    else:
        raise ValueError(f"unknown data set {name!r}")
    rng = np.random.default_rng(seed)
    train_idx, eval_idx = [], []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        cut = int(round(0.75 * len(idx)))
        train_idx.extend(idx[:cut])
        eval_idx.extend(idx[cut:])
    tr, ev = rng.permutation(train_idx), rng.permutation(eval_idx)
    return x[tr].astype(np.float64), y[tr].astype(np.int64), x[ev].astype(np.float64), y[ev].astype(np.int64), int(y.max()) + 1


def standardize(x_fit: np.ndarray, *xs: np.ndarray) -> list[np.ndarray]:
    mean = x_fit.mean(axis=0)
    std = x_fit.std(axis=0)
    std[std == 0] = 1.0
    return [(x - mean) / std for x in xs]


# --------------------------------------------------------------------------
# what one training job is
# --------------------------------------------------------------------------
@dataclass
class Job:
    """One training run: data, model, optimiser, precision, and how it is logged."""

    seed: int = 0
    data: str = "digits"
    n_train: int | None = None          # keep only this many training samples (stratified order)
    prep: str = "standard"              # standard | none | minmax
    data_fault: Callable | None = None  # (xtr, ytr, xev, yev, rng) -> same, after preprocessing
    arch: str = "mlp"                   # mlp | cnn | attn
    hidden: tuple[int, ...] = (64,)
    act: str = "relu"
    model_kw: dict = field(default_factory=dict)
    init: str | None = None             # zeros | normal
    init_std: float = 1.0
    optimizer: str = "sgd"              # sgd | adam | adamw | sign_sgd_bug | adamw_decay_bug
    lr: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 0.0
    opt_only: str | None = None         # optimise only parameters whose name starts with this
    freeze: tuple[str, ...] = ()        # requires_grad=False for names starting with these
    loss: str = "ce"                    # ce | double_softmax | mse_ids | fp16_softmax | nll
    epochs: int = 10
    batch_size: int = 32
    amp: dict | None = None             # {"mode": "dynamic"|"fixed", "scale": float, "window": int}
    log_every: int = 5
    fmt: str = "kv1"
    amp_style: str | None = None        # apex | deepspeed | (None: per format)
    hp_style: str = "yaml"
    hp: dict = field(default_factory=dict)      # extra / overriding hyper-parameters as written
    hp_omit: tuple[str, ...] = ()
    framework: str = "pytorch"
    capture: bool = False
    capture_every: int = 10
    dump: bool = False
    dump_seed: int | None = None        # RNG seed of the dumped forward (nondeterminism)
    op_seed: int | None = None          # RNG seed of nondeterministic ops during training
    eval_prep: str | None = None        # evaluation preprocessing when it differs from training
    data_rows: int = 2000               # rows kept in data/*.npz
    write_data: bool = True
    nan_patience: int = 20              # steps logged after the loss first became non-finite


# --------------------------------------------------------------------------
# models (leaf modules are the operators the dump and the capture see)
# --------------------------------------------------------------------------
def build_model(job: Job, d_in: int, n_out: int):
    import torch
    from torch import nn

    class Op(nn.Module):
        """A small leaf operator with an explicit op_type for the dump manifest."""

        def __init__(self, fn, op_type: str):
            super().__init__()
            self.fn, self.op_type = fn, op_type

        def forward(self, *xs):
            return self.fn(*xs)

    def activation(kind: str) -> nn.Module:
        return {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid}[kind]() if kind != "gelu" else \
            nn.GELU(approximate=job.model_kw.get("gelu_approx", "none"))

    kw = job.model_kw

    class Fused(nn.Module):
        """Linear + activation as one fused kernel that computes in bfloat16 (fusion_error)."""

        dump_leaf = True
        op_type = "FusedMatMulBiasAddGeLU"

        def __init__(self, lin, act):
            super().__init__()
            self.lin, self.act = lin, act

        def forward(self, x):
            w, b = self.lin.weight.to(torch.bfloat16), self.lin.bias.to(torch.bfloat16)
            return self.act((x.to(torch.bfloat16) @ w.T + b)).float()

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            dims = [d_in, *job.hidden]
            self.n = len(job.hidden)
            shared = kw.get("shared_block")  # "list": [block] * k, the ModuleList bug
            for i in range(self.n):
                if shared == "list" and i >= 2 and dims[i] == dims[i + 1]:
                    setattr(self, f"fc{i + 1}", getattr(self, "fc2"))
                else:
                    setattr(self, f"fc{i + 1}", nn.Linear(dims[i], dims[i + 1]))
                if kw.get("bn"):
                    setattr(self, f"bn{i + 1}", nn.BatchNorm1d(dims[i + 1], momentum=kw.get("bn_momentum", 0.1)))
                setattr(self, f"act{i + 1}", activation(job.act))
                if kw.get("dropout"):
                    setattr(self, f"drop{i + 1}", nn.Dropout(kw["dropout"]))
            if kw.get("tie"):  # copy-paste bug: fc3 uses fc2's weight
                self.fc3.weight = self.fc2.weight
            if kw.get("shift"):  # a constant subtracted before the first activation
                self.shift1 = Op(lambda x: x - kw["shift"], "Sub")
            if kw.get("preact_scale"):
                self.scale1 = Op(lambda x: x * kw["preact_scale"], "Mul")
            if kw.get("batchnorm_nostd"):  # per-batch standardisation without epsilon
                self.norm0 = Op(lambda x: (x - x.mean(0)) / x.std(0), "CustomNorm")
            if kw.get("aux"):  # an auxiliary block whose output never reaches the loss
                self.aux = nn.Linear(job.hidden[0], job.hidden[0])
                self.aux_act = nn.ReLU()
            if kw.get("gate_zero"):  # a residual branch multiplied by a constant zero gate
                self.branch = nn.Linear(job.hidden[0], job.hidden[0])
                self.branch_act = nn.ReLU()
                self.gate = Op(lambda x: x * 0.0, "Mul")
            if kw.get("scatter"):
                self.scatter = Op(self._scatter, "IndexPut")
            if kw.get("fused"):
                self.fused1 = Fused(self.fc1, self.act1)
            self.head = nn.Linear(dims[-1], n_out)
            if job.loss == "double_softmax":
                self.softmax = nn.Softmax(dim=1)
            if job.loss == "nll":
                self.temp = Op(lambda x: x * kw.get("temperature_bug", 1.0), "Mul")
                self.softmax = nn.Softmax(dim=1)
                self.log = Op(torch.log, "Log")
            self.scatter_gen = torch.Generator().manual_seed(job.op_seed or 0)

        def _scatter(self, h):
            # index_put with duplicate indices: which write lands last is up to the device
            # (documented as nondeterministic); the order comes from an unseeded generator.
            idx = torch.arange(h.shape[1]) // 2
            order = torch.randperm(h.shape[1], generator=self.scatter_gen)
            out = torch.zeros(h.shape[0], h.shape[1] // 2 + 1)
            out[:, idx[order]] = h[:, order]
            return torch.cat([h, out], 1)[:, :h.shape[1]] + out[:, :1]

        def forward(self, x):
            if kw.get("batchnorm_nostd"):
                x = self.norm0(x)
            for i in range(1, self.n + 1):
                if i == 1 and kw.get("fused"):
                    x = self.fused1(x)
                else:
                    x = getattr(self, f"fc{i}")(x)
                    if kw.get("bn"):
                        x = getattr(self, f"bn{i}")(x)
                    if i == 1 and kw.get("shift"):
                        x = self.shift1(x)
                    if i == 1 and kw.get("preact_scale"):
                        x = self.scale1(x)
                    x = getattr(self, f"act{i}")(x)
                if kw.get("dropout"):
                    x = getattr(self, f"drop{i}")(x)
                if i == 1 and kw.get("aux"):
                    _ = self.aux_act(self.aux(x))  # computed, logged, never used
                if i == 1 and kw.get("gate_zero"):
                    x = x + self.gate(self.branch_act(self.branch(x)))
                if i == 1 and kw.get("scatter"):
                    x = self.scatter(x)
            x = self.head(x)
            if job.loss == "double_softmax":
                x = self.softmax(x)
            if job.loss == "nll":
                x = self.log(self.softmax(self.temp(x)))
            return x

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            c = kw.get("channels", 8)
            self.conv1 = nn.Conv2d(1, c, 3, padding=1)
            self.act1 = nn.ReLU()
            self.pool1 = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1)
            self.act2 = nn.ReLU()
            self.conv3 = nn.Conv2d(c, c, 3, padding=1)
            if kw.get("tie"):
                self.conv3.weight = self.conv2.weight
            self.act3 = nn.ReLU()
            floor = kw.get("floor_div", False)
            self.gap = Op((lambda x: torch.div(x.sum((2, 3)), x.shape[2] * x.shape[3], rounding_mode="floor"))
                          if floor else (lambda x: x.sum((2, 3)) / (x.shape[2] * x.shape[3])),
                          "FloorDiv" if floor else "RealDiv")
            self.head = nn.Linear(c, n_out)

        def forward(self, x):
            x = x.reshape(-1, 1, 8, 8)
            x = self.pool1(self.act1(self.conv1(x)))
            x = self.act2(self.conv2(x))
            x = self.act3(self.conv3(x)) + x
            return self.head(self.gap(x))

    class Attn(nn.Module):
        """Rows of an 8x8 digit as 8 tokens; one self-attention layer."""

        def __init__(self):
            super().__init__()
            d = kw.get("dim", 16)
            self.d = d
            self.embed = nn.Linear(8, d)
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.scores = Op(lambda a, b: a @ b.transpose(1, 2), "BatchMatMul")
            floor = kw.get("floor_div", False)
            self.scale = Op((lambda s: torch.div(s, math.sqrt(d), rounding_mode="floor")) if floor
                            else (lambda s: s / math.sqrt(d)), "FloorDiv" if floor else "RealDiv")
            prec = kw.get("softmax_dtype", "float32")
            if prec == "fp16_exp":   # exp in float16 without max subtraction (overflows past 11.09)
                fn = (lambda s: (lambda e: (e / e.sum(-1, keepdim=True)).float())(torch.exp(s.half())))
            elif prec == "bfloat16":
                fn = (lambda s: torch.softmax(s.to(torch.bfloat16), -1).float())
            else:
                fn = (lambda s: torch.softmax(s, -1))
            self.softmax = Op(fn, "Softmax")
            self.mix = Op(lambda p, v: p @ v, "BatchMatMul")
            self.proj = nn.Linear(d, d)
            self.act = nn.GELU(approximate=kw.get("gelu_approx", "none"))
            self.pool = Op(lambda h: h.mean(1), "ReduceMean")
            self.head = nn.Linear(d, n_out)

        def forward(self, x):
            h = self.embed(x.reshape(-1, 8, 8))
            s = self.scores(self.q(h), self.k(h))
            if not kw.get("no_scale"):
                s = self.scale(s)
            p = self.softmax(s)
            h = h + self.act(self.proj(self.mix(p, self.v(h))))
            return self.head(self.pool(h))

    model = {"mlp": MLP, "cnn": CNN, "attn": Attn}[job.arch]()
    if job.init is not None:
        with torch.no_grad():
            for name, p in model.named_parameters():
                if p.dim() < 2:
                    continue
                if job.init == "zeros":
                    p.zero_()
                else:
                    p.normal_(0.0, job.init_std)
            if job.init == "zeros":
                for name, p in model.named_parameters():
                    p.data.zero_()
    if kw.get("init_gain"):  # scaled orthogonal init of every hidden layer
        with torch.no_grad():
            for name, p in model.named_parameters():
                if p.dim() == 2 and name.startswith("fc"):
                    nn.init.orthogonal_(p, gain=kw["init_gain"])
    return model


# --------------------------------------------------------------------------
# optimisers (the hand-written ones carry the optimizer_error faults)
# --------------------------------------------------------------------------
def build_optimizer(job: Job, model):
    import torch

    class SignBugSGD(torch.optim.Optimizer):
        """Hand-written SGD with momentum whose update has the wrong sign."""

        def __init__(self, params, lr, momentum):
            super().__init__(params, {"lr": lr, "momentum": momentum})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    buf = self.state[p].setdefault("buf", torch.zeros_like(p))
                    buf.mul_(group["momentum"]).add_(p.grad)
                    p.add_(buf, alpha=group["lr"])  # bug: should subtract

    class DecayBugAdamW(torch.optim.Optimizer):
        """Hand-written AdamW whose decoupled weight decay has the wrong sign."""

        def __init__(self, params, lr, weight_decay):
            super().__init__(params, {"lr": lr, "wd": weight_decay})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state[p]
                    if not st:
                        st["t"], st["m"], st["v"] = 0, torch.zeros_like(p), torch.zeros_like(p)
                    st["t"] += 1
                    st["m"].mul_(0.9).add_(p.grad, alpha=0.1)
                    st["v"].mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                    mhat = st["m"] / (1 - 0.9 ** st["t"])
                    vhat = st["v"] / (1 - 0.999 ** st["t"])
                    p.mul_(1 + group["lr"] * group["wd"])  # bug: decay must shrink the weights
                    p.addcdiv_(mhat, vhat.sqrt().add_(1e-8), value=-group["lr"])

    for name, p in model.named_parameters():
        if any(name.startswith(f) for f in job.freeze):
            p.requires_grad_(False)
    params = [p for n, p in model.named_parameters() if job.opt_only is None or n.startswith(job.opt_only)]
    if job.optimizer == "sgd":
        return torch.optim.SGD(params, lr=job.lr, momentum=job.momentum, weight_decay=job.weight_decay)
    if job.optimizer == "adam":
        return torch.optim.Adam(params, lr=job.lr, weight_decay=job.weight_decay)
    if job.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=job.lr, weight_decay=job.weight_decay)
    if job.optimizer == "sign_sgd_bug":
        return SignBugSGD(params, job.lr, job.momentum)
    if job.optimizer == "adamw_decay_bug":
        return DecayBugAdamW(params, job.lr, job.weight_decay)
    raise ValueError(job.optimizer)


# --------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------
@dataclass
class History:
    steps: list[dict] = field(default_factory=list)   # step, epoch, iter, loss, lr, grad_norm, loss_scale, overflow
    epochs: list[dict] = field(default_factory=list)  # epoch, step, train_loss, train_acc, eval_loss, eval_acc
    events: list[dict] = field(default_factory=list)  # step, kind=overflow, scale_from, scale_to
    steps_per_epoch: int = 0
    n_params: int = 0


def _loss_fn(job: Job, out, y):
    import torch
    import torch.nn.functional as F

    if job.loss in ("ce", "double_softmax"):
        return F.cross_entropy(out, y)
    if job.loss == "nll":
        return F.nll_loss(out, y)
    if job.loss == "mse_ids":
        return F.mse_loss(out[:, 0], y.float())
    if job.loss == "fp16_softmax":  # softmax + log in float16, exp without max subtraction
        e = torch.exp(out.half())
        p = e / e.sum(1, keepdim=True)
        return -torch.log(p.gather(1, y[:, None]).float()).mean()
    raise ValueError(job.loss)


def _predict(job: Job, out):
    if job.loss == "mse_ids":
        return out[:, 0].round().long()
    return out.argmax(1)


def _prep(kind: str, fit: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Preprocess ``x`` with statistics of ``fit``: standard | none | minmax | pixels255 | wrong_constants."""
    if kind == "standard":
        return standardize(fit, x)[0]
    if kind == "minmax":
        lo, hi = fit.min(0), fit.max(0)
        return (x - lo) / np.where(hi > lo, hi - lo, 1.0)
    if kind == "pixels255":  # digits are 0..16; a pipeline that scales them to 0..255 and stops there
        return x * (255.0 / 16.0)
    if kind == "wrong_constants":  # ImageNet-style constants applied to data with another range
        return (x / 16.0 - 0.485) / 0.229
    if kind == "none":
        return x.copy()
    raise ValueError(kind)


def prepare_data(job: Job):
    xtr, ytr, xev, yev, n_classes = load_dataset(job.data, job.seed)
    if job.n_train is not None:
        xtr, ytr = xtr[:job.n_train], ytr[:job.n_train]
    xtr, xev = _prep(job.prep, xtr, xtr), _prep(job.eval_prep or job.prep, xtr, xev)
    if job.data_fault is not None:
        xtr, ytr, xev, yev = job.data_fault(xtr, ytr, xev, yev, np.random.default_rng(job.seed + 7))
    return xtr.astype(np.float32), ytr, xev.astype(np.float32), yev, n_classes


def train(job: Job, folder: Path) -> tuple[History, Any, Any]:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(job.seed)
    xtr, ytr, xev, yev, n_classes = prepare_data(job)
    model = build_model(job, xtr.shape[1], 1 if job.loss == "mse_ids" else n_classes)
    opt = build_optimizer(job, model)
    cap = None
    if job.capture:
        try:
            from advisor.capture import attach
        except ImportError:  # the generator also runs from a checkout without the package installed
            sys.path.insert(0, str(HERE.parent))
            from advisor.capture import attach
        cap = attach(model, opt, folder, every=job.capture_every)
    hist = History(n_params=sum(p.numel() for p in model.parameters()))
    Xtr, Ytr = torch.from_numpy(xtr), torch.from_numpy(ytr)
    Xev, Yev = torch.from_numpy(xev), torch.from_numpy(yev)
    gen = torch.Generator().manual_seed(job.seed + 1)
    n = len(Xtr)
    hist.steps_per_epoch = math.ceil(n / job.batch_size)
    amp = dict(job.amp) if job.amp else None
    scale = float(amp["scale"]) if amp else 1.0
    good = 0
    step = 0
    nan_since = None
    first_batch = None
    for epoch in range(1, job.epochs + 1):
        model.train()
        perm = torch.randperm(n, generator=gen)
        sums = [0.0, 0, 0]
        for it, start in enumerate(range(0, n, job.batch_size), 1):
            idx = perm[start:start + job.batch_size]
            x, y = Xtr[idx], Ytr[idx]
            if first_batch is None:
                first_batch = (x.clone(), y.clone())
            step += 1
            out = model(x)
            loss = _loss_fn(job, out, y)
            opt.zero_grad(set_to_none=True)
            overflow = False
            lval = float(loss.detach())
            if amp:
                if math.isfinite(lval):
                    (loss * scale).backward()
                for p in model.parameters():
                    if p.grad is not None:
                        g16 = p.grad.half()  # gradients are float16 in mixed precision
                        if not torch.isfinite(g16).all():
                            overflow = True
                        p.grad = g16.float() / scale
                overflow = overflow or not math.isfinite(lval)
            else:
                if math.isfinite(lval) or nan_since is None:
                    loss.backward()
            grads = [p.grad.detach().double().norm() for p in model.parameters() if p.grad is not None]
            gnorm = float(torch.stack(grads).norm()) if grads else 0.0
            if not math.isfinite(lval):
                gnorm = float("nan")  # what clip_grad_norm_ reports once the loss is NaN/Inf
            rec = {"step": step, "epoch": epoch, "iter": it, "loss": lval, "lr": opt.param_groups[0]["lr"],
                   "grad_norm": gnorm if not overflow else float("inf")}
            if amp:
                rec["loss_scale"] = scale
                rec["overflow"] = overflow
                if overflow:
                    if amp["mode"] == "dynamic":
                        new = max(scale / 2, amp.get("min_scale", 1.0))
                        hist.events.append({"step": step, "kind": "overflow", "scale_from": scale, "scale_to": new})
                        scale = new
                    else:
                        hist.events.append({"step": step, "kind": "overflow", "scale_from": scale, "scale_to": scale})
                    good = 0
                else:
                    opt.step()
                    good += 1
                    if amp["mode"] == "dynamic" and good % amp.get("window", 100) == 0:
                        scale *= 2
            else:
                opt.step()
            hist.steps.append(rec)
            if math.isfinite(lval):
                sums[0] += lval * len(idx)
                sums[1] += int((_predict(job, out.detach()) == y).sum())
                sums[2] += len(idx)
            elif nan_since is None:
                nan_since = step
        model.eval()
        with torch.no_grad():
            out_ev = model(Xev)
            ev_loss = float(_loss_fn(job, out_ev, Yev))
            ev_acc = float((_predict(job, out_ev) == Yev).double().mean())
        hist.epochs.append({"epoch": epoch, "step": step,
                            "train_loss": sums[0] / sums[2] if sums[2] else float("nan"),
                            "train_acc": sums[1] / sums[2] if sums[2] else float("nan"),
                            "eval_loss": ev_loss, "eval_acc": ev_acc})
        if nan_since is not None and step - nan_since >= job.nan_patience:
            break  # the user stops a run whose loss stays NaN
    if cap is not None:
        cap.close()
    data = (xtr, ytr, xev, yev, n_classes)
    return hist, model, (data, first_batch)


# --------------------------------------------------------------------------
# artifacts
# --------------------------------------------------------------------------
def fnum(v: float, spec: str = ".4f") -> str:
    if v is None or not math.isfinite(v):
        return "nan" if v is None or math.isnan(v) else ("inf" if v > 0 else "-inf")
    return format(v, spec)


def _logged(job: Job, hist: History) -> list[dict]:
    return [s for s in hist.steps if s["step"] % job.log_every == 0 or s["step"] == 1 or not math.isfinite(s["loss"])]


def _amp_line(style: str, ev: dict) -> str:
    if style == "deepspeed":
        ms = 1_000 + 53 * ev["step"]  # a clock that advances 53 ms per step from 10:12:01
        stamp = f"2026-01-05 {10 + ms // 3_600_000:02d}:{12 + ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"
        return (f"[{stamp}] [INFO] "
                f"[loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
                f"Attempted loss scale: {ev['scale_from']:g}, reducing to {ev['scale_to']:g}")
    return f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {ev['scale_to']:.1f}"


def write_text_log(job: Job, hist: History, path: Path) -> None:
    """Key/value prints (three spellings), MindSpore LossMonitor lines, HF Trainer dict prints, Keras lines."""
    fmt = job.fmt
    lines = [f"Namespace(arch='{job.arch}', data='{job.data}', lr={job.lr}, batch_size={job.batch_size}, "
             f"epochs={job.epochs}, seed={job.seed})"]
    if fmt == "ms":
        lines.append("============== Starting Training ==============")
    events = {e["step"]: e for e in hist.events}
    logged = {s["step"] for s in _logged(job, hist)}
    ends = {e["step"]: e for e in hist.epochs}
    total = hist.steps_per_epoch
    amp_style = job.amp_style or "apex"
    for s in hist.steps:
        st, ep, it = s["step"], s["epoch"], s["iter"]
        if st in events and fmt != "ms":
            lines.append(_amp_line(amp_style, events[st]))
        if st in logged:
            loss = fnum(s["loss"])
            if fmt == "kv1":
                lines.append(f"epoch {ep} step {st} loss {loss} lr {s['lr']:g}")
            elif fmt == "kv2":
                extra = f", loss_scale={s['loss_scale']:g}" if "loss_scale" in s else ""
                lines.append(f"step={st}, loss={fnum(s['loss'], '.5g')}, lr={s['lr']:.1e}, "
                             f"grad_norm={fnum(s['grad_norm'], '.3g')}{extra}")
            elif fmt == "kv3":
                lines.append(f"[epoch {ep}][iter {it}/{total}] loss: {loss} grad_norm: {fnum(s['grad_norm'], '.2e')} "
                             f"lr: {s['lr']:g}")
            elif fmt == "ms":
                if "loss_scale" in s:
                    lines.append(f"epoch: {ep} step: {it}, loss is (Tensor(shape=[], dtype=Float32, value= "
                                 f"{fnum(s['loss'], '.6g')}), Tensor(shape=[], dtype=Bool, value= "
                                 f"{s['overflow']}), Tensor(shape=[], dtype=Float32, value= {s['loss_scale']:g}))")
                else:
                    lines.append(f"epoch: {ep} step: {it}, loss is {fnum(s['loss'], '.7g')}")
            elif fmt == "hf":
                lines.append(str({"loss": round(s["loss"], 4) if math.isfinite(s["loss"]) else s["loss"],
                                  "grad_norm": round(s["grad_norm"], 4) if math.isfinite(s["grad_norm"]) else s["grad_norm"],
                                  "learning_rate": s["lr"], "epoch": round(ep - 1 + it / total, 2)}))
        if st in ends:
            e = ends[st]
            if fmt == "kv1":
                lines.append(f"epoch {ep} step {st} eval_loss {fnum(e['eval_loss'])} eval_acc {fnum(e['eval_acc'])}")
            elif fmt == "kv2":
                lines.append(f"step={st}, val_loss={fnum(e['eval_loss'], '.5g')}, val_acc={fnum(e['eval_acc'], '.4f')}")
            elif fmt == "kv3":
                lines.append(f"[epoch {ep}] val_loss: {fnum(e['eval_loss'])} val_acc: {fnum(e['eval_acc'])}")
            elif fmt == "ms":
                lines.append(f"epoch: {ep}, eval result: {{'Loss': {fnum(e['eval_loss'], '.6f')}, "
                             f"'Accuracy': {fnum(e['eval_acc'], '.6f')}}}")
            elif fmt == "hf":
                lines.append(str({"eval_loss": e["eval_loss"], "eval_accuracy": e["eval_acc"], "eval_runtime": 0.05,
                                  "epoch": float(ep)}))
            elif fmt == "keras":
                lines.append(f"Epoch {ep}/{job.epochs}")
                lines.append(f"{total}/{total} [==============================] - 0s 2ms/step - loss: "
                             f"{fnum(e['train_loss'])} - accuracy: {fnum(e['train_acc'])} - val_loss: "
                             f"{fnum(e['eval_loss'])} - val_accuracy: {fnum(e['eval_acc'])}")
    if fmt == "hf":
        lines.append(str({"train_runtime": 3.2, "train_samples_per_second": 400.0,
                          "train_loss": _mean_finite([s["loss"] for s in hist.steps]), "epoch": float(len(hist.epochs))}))
    lines.append("Training finished.")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _mean_finite(values: list[float]) -> float:
    fin = [v for v in values if math.isfinite(v)]
    return sum(fin) / len(fin) if fin else float("nan")


def write_trainer_state(job: Job, hist: History, path: Path) -> None:
    total = hist.steps_per_epoch
    log: list[dict] = []
    ends = {e["step"]: e for e in hist.epochs}
    logged = {s["step"] for s in _logged(job, hist)}
    for s in hist.steps:
        if s["step"] in logged:
            log.append({"epoch": round(s["epoch"] - 1 + s["iter"] / total, 4), "grad_norm": s["grad_norm"],
                        "learning_rate": s["lr"], "loss": s["loss"], "step": s["step"]})
        if s["step"] in ends:
            e = ends[s["step"]]
            log.append({"epoch": float(e["epoch"]), "eval_accuracy": e["eval_acc"], "eval_loss": e["eval_loss"],
                        "eval_runtime": 0.05, "step": e["step"]})
    state = {"best_metric": None, "epoch": float(len(hist.epochs)), "global_step": hist.steps[-1]["step"],
             "is_world_process_zero": True, "log_history": log, "logging_steps": job.log_every,
             "max_steps": total * job.epochs, "num_train_epochs": job.epochs,
             "train_batch_size": job.batch_size}
    path.write_text(json.dumps(state, indent=2), encoding="utf-8")


def write_lightning_csv(job: Job, hist: History, path: Path) -> None:
    rows = ["epoch,step,train_loss_step,train_loss_epoch,val_loss,val_acc"]
    for s in _logged(job, hist):
        rows.append(f"{s['epoch'] - 1},{s['step'] - 1},{fnum(s['loss'], '.6g')},,,")
    for e in hist.epochs:
        rows.append(f"{e['epoch'] - 1},{e['step'] - 1},,,{fnum(e['eval_loss'], '.6g')},{fnum(e['eval_acc'], '.6g')}")
        rows.append(f"{e['epoch'] - 1},{e['step'] - 1},,{fnum(e['train_loss'], '.6g')},,")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def write_keras_csv(job: Job, hist: History, path: Path) -> None:
    rows = ["epoch,accuracy,loss,lr,val_accuracy,val_loss"]
    for e in hist.epochs:
        rows.append(f"{e['epoch'] - 1},{fnum(e['train_acc'], '.6g')},{fnum(e['train_loss'], '.6g')},{job.lr:g},"
                    f"{fnum(e['eval_acc'], '.6g')},{fnum(e['eval_loss'], '.6g')}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def write_jsonl(job: Job, hist: History, path: Path) -> None:
    def clean(v):
        return v if not isinstance(v, float) or math.isfinite(v) else str(v)  # "nan"/"inf" as strings

    out = []
    ends = {e["step"]: e for e in hist.epochs}
    logged = {s["step"] for s in _logged(job, hist)}
    for s in hist.steps:
        if s["step"] in logged:
            rec = {"step": s["step"], "epoch": s["epoch"], "loss": clean(s["loss"]), "lr": s["lr"],
                   "grad_norm": clean(s["grad_norm"])}
            if "loss_scale" in s:
                rec["loss_scale"] = s["loss_scale"]
                rec["overflow"] = s["overflow"]
            out.append(json.dumps(rec))
        if s["step"] in ends:
            e = ends[s["step"]]
            out.append(json.dumps({"step": e["step"], "epoch": e["epoch"], "eval_loss": clean(e["eval_loss"]),
                                   "eval_acc": clean(e["eval_acc"])}))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def hparams_of(job: Job, hist: History) -> dict:
    """The hyper-parameters as the user's script would have written them."""
    hp: dict[str, Any] = {"framework": job.framework, "model": job.arch, "dataset": job.data,
                          "optimizer": {"sgd": "sgd", "adam": "adam", "adamw": "adamw", "sign_sgd_bug": "custom_sgd",
                                        "adamw_decay_bug": "custom_adamw"}[job.optimizer],
                          "lr": job.lr, "batch_size": job.batch_size, "epochs": job.epochs, "seed": job.seed}
    if job.optimizer in ("sgd", "sign_sgd_bug"):
        hp["momentum"] = job.momentum
    hp["weight_decay"] = job.weight_decay
    hp["loss"] = {"ce": "cross_entropy", "double_softmax": "cross_entropy", "nll": "nll", "mse_ids": "mse",
                  "fp16_softmax": "cross_entropy"}[job.loss]
    if job.amp:
        hp["precision"] = "fp16"
        hp["loss_scale"] = job.amp["scale"]
        hp["loss_scale_mode"] = "dynamic" if job.amp["mode"] == "dynamic" else "static"
    if job.model_kw.get("bn"):
        hp["bn_momentum"] = job.model_kw.get("bn_momentum", 0.1)
    if job.model_kw.get("dropout"):
        hp["dropout"] = job.model_kw["dropout"]
    if job.arch == "mlp":
        hp["hidden_sizes"] = list(job.hidden)
        hp["activation"] = job.act
    hp.update(job.hp)
    for k in job.hp_omit:
        hp.pop(k, None)
    return hp


def write_hparams(job: Job, hist: History, folder: Path) -> None:
    import yaml

    hp = hparams_of(job, hist)
    style = job.hp_style
    if style == "yaml":
        (folder / "hparams.yaml").write_text(yaml.safe_dump(hp, sort_keys=False), encoding="utf-8")
    elif style == "json":
        (folder / "hparams.json").write_text(json.dumps(hp, indent=2), encoding="utf-8")
    elif style == "config_yaml":  # nested, MindSpore-model-zoo style
        opt = {"type": hp.pop("optimizer"), "lr": hp.pop("lr")}
        for k in ("momentum", "weight_decay"):
            if k in hp:
                opt[k] = hp.pop(k)
        train_cfg = {"batch_size": hp.pop("batch_size"), "epoch_size": hp.pop("epochs")}
        nested = {"framework": hp.pop("framework"), "optimizer": opt, "train": train_cfg, **hp}
        (folder / "config.yaml").write_text(yaml.safe_dump(nested, sort_keys=False), encoding="utf-8")
    elif style == "hf":  # training_args.json of the Trainer, framework in a small hparams.json beside it
        args = {"learning_rate": hp.pop("lr"), "per_device_train_batch_size": hp.pop("batch_size"),
                "num_train_epochs": hp.pop("epochs"), "weight_decay": hp.pop("weight_decay", 0.0),
                "optim": {"adamw": "adamw_torch", "adam": "adamw_torch", "sgd": "sgd"}.get(hp["optimizer"], hp["optimizer"]),
                "adam_epsilon": 1e-8, "seed": hp.pop("seed"), "logging_steps": job.log_every,
                "fp16": bool(job.amp), "output_dir": "out"}
        hp.pop("optimizer")
        (folder / "training_args.json").write_text(json.dumps(args, indent=2), encoding="utf-8")
        (folder / "hparams.json").write_text(json.dumps(hp, indent=2), encoding="utf-8")
    elif style == "args":
        (folder / "args.json").write_text(json.dumps(hp), encoding="utf-8")
    elif style != "none":
        raise ValueError(style)


def write_data(job: Job, data, folder: Path) -> None:
    xtr, ytr, xev, yev, _ = data
    (folder / "data").mkdir(exist_ok=True)
    k = job.data_rows
    np.savez_compressed(folder / "data" / "train.npz", x=xtr[:k], y=ytr[:k])
    np.savez_compressed(folder / "data" / "eval.npz", x=xev[:k], y=yev[:k])


def write_dump(job: Job, model, batch, folder: Path) -> None:
    """One forward pass on ``batch``: every leaf operator's inputs and output as .npy, with a manifest.

    The caller passes the model with its initial weights and the first training batch, so a
    run and its baseline (same seed) are dumped on identical weights and inputs.
    """
    import torch

    model = copy.deepcopy(model)
    model.train()
    entries: list[dict] = []
    d = folder / "dump"
    d.mkdir(parents=True, exist_ok=True)
    calls: dict[str, int] = {}
    fused_children = set()
    for name, mod in model.named_modules():
        if getattr(mod, "dump_leaf", False):
            fused_children.update(id(m) for m in mod.modules() if m is not mod)

    def save(name: str, t, op_type: str) -> None:
        fname = f"{len(entries):04d}_{name}.npy"
        np.save(d / fname, t.detach().float().numpy().astype(np.float32), allow_pickle=False)
        entries.append({"name": name, "file": fname, "op_type": op_type})

    def hook_for(mname: str):
        def hook(mod, inputs, output):
            if id(mod) in fused_children:
                return
            k = calls.get(mname, 0)
            calls[mname] = k + 1
            base = mname if k == 0 else f"{mname}.{k}"
            op = getattr(mod, "op_type", type(mod).__name__)
            if getattr(mod, "dump_leaf", False):
                base = f"Fused.{op}.0"
            for i, t in enumerate(inputs):
                if isinstance(t, torch.Tensor) and t.is_floating_point():
                    save(f"{base}.forward.input.{i}", t, op)
            save(f"{base}.forward.output.0", output, op)
        return hook

    handles = []
    for name, mod in model.named_modules():
        if (next(mod.children(), None) is None or getattr(mod, "dump_leaf", False)) and name:
            handles.append(mod.register_forward_hook(hook_for(name)))
    if job.dump_seed is not None:
        torch.manual_seed(job.dump_seed)
        if hasattr(model, "scatter_gen"):
            model.scatter_gen.manual_seed(job.dump_seed)
    with torch.no_grad():
        model(batch[0])
    for h in handles:
        h.remove()
    (d / "manifest.json").write_text(json.dumps(entries, indent=1), encoding="utf-8")


def materialize(job: Job, folder: Path) -> dict:
    """Train ``job`` and write its artifacts into ``folder``; returns a short summary."""
    import torch

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    # the dump is taken with the initial weights on the first batch, the same for run and baseline
    torch.manual_seed(job.seed)
    xtr, ytr, xev, yev, n_classes = prepare_data(job)
    init_model = build_model(job, xtr.shape[1], 1 if job.loss == "mse_ids" else n_classes) if job.dump else None
    hist, model, (data, first_batch) = train(job, folder)
    if job.dump:
        write_dump(job, init_model, first_batch, folder)
    log_dir = folder
    if job.fmt in ("kv1", "kv2", "kv3", "ms", "hf", "keras"):
        name = {"ms": "output.log", "hf": "stdout", "keras": "train.out"}.get(job.fmt, "train.log")
        write_text_log(job, hist, log_dir / name)
    if job.fmt in ("hf", "hf_state"):
        write_trainer_state(job, hist, folder / "trainer_state.json")
    if job.fmt == "lightning":
        sub = folder / "lightning_logs" / "version_0"
        sub.mkdir(parents=True)
        write_lightning_csv(job, hist, sub / "metrics.csv")
    if job.fmt == "keras_csv":
        write_keras_csv(job, hist, folder / "history.csv")
    if job.fmt == "jsonl":
        write_jsonl(job, hist, folder / "metrics.jsonl")
    write_hparams(job, hist, folder)
    if job.write_data:
        write_data(job, data, folder)
    fin = [s["loss"] for s in hist.steps if math.isfinite(s["loss"])]
    last = hist.epochs[-1]

    def num(v: float | None) -> float | None:
        return round(float(v), 6) if v is not None and math.isfinite(v) else None

    return {"steps": hist.steps[-1]["step"], "first_loss": num(fin[0] if fin else None),
            "last_loss": num(fin[-1] if fin else None),
            "nonfinite": any(not math.isfinite(s["loss"]) for s in hist.steps), "eval_acc": num(last["eval_acc"]),
            "eval_loss": num(last["eval_loss"]), "overflows": len(hist.events)}


# --------------------------------------------------------------------------
# data faults: (xtr, ytr, xev, yev, rng, ...) -> (xtr, ytr, xev, yev), after preprocessing
# --------------------------------------------------------------------------
def fault_nan(xtr, ytr, xev, yev, rng, frac=0.03, cols=None):
    """Missing values: a share of the entries (of some columns) is NaN, in train and eval."""
    out = []
    for x in (xtr, xev):
        x = x.copy()
        mask = rng.random(x.shape) < frac
        if cols is not None:
            keep = np.zeros(x.shape[1], bool)
            keep[list(cols)] = True
            mask &= keep
        x[mask] = np.nan
        out.append(x)
    return out[0], ytr, out[1], yev


def fault_imbalance(xtr, ytr, xev, yev, rng, major=0, minor_keep=0.04):
    """Class imbalance: keep every sample of class ``major``, a few of the others (train and eval)."""
    def cut(x, y):
        keep = (y == major) | (rng.random(len(y)) < minor_keep)
        return x[keep], y[keep]
    xtr, ytr = cut(xtr, ytr)
    xev, yev = cut(xev, yev)
    # many more of the major class: repeat it with a little noise, as oversampled logs do
    rep = np.flatnonzero(ytr == major)
    extra = rng.choice(rep, size=len(rep) * 4)
    xtr = np.concatenate([xtr, xtr[extra] + 0.05 * rng.standard_normal((len(extra), xtr.shape[1]))])
    ytr = np.concatenate([ytr, ytr[extra]])
    perm = rng.permutation(len(ytr))
    return xtr[perm], ytr[perm], xev, yev


def fault_outliers(xtr, ytr, xev, yev, rng, frac=0.02, value=1e3, cols=None):
    """Outliers: a share of the training rows gets absurd values (a unit or sensor glitch)."""
    xtr = xtr.copy()
    rows = np.flatnonzero(rng.random(len(xtr)) < frac)
    cols = np.arange(xtr.shape[1]) if cols is None else np.asarray(cols)
    for r in rows:
        c = rng.choice(cols, size=max(1, len(cols) // 4), replace=False)
        xtr[r, c] = value * rng.choice([-1.0, 1.0], size=len(c))
    return xtr, ytr, xev, yev


def fault_label_noise(xtr, ytr, xev, yev, rng, frac=0.4):
    """Wrong labels: a share of the training labels replaced by another class at random."""
    y = ytr.copy()
    k = int(y.max()) + 1
    flip = rng.random(len(y)) < frac
    y[flip] = (y[flip] + rng.integers(1, k, size=int(flip.sum()))) % k
    return xtr, y, xev, yev


def fault_label_swap(xtr, ytr, xev, yev, rng, a=1, b=2, frac=0.6):
    """Wrong labels: classes a and b swapped for a share of their training samples (a mapping bug)."""
    y = ytr.copy()
    sel = ((y == a) | (y == b)) & (rng.random(len(y)) < frac)
    y[sel] = np.where(y[sel] == a, b, a)
    return xtr, y, xev, yev


def fault_transpose_eval(xtr, ytr, xev, yev, rng):
    """Train/eval mismatch: the eval pipeline transposes the 8x8 images."""
    return xtr, ytr, xev.reshape(-1, 8, 8).transpose(0, 2, 1).reshape(-1, 64).copy(), yev


def fault(fn: Callable, **kw) -> Callable:
    from functools import partial
    return partial(fn, **kw)


# --------------------------------------------------------------------------
# the catalogue of example runs
# --------------------------------------------------------------------------
@dataclass
class Case:
    name: str
    cause: str | None
    run: Job
    baseline: Job | str | None = None  # a string here is the note of a case without a baseline
    note: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.baseline, str):
            self.note, self.baseline = self.baseline, None


def J(**kw: Any) -> Job:
    return Job(**kw)


def B(job: Job, **kw: Any) -> Job:
    """The baseline of ``job``: the same job with some fields changed."""
    return dataclasses.replace(job, **kw)


def _cases() -> list[Case]:
    C: list[Case] = []
    add = C.append
    gpu, npu = {"device": "GPU"}, {"device": "Ascend"}

    # ---- healthy controls -------------------------------------------------
    add(Case("healthy-mlp-digits-kv1", None, J(epochs=12, fmt="kv1", capture=True)))
    add(Case("healthy-mlp-wine-hf", None, J(data="wine", optimizer="adamw", lr=3e-3, weight_decay=0.01, epochs=40,
                                           batch_size=16, fmt="hf", hp_style="hf", log_every=10)))
    add(Case("healthy-mlp-iris-keras", None, J(data="iris", hidden=(16,), optimizer="adam", lr=1e-2, epochs=60,
                                              batch_size=16, fmt="keras", framework="keras", hp_style="json")))
    add(Case("healthy-mlp-cancer-lightning", None, J(data="cancer", lr=0.02, epochs=20, fmt="lightning")))
    add(Case("healthy-cnn-digits-jsonl", None, J(arch="cnn", model_kw={"channels": 16}, optimizer="adam", lr=1e-2,
                                                epochs=10, fmt="jsonl", capture=True, hp_style="args")))
    add(Case("healthy-mlp-blobs-ms-amp", None, J(data="blobs", hidden=(64, 64), lr=0.02, epochs=10, fmt="ms",
                                                framework="mindspore", hp_style="config_yaml",
                                                amp={"mode": "dynamic", "scale": 2.0 ** 24, "window": 200})))
    run = J(arch="attn", optimizer="adam", lr=1e-2, epochs=10, fmt="kv2", dump=True, hp=dict(gpu))
    add(Case("healthy-attn-digits-rerun", None, run, B(run), "same configuration twice: identical dumps"))
    run = J(hidden=(64, 32), lr=0.05, epochs=10, fmt="kv3", dump=True, framework="mindspore",
            hp_style="config_yaml", hp=dict(npu))
    add(Case("healthy-mlp-digits-port", None, run, B(run, framework="pytorch", hp_style="yaml", hp=dict(gpu), fmt="kv1"),
             "MindSpore port against the PyTorch benchmark, every effective value equal"))
    add(Case("healthy-mlp-digits-apex-amp", None, J(hidden=(128,), lr=0.05, epochs=8, fmt="kv3", amp_style="apex",
                                                   amp={"mode": "dynamic", "scale": 65536.0, "window": 100})))
    add(Case("healthy-mlp-cancer-kerascsv", None, J(data="cancer", optimizer="adam", lr=3e-3, epochs=40,
                                                   fmt="keras_csv", framework="keras", hp_style="json")))

    # ---- hyper-parameters -------------------------------------------------
    add(Case("lr_too_high-mlp-digits-kv1", "lr_too_high", J(lr=2.5, epochs=8, fmt="kv1", capture=True)))
    add(Case("lr_too_high-cnn-digits-hf", "lr_too_high", J(arch="cnn", optimizer="adam", lr=0.5, epochs=6, fmt="hf",
                                                          hp_style="hf", log_every=5)))
    add(Case("lr_too_low-mlp-digits-kv2", "lr_too_low", J(lr=2e-4, momentum=0.0, epochs=10, fmt="kv2",
                                                         hp_style="json", capture=True)))
    add(Case("lr_too_low-mlp-wine-keras", "lr_too_low", J(data="wine", optimizer="adam", lr=1e-6, epochs=60,
                                                         batch_size=16, fmt="keras", framework="keras",
                                                         hp_style="json")))
    add(Case("loss_scale_bad-mlp-digits-ms-fixed-huge", "loss_scale_bad",
             J(hidden=(64,), lr=0.05, epochs=6, fmt="ms", framework="mindspore", hp_style="config_yaml",
               amp={"mode": "fixed", "scale": 2.0 ** 24}),
             "a fixed loss scale of 2^24: almost every step overflows and is skipped"))
    add(Case("loss_scale_bad-mlp-blobs-jsonl-fixed-tiny", "loss_scale_bad",
             J(data="blobs", hidden=(64,), lr=0.05, epochs=6, fmt="jsonl", capture=True,
               amp={"mode": "fixed", "scale": 2.0 ** -24}),
             "a fixed loss scale of 2^-24: float16 gradients underflow to zero"))
    add(Case("weight_init_bad-mlp-digits-kv3-zeros", "weight_init_bad",
             J(hidden=(64, 64), init="zeros", lr=0.05, epochs=6, fmt="kv3", capture=True,
               hp={"weight_init": "zeros"})))
    add(Case("weight_init_bad-mlp-wine-lightning-huge", "weight_init_bad",
             J(data="wine", hidden=(64, 64), act="tanh", init="normal", init_std=8.0, lr=0.01, epochs=40,
               batch_size=16, fmt="lightning", capture=True, hp={"weight_init": "normal", "init_std": 8.0})))
    run = J(hidden=(64,), model_kw={"bn": True, "bn_momentum": 0.99}, lr=0.05, epochs=10, fmt="kv1",
            batch_size=64)
    add(Case("hparam_mismatch-mlp-digits-bn-momentum", "hparam_mismatch", run,
             B(run, framework="tensorflow", model_kw={"bn": True, "bn_momentum": 0.01}, hp={"bn_momentum": 0.99}),
             "PyTorch port copied TensorFlow's BatchNorm momentum 0.99 (keep weight) as PyTorch's update weight"))
    run = J(data="cancer", hidden=(32,), lr=0.01, momentum=0.0, epochs=15, fmt="jsonl", hp_omit=("momentum",))
    add(Case("hparam_mismatch-mlp-cancer-momentum-default", "hparam_mismatch", run,
             B(run, momentum=0.9, framework="mindspore", hp_style="config_yaml", hp_omit=(),
               hp={"optimizer": "Momentum"}, fmt="ms"),
             "MindSpore Momentum(0.9) ported to torch.optim.SGD without momentum (PyTorch default 0)"))
    add(Case("insufficient_epochs-mlp-digits-lightning", "insufficient_epochs",
             J(lr=0.01, momentum=0.5, epochs=2, fmt="lightning", log_every=2)))
    add(Case("insufficient_epochs-mlp-blobs-hfstate", "insufficient_epochs",
             J(data="blobs", hidden=(64, 64), optimizer="adam", lr=2e-4, epochs=3, fmt="hf_state", hp_style="hf",
               log_every=4)))

    # ---- model structure --------------------------------------------------
    run = J(arch="cnn", model_kw={"floor_div": True}, optimizer="adam", lr=3e-3, epochs=5, fmt="kv2", dump=True,
            framework="mindspore", hp_style="config_yaml", hp=dict(npu))
    add(Case("wrong_operator-cnn-digits-floordiv", "wrong_operator", run,
             B(run, model_kw={}, framework="pytorch", hp_style="yaml", hp=dict(gpu)),
             "global average pooling written as sum // n"))
    run = J(arch="attn", model_kw={"floor_div": True}, optimizer="adam", lr=3e-3, epochs=5, fmt="hf", hp_style="hf",
            dump=True, hp=dict(npu))
    add(Case("wrong_operator-attn-digits-floordiv", "wrong_operator", run, B(run, model_kw={}, hp=dict(gpu)),
             "attention scores scaled with // sqrt(d)"))
    add(Case("weight_sharing_error-mlp-digits-tied", "weight_sharing_error",
             J(hidden=(64, 64, 64), model_kw={"tie": True}, lr=0.05, epochs=6, fmt="kv1", capture=True),
             "fc3.weight = fc2.weight by a copy-paste"))
    add(Case("weight_sharing_error-mlp-blobs-modulelist", "weight_sharing_error",
             J(data="blobs", hidden=(48, 48, 48, 48), model_kw={"shared_block": "list"}, optimizer="adam", lr=2e-3,
               epochs=5, fmt="jsonl", capture=True), "nn.ModuleList([block] * 3): one block three times"))
    run = J(hidden=(64, 64), freeze=("fc1", "fc2"), lr=0.05, epochs=6, fmt="kv3", capture=True)
    add(Case("weight_freezing_error-mlp-digits-requires-grad", "weight_freezing_error", run, B(run, freeze=()),
             "requires_grad=False left on the first two layers; the baseline trains them"))
    add(Case("weight_freezing_error-mlp-wine-optimizer-subset", "weight_freezing_error",
             J(data="wine", hidden=(32, 32), opt_only="head", optimizer="adam", lr=1e-2, epochs=30, batch_size=16,
               fmt="hf", hp_style="hf", capture=True), "the optimizer was given model.head.parameters() only"))
    add(Case("disconnected_node-mlp-digits-aux-unused", "disconnected_node",
             J(hidden=(64, 32), model_kw={"aux": True}, lr=0.05, epochs=6, fmt="kv1", capture=True),
             "an auxiliary block computed in forward() whose output never reaches the loss"))
    add(Case("disconnected_node-mlp-cancer-zero-gate", "disconnected_node",
             J(data="cancer", hidden=(32,), model_kw={"gate_zero": True}, lr=0.02, epochs=15, fmt="jsonl",
               capture=True), "a residual branch multiplied by a constant zero gate"))
    add(Case("loss_function_error-mlp-digits-double-softmax", "loss_function_error",
             J(loss="double_softmax", lr=0.05, epochs=8, fmt="hf", hp_style="hf", capture=True),
             "Softmax at the end of the model, then CrossEntropyLoss (softmax twice)"))
    add(Case("loss_function_error-mlp-digits-mse-ids", "loss_function_error",
             J(data="digits", hidden=(64,), loss="mse_ids", optimizer="adam", lr=1e-3, epochs=8, fmt="keras",
               framework="keras", hp_style="json", hp={"num_classes": 10, "task": "classification"}),
             "MSE between one output and the class id of a 10-class problem"))
    add(Case("optimizer_error-mlp-digits-sign", "optimizer_error",
             J(optimizer="sign_sgd_bug", lr=0.01, momentum=0.9, epochs=5, fmt="kv2", capture=True),
             "hand-written SGD adds the gradient instead of subtracting it"))
    add(Case("optimizer_error-mlp-blobs-decay-sign", "optimizer_error",
             J(data="blobs", hidden=(64, 64), optimizer="adamw_decay_bug", lr=3e-3, weight_decay=1.0, epochs=12,
               fmt="lightning", capture=True), "hand-written AdamW grows the weights instead of decaying them"))

    # ---- input data ---------------------------------------------------------
    add(Case("missing_values-mlp-digits-kv1", "missing_values",
             J(data_fault=fault(fault_nan, frac=0.03), lr=0.05, epochs=3, fmt="kv1")))
    add(Case("missing_values-mlp-cancer-hf", "missing_values",
             J(data="cancer", data_fault=fault(fault_nan, frac=0.3, cols=(3, 7)), optimizer="adam", lr=1e-3,
               epochs=3, fmt="hf", hp_style="hf")))
    add(Case("class_imbalance-mlp-digits-kv3", "class_imbalance",
             J(data_fault=fault(fault_imbalance, major=0, minor_keep=0.03), lr=0.05, epochs=8, fmt="kv3")))
    add(Case("class_imbalance-mlp-blobs-jsonl", "class_imbalance",
             J(data="blobs", data_fault=fault(fault_imbalance, major=2, minor_keep=0.05), optimizer="adam", lr=1e-3,
               epochs=8, fmt="jsonl")))
    add(Case("outliers-mlp-digits-kv2", "outliers",
             J(data_fault=fault(fault_outliers, frac=0.02, value=80.0), lr=0.02, epochs=8, fmt="kv2")))
    add(Case("outliers-mlp-wine-lightning", "outliers",
             J(data="wine", data_fault=fault(fault_outliers, frac=0.05, value=1e4, cols=(12,)), optimizer="adam",
               lr=3e-3, epochs=40, batch_size=16, fmt="lightning")))
    add(Case("label_errors-mlp-digits-hf", "label_errors",
             J(data_fault=fault(fault_label_noise, frac=0.45), optimizer="adam", lr=1e-3, epochs=12, fmt="hf",
               hp_style="hf")))
    add(Case("label_errors-mlp-wine-kv1", "label_errors",
             J(data="wine", data_fault=fault(fault_label_swap, a=0, b=1, frac=0.7), lr=0.02, epochs=40,
               batch_size=16, fmt="kv1")))
    add(Case("insufficient_samples-mlp-digits-kv3", "insufficient_samples",
             J(n_train=30, hidden=(256, 256), optimizer="adam", lr=1e-3, epochs=150, batch_size=16, fmt="kv3",
               log_every=10)))
    add(Case("insufficient_samples-mlp-wine-keras", "insufficient_samples",
             J(data="wine", n_train=12, hidden=(128, 128), optimizer="adam", lr=1e-3, epochs=150, batch_size=8,
               fmt="keras", framework="keras", hp_style="json")))
    add(Case("not_normalized-mlp-digits-pixels", "not_normalized",
             J(prep="pixels255", lr=1e-3, epochs=8, fmt="kv1")))
    add(Case("not_normalized-mlp-wine-raw", "not_normalized",
             J(data="wine", prep="none", optimizer="adam", lr=1e-3, epochs=40, batch_size=16, fmt="jsonl")))
    add(Case("preprocessing_mismatch-mlp-digits-eval-raw", "preprocessing_mismatch",
             J(eval_prep="none", lr=0.05, epochs=8, fmt="kv2"),
             "training data standardised, evaluation data fed raw"))
    add(Case("preprocessing_mismatch-cnn-digits-eval-transposed", "preprocessing_mismatch",
             J(arch="cnn", data_fault=fault(fault_transpose_eval), optimizer="adam", lr=3e-3, epochs=6, fmt="hf",
               hp_style="hf"), "the evaluation pipeline transposes the images"))
    run = J(prep="wrong_constants", lr=0.05, epochs=8, fmt="ms", framework="mindspore", hp_style="config_yaml")
    add(Case("preprocessing_mismatch-mlp-digits-vs-baseline", "preprocessing_mismatch", run,
             B(run, prep="standard"),
             "the port normalises with ImageNet constants, the benchmark with the data's own statistics"))

    # ---- loss curve ------------------------------------------------------------
    add(Case("gradient_explosion-mlp-digits-deep", "gradient_explosion",
             J(hidden=(64,) * 12, model_kw={"init_gain": 1.3}, lr=0.05, momentum=0.9, epochs=8, fmt="kv3",
               capture=True), "12-layer plain ReLU MLP (orthogonal gain 1.3), no normalisation, no clipping"))
    add(Case("gradient_explosion-mlp-wine-deep", "gradient_explosion",
             J(data="wine", hidden=(64,) * 12, model_kw={"init_gain": 1.3}, lr=0.05, momentum=0.9, epochs=30,
               batch_size=16, fmt="jsonl", capture=True),
             "12-layer plain ReLU MLP on 133 samples: the gradient norm grows to 1e14, then NaN"))
    add(Case("gradient_vanishing-mlp-digits-sigmoid", "gradient_vanishing",
             J(hidden=(64,) * 10, act="sigmoid", lr=0.05, epochs=6, fmt="kv1", capture=True)))
    add(Case("gradient_vanishing-mlp-wine-sigmoid", "gradient_vanishing",
             J(data="wine", hidden=(32,) * 8, act="sigmoid", optimizer="sgd", lr=0.05, epochs=40, batch_size=16,
               fmt="lightning", capture=True)))
    add(Case("activation_saturation-mlp-digits-dead-relu", "activation_saturation",
             J(hidden=(64, 64), model_kw={"shift": 6.0}, lr=0.02, epochs=6, fmt="kv2", capture=True),
             "a constant 6 subtracted before the first ReLU: most units are dead"))
    add(Case("activation_saturation-mlp-cancer-tanh", "activation_saturation",
             J(data="cancer", hidden=(64, 32), act="tanh", model_kw={"preact_scale": 25.0}, lr=0.01, epochs=15,
               fmt="hf", hp_style="hf", capture=True), "pre-activations scaled by 25 before tanh"))
    add(Case("overfitting-mlp-blobs-small", "overfitting",
             J(data="blobs", n_train=160, hidden=(256, 256), optimizer="adam", lr=3e-3, epochs=150, fmt="kv1", log_every=10)))
    add(Case("overfitting-mlp-cancer-keras", "overfitting",
             J(data="cancer", n_train=80, hidden=(256, 256), optimizer="adam", lr=3e-3, epochs=200, batch_size=16,
               fmt="keras", framework="keras", hp_style="json",
               data_fault=fault(fault_label_noise, frac=0.08))))

    # ---- floating point ----------------------------------------------------------
    add(Case("fp_overflow-mlp-digits-apex", "fp_overflow",
             J(hidden=(128,), loss="fp16_softmax", optimizer="adam", lr=1e-2, epochs=10, fmt="kv3", amp_style="apex",
               amp={"mode": "dynamic", "scale": 65536.0, "window": 100}),
             "softmax exp in float16 without max subtraction: logits above 11 overflow"))
    add(Case("fp_overflow-attn-digits-deepspeed", "fp_overflow",
             J(arch="attn", model_kw={"softmax_dtype": "fp16_exp", "no_scale": True, "dim": 32}, optimizer="adam",
               lr=1e-2, epochs=8, fmt="kv1", amp_style="deepspeed",
               amp={"mode": "dynamic", "scale": 2.0 ** 16, "window": 100}),
             "unscaled attention scores, exp in float16"))
    add(Case("nan_inf_source-mlp-digits-custom-norm", "nan_inf_source",
             J(model_kw={"batchnorm_nostd": True}, prep="none", lr=0.05, epochs=2, fmt="kv1", dump=True),
             "(x - mean) / std per batch without epsilon: constant pixels give 0/0"))
    add(Case("nan_inf_source-mlp-wine-log-softmax", "nan_inf_source",
             J(data="wine", loss="nll", model_kw={"temperature_bug": 300.0}, lr=0.01, epochs=6, batch_size=16,
               fmt="jsonl", dump=True), "log(softmax(300 * logits)): log of an exact 0"))
    run = J(hidden=(64, 64), act="gelu", model_kw={"gelu_approx": "tanh"}, optimizer="adam", lr=3e-3, epochs=6,
            fmt="kv2", dump=True, hp=dict(npu))
    add(Case("operator_accuracy-mlp-digits-gelu", "operator_accuracy", run,
             B(run, model_kw={"gelu_approx": "none"}, hp=dict(gpu)), "GELU with the tanh approximation on the device"))
    run = J(arch="attn", model_kw={"softmax_dtype": "bfloat16"}, optimizer="adam", lr=3e-3, epochs=5, fmt="ms",
            framework="mindspore", hp_style="config_yaml", dump=True, hp=dict(npu))
    add(Case("operator_accuracy-attn-digits-softmax-bf16", "operator_accuracy", run,
             B(run, model_kw={}, hp=dict(gpu)), "softmax computed in bfloat16 on the device"))
    run = J(hidden=(64, 64), act="gelu", model_kw={"fused": True}, optimizer="adam", lr=3e-3, epochs=6, fmt="ms",
            framework="mindspore", hp_style="config_yaml", dump=True, hp={"enable_graph_kernel": True})
    add(Case("fusion_error-mlp-digits-graph-kernel", "fusion_error", run,
             B(run, model_kw={}, hp={"enable_graph_kernel": False}),
             "MatMul+BiasAdd+GeLU fused into one bfloat16 kernel; baseline: fusion disabled"))
    run = J(data="blobs", hidden=(64, 32), act="gelu", model_kw={"fused": True}, lr=0.05, epochs=6, fmt="kv3",
            dump=True, hp={"enable_fusion": True})
    add(Case("fusion_error-mlp-blobs-fused", "fusion_error", run, B(run, model_kw={}, hp={"enable_fusion": False}, fmt="kv3")))
    run = J(hidden=(64, 32), model_kw={"scatter": True}, lr=0.05, epochs=6, fmt="kv1", dump=True, dump_seed=1,
            op_seed=1)
    add(Case("nondeterminism-mlp-digits-index-put", "nondeterminism", run, B(run, dump_seed=2, op_seed=2),
             "index_put with duplicate indices: the surviving write differs from run to run"))
    run = J(data="blobs", hidden=(64, 64), model_kw={"dropout": 0.3}, optimizer="adam", lr=1e-3, epochs=5,
            fmt="jsonl", dump=True, dump_seed=11, hp={"seed": None})
    add(Case("nondeterminism-mlp-blobs-dropout-unseeded", "nondeterminism", run, B(run, dump_seed=12, seed=5),
             "no seed set: dropout masks (and the data order) differ between two runs of one configuration"))
    return C


CASES: dict[str, Case] = {c.name: c for c in _cases()}


# --------------------------------------------------------------------------
# the small runs committed under examples/ (README's first command works on a fresh clone)
# --------------------------------------------------------------------------
def _committed() -> dict[str, Case]:
    gelu = J(hidden=(32,), act="gelu", model_kw={"gelu_approx": "tanh"}, optimizer="adam", lr=3e-3, epochs=3,
             fmt="kv2", dump=True, data_rows=300, hp={"device": "npu"})
    run = J(hidden=(64,), model_kw={"bn": True, "bn_momentum": 0.99}, lr=0.05, epochs=10, fmt="kv1",
            batch_size=64, data_rows=300)
    return {
        "healthy": Case("healthy", None, J(epochs=12, fmt="kv1", capture=True, capture_every=25, data_rows=300)),
        "lr_too_high": Case("lr_too_high", "lr_too_high", J(lr=2.5, epochs=8, fmt="kv1", capture=True,
                                                          capture_every=25, data_rows=300)),
        "port_mismatch": Case("port_mismatch", "hparam_mismatch", run,
                              B(run, framework="tensorflow", model_kw={"bn": True, "bn_momentum": 0.01},
                                hp={"bn_momentum": 0.99}),
                              "PyTorch port copied TensorFlow's BatchNorm momentum 0.99"),
        "gelu_port": Case("gelu_port", "operator_accuracy", gelu,
                          B(gelu, model_kw={"gelu_approx": "none"}, hp={"device": "gpu"}),
                          "per-operator dumps: the device computes GELU with the tanh approximation"),
    }


# --------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------
def build_case(case: Case, out: Path, layout: str = "nested") -> tuple[dict, float]:
    """Write one case (``nested``: OUT/NAME/run + OUT/NAME/baseline); its label and the seconds it took."""
    t0 = time.perf_counter()
    base = out / case.name
    run_dir = base / "run" if case.baseline is not None or layout == "nested" else base
    summary = materialize(case.run, run_dir)
    label = {"cause": case.cause, "run": run_dir.relative_to(out).as_posix(), "baseline": None,
             "note": case.note, "summary": summary}
    if case.baseline is not None:
        bdir = base / "baseline"
        materialize(case.baseline, bdir)
        label["baseline"] = bdir.relative_to(out).as_posix()
    return label, round(time.perf_counter() - t0, 2)


def _worker(args: tuple[str, str, bool]) -> tuple[str, tuple[dict, float]]:
    name, out, committed = args
    case = (_committed() if committed else CASES)[name]
    return name, build_case(case, Path(out), layout="flat" if committed else "nested")


def select(names: list[str]) -> list[str]:
    if not names:
        return list(CASES)
    chosen = [n for n in CASES if any(n == s or CASES[n].cause == s or (s == "healthy" and CASES[n].cause is None)
                                      for s in names)]
    unknown = [s for s in names if not any(n == s or CASES[n].cause == s for n in CASES) and s != "healthy"]
    if unknown:
        raise SystemExit(f"generate.py: error: unknown case or cause: {', '.join(unknown)} (see --list)")
    return chosen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=str(DEFAULT_OUT), help="target folder (default examples/generated/)")
    ap.add_argument("--only", nargs="+", default=[], metavar="NAME", help="case names, cause ids, or 'healthy'")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="parallel processes (default 1)")
    ap.add_argument("--committed", action="store_true", help="rewrite the small committed runs under examples/")
    args = ap.parse_args(argv)
    if args.list:
        for c in CASES.values():
            print(f"{c.name:55s} {c.cause or '-':24s} {'baseline' if c.baseline else ''}")
        return 0
    if args.committed:
        out, names = HERE, [n for n in _committed() if not args.only or n in args.only]
        labels_path = HERE / "labels.json"
    else:
        out, names = Path(args.out), select(args.only)
        labels_path = out / "labels.json"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    labels: dict[str, dict] = {}
    work = [(n, str(out), args.committed) for n in names]
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(_worker, work))
    else:
        results = [_worker(w) for w in work]
    for name, (label, seconds) in results:
        labels[name] = label
        s = label["summary"]
        print(f"{name:55s} {label['cause'] or 'healthy':24s} loss {s['first_loss'] if s['first_loss'] is None else round(s['first_loss'], 3)}"
              f" -> {s['last_loss'] if s['last_loss'] is None else round(s['last_loss'], 3)}  eval_acc {s['eval_acc'] or float('nan'):.3f}"
              f"{'  NaN' if s['nonfinite'] else ''}{'  overflows %d' % s['overflows'] if s['overflows'] else ''}"
              f"  ({seconds}s)", flush=True)
    if labels_path.exists() and args.only:
        old = json.loads(labels_path.read_text(encoding="utf-8"))
        known = _committed() if args.committed else CASES
        old = {k: v for k, v in old.items() if k in known}  # cases renamed or removed since
        old.update(labels)
        labels = old
    labels = dict(sorted(labels.items()))
    labels_path.write_text(json.dumps(labels, indent=1) + "\n", encoding="utf-8")
    print(f"{len(results)} runs in {time.perf_counter() - t0:.1f}s -> {labels_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
