"""Real training logs in every format the log readers understand.

Each *run* is a small real training job (torch on CPU, one thread, seeded): an
MLP on a generated 10-class problem, trained healthy or with one fault
(learning rate far too high or too low, too few steps, a training set so small
that the model overfits, a loss that gets no gradient, fp16-style dynamic loss
scaling that overflows). ``train(kind)`` returns its ``History`` (the values
the job really produced, step by step); the ``WRITERS`` print that history the
way each framework or habit prints it: hand-written key/value lines, MindSpore
``LossMonitor``, Hugging Face console dicts and ``trainer_state.json``, Keras
progress lines and ``CSVLogger``, Lightning ``metrics.csv``, ``metrics.jsonl``,
torchvision ``MetricLogger``, detectron2 events, DeepSpeed fp16 messages.

Usage::

    python examples/logs_gen.py OUT [--runs healthy lr_high ...] [--formats keyvalue hf_state ...]

writes ``OUT/<run>__<format>/`` folders (plus ``hparams.yaml`` with the
learning rate, optimizer and class count) and ``OUT/labels.json``.
Tests import this module and call ``train``/``write_run`` directly.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

CLASSES = 10

#: run kind -> (optimizer, lr, steps, train samples, fault, true cause or None)
RUNS: dict[str, dict] = {
    "healthy": dict(opt="adam", lr=1e-3, steps=300, n_train=8192, cause=None),
    "lr_high": dict(opt="sgd", lr=30.0, steps=300, n_train=2048, cause="lr_too_high"),
    "lr_low": dict(opt="sgd", lr=1e-5, steps=400, n_train=8192, cause="lr_too_low"),
    "short": dict(opt="sgd", lr=0.003, steps=150, n_train=8192, cause="insufficient_epochs"),
    "overfit": dict(opt="adam", lr=3e-3, steps=400, n_train=48, cause="overfitting", noise=0.35),
    "no_grad": dict(opt="adam", lr=3e-3, steps=300, n_train=2048, cause="loss_function_error", detach=True),
    # inputs around a million (no normalisation): first-layer gradients pass fp16's 65504 at any scale
    "fp16_overflow": dict(opt="adam", lr=1e-3, steps=300, n_train=8192, cause="fp_overflow", scaler=2.0 ** 16,
                          x_scale=1e6),
    "fp16_healthy": dict(opt="adam", lr=1e-3, steps=300, n_train=8192, cause=None, scaler=2.0 ** 24),
}


@dataclass
class History:
    kind: str
    lr: float
    optimizer: str
    steps_per_epoch: int
    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    scale: list[float] = field(default_factory=list)            # loss scale used at each step (scaler runs)
    overflow: list[tuple[int, float, float]] = field(default_factory=list)  # (step, attempted, reduced to)
    eval_step: list[int] = field(default_factory=list)
    eval_loss: list[float] = field(default_factory=list)
    eval_acc: list[float] = field(default_factory=list)
    cause: str | None = None

    def epoch_of(self, step: int) -> int:
        return step // self.steps_per_epoch


def _data(n: int, seed: int, noise: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(CLASSES, 20, generator=torch.Generator().manual_seed(1234)) * 1.2
    y = torch.randint(0, CLASSES, (n,), generator=g)
    x = centers[y] + torch.randn(n, 20, generator=g) * 1.5
    if noise:
        flip = torch.rand(n, generator=g) < noise
        y = torch.where(flip, torch.randint(0, CLASSES, (n,), generator=g), y)
    return x, y


def train(kind: str, seed: int = 0) -> History:
    """Train the run ``kind`` of ``RUNS`` and return what it logged."""
    cfg = RUNS[kind]
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    x, y = _data(cfg["n_train"], seed=seed + 1, noise=cfg.get("noise", 0.0))
    xe, ye = _data(512, seed=seed + 99)
    x, xe = x * cfg.get("x_scale", 1.0), xe * cfg.get("x_scale", 1.0)
    width = 256 if kind == "overfit" else 64
    model = nn.Sequential(nn.Linear(20, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, CLASSES))
    opt = (torch.optim.Adam(model.parameters(), lr=cfg["lr"]) if cfg["opt"] == "adam"
           else torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9))
    lossf = nn.CrossEntropyLoss()
    batch = 32
    spe = max(1, cfg["n_train"] // batch)
    hist = History(kind=kind, lr=cfg["lr"], optimizer=cfg["opt"], steps_per_epoch=spe, cause=cfg["cause"])
    scale = cfg.get("scaler")
    good_steps = 0
    g = torch.Generator().manual_seed(seed + 7)
    eval_every = max(10, cfg["steps"] // 20)
    for step in range(cfg["steps"]):
        idx = torch.randint(0, x.shape[0], (batch,), generator=g)
        out = model(x[idx])
        if cfg.get("detach"):
            out = out.detach().requires_grad_()
        loss = lossf(out, y[idx])
        opt.zero_grad()
        (loss * scale if scale else loss).backward()
        params = [p for p in model.parameters() if p.grad is not None]
        if scale:
            grads = [p.grad / scale for p in params]
        else:
            grads = [p.grad for p in params]
        gn = float(torch.sqrt(sum((gr.double() ** 2).sum() for gr in grads))) if grads else 0.0
        hist.step.append(step)
        hist.loss.append(float(loss.detach()))
        hist.lrs.append(cfg["lr"])
        hist.grad_norm.append(gn)
        if scale:
            hist.scale.append(scale)
            # fp16 has range 65504: a scaled gradient beyond it overflows (the check a GradScaler does in fp16)
            peak = max(float(p.grad.abs().max()) for p in params) if params else 0.0
            if not math.isfinite(peak) or peak > 65504.0 or not math.isfinite(float(loss.detach())):
                new = max(scale / 2, 1.0)
                hist.grad_norm[-1] = math.inf      # what a trainer logs for a skipped step
                hist.overflow.append((step, scale, new))
                scale, good_steps = new, 0
                continue
            for p, gr in zip(params, grads):
                p.grad = gr
            good_steps += 1
            if good_steps >= 100:
                scale, good_steps = scale * 2, 0
        opt.step()
        if step % eval_every == eval_every - 1 or step == cfg["steps"] - 1:
            with torch.no_grad():
                oe = model(xe)
                hist.eval_step.append(step)
                hist.eval_loss.append(float(lossf(oe, ye)))
                hist.eval_acc.append(float((oe.argmax(1) == ye).float().mean()))
    return hist


# -- writers: one per log format ---------------------------------------------------------
def _f(v: float) -> str:
    return "nan" if math.isnan(v) else ("inf" if v == math.inf else ("-inf" if v == -math.inf else f"{v:.6g}"))


def w_keyvalue(h: History, d: Path) -> None:
    lines = []
    ev = dict(zip(h.eval_step, zip(h.eval_loss, h.eval_acc)))
    for i, s in enumerate(h.step):
        if s % 5 == 0:
            scale = f" loss_scale: {h.scale[i]:.0f}" if h.scale else ""
            lines.append(f"[epoch {h.epoch_of(s)}][iter {s}/{len(h.step)}] loss: {_f(h.loss[i])} lr: {h.lrs[i]:.2e} "
                         f"grad_norm: {_f(h.grad_norm[i])}{scale}")
        if s in ev:
            lines.append(f"epoch {h.epoch_of(s)} step {s} val_loss {_f(ev[s][0])} val_acc {ev[s][1]:.4f}")
    (d / "train.log").write_text("\n".join(lines) + "\n")


def w_mindspore(h: History, d: Path) -> None:
    lines = ["============== Starting Training =============="]
    for i, s in enumerate(h.step):
        lines.append(f"epoch: {h.epoch_of(s) + 1} step: {s + 1}, loss is {_f(h.loss[i])}")
    (d / "output.txt").write_text("\n".join(lines) + "\n")


def w_hf_print(h: History, d: Path) -> None:
    lines = []
    ev = dict(zip(h.eval_step, zip(h.eval_loss, h.eval_acc)))
    for i, s in enumerate(h.step):
        ep = (s + 1) / h.steps_per_epoch
        if (s + 1) % 10 == 0:
            lines.append(str({"loss": round(h.loss[i], 4), "grad_norm": h.grad_norm[i], "learning_rate": h.lrs[i],
                              "epoch": round(ep, 4)}))
        if s in ev:
            lines.append(str({"eval_loss": ev[s][0], "eval_accuracy": ev[s][1], "eval_runtime": 0.5, "epoch": round(ep, 4)}))
    lines.append(str({"train_runtime": 12.3, "train_samples_per_second": 100.0, "train_loss": 0.5, "epoch": 3.0}))
    (d / "stdout").write_text("\n".join(lines) + "\n")


def w_hf_state(h: History, d: Path) -> None:
    hist = []
    ev = dict(zip(h.eval_step, zip(h.eval_loss, h.eval_acc)))
    for i, s in enumerate(h.step):
        if (s + 1) % 10 == 0:
            hist.append({"epoch": (s + 1) / h.steps_per_epoch, "grad_norm": h.grad_norm[i], "learning_rate": h.lrs[i],
                         "loss": round(h.loss[i], 4) if math.isfinite(h.loss[i]) else h.loss[i], "step": s + 1})
        if s in ev:
            hist.append({"epoch": (s + 1) / h.steps_per_epoch, "eval_loss": ev[s][0], "eval_accuracy": ev[s][1],
                         "step": s + 1})
    (d / "trainer_state.json").write_text(json.dumps({"global_step": len(h.step), "log_history": hist}, indent=2))


def _epoch_rows(h: History) -> list[tuple[int, float, float, float | None, float | None]]:
    """(epoch, mean train loss, mean acc placeholder, eval loss, eval acc) per epoch end."""
    rows = []
    n_ep = max(1, len(h.step) // h.steps_per_epoch)
    per = max(1, len(h.step) // max(n_ep, 1))
    ev = list(zip(h.eval_step, h.eval_loss, h.eval_acc))
    for e in range(max(n_ep, 8)):
        lo, hi = e * len(h.step) // max(n_ep, 8), (e + 1) * len(h.step) // max(n_ep, 8)
        if hi <= lo:
            continue
        seg = h.loss[lo:hi]
        tl = sum(seg) / len(seg)
        last_ev = [v for v in ev if v[0] < hi]
        rows.append((e, tl, 0.0, last_ev[-1][1] if last_ev else None, last_ev[-1][2] if last_ev else None))
    del per
    return rows


def w_keras(h: History, d: Path) -> None:
    rows = _epoch_rows(h)
    lines = []
    for e, tl, _, vl, va in rows:
        lines.append(f"Epoch {e + 1}/{len(rows)}")
        lines.append(f"10/32 [=======>......................] - ETA: 1s - loss: {_f(tl * 1.1)}")
        extra = f" - val_loss: {_f(vl)} - val_accuracy: {va:.4f}" if vl is not None else ""
        lines.append(f"32/32 [==============================] - 1s 3ms/step - loss: {_f(tl)}{extra}")
    (d / "keras_fit.log").write_text("\n".join(lines) + "\n")


def w_keras_csv(h: History, d: Path) -> None:
    lines = ["epoch,loss,val_accuracy,val_loss"]
    for e, tl, _, vl, va in _epoch_rows(h):
        lines.append(f"{e},{_f(tl)},{'' if va is None else va},{'' if vl is None else _f(vl)}")
    (d / "training.log").write_text("\n".join(lines) + "\n")


def w_lightning(h: History, d: Path) -> None:
    lines = ["epoch,step,train_loss_step,train_loss_epoch,val_loss,val_acc"]
    ev = dict(zip(h.eval_step, zip(h.eval_loss, h.eval_acc)))
    for i, s in enumerate(h.step):
        if (s + 1) % 5 == 0:
            lines.append(f"{h.epoch_of(s)},{s},{_f(h.loss[i])},,,")
        if s in ev:
            lines.append(f"{h.epoch_of(s)},{s},,,{_f(ev[s][0])},{ev[s][1]}")
    (d / "metrics.csv").write_text("\n".join(lines) + "\n")


def w_jsonl(h: History, d: Path) -> None:
    lines = []
    ev = dict(zip(h.eval_step, h.eval_loss))
    for i, s in enumerate(h.step):
        rec = {"step": s, "loss": h.loss[i], "lr": h.lrs[i], "grad_norm": h.grad_norm[i]}
        lines.append(json.dumps(rec))
        if s in ev:
            lines.append(json.dumps({"step": s, "eval_loss": ev[s]}))
    (d / "metrics.jsonl").write_text("\n".join(lines) + "\n")


def w_metriclogger(h: History, d: Path) -> None:
    lines = []
    spe = h.steps_per_epoch
    window: list[float] = []
    total = 0.0
    for i, s in enumerate(h.step):
        e, it = divmod(s, spe)
        window = (window + [h.loss[i]])[-20:]
        total += h.loss[i]
        med = sorted(window)[len(window) // 2]
        lines.append(f"Epoch: [{e}]  [{it:>3}/{spe}]  eta: 0:00:01  lr: {h.lrs[i]:.6f}  loss: {med:.4f} "
                     f"({total / (i + 1):.4f})  time: 0.0100  data: 0.0010  max mem: 100")
        if it == spe - 1:
            lines.append(f"Epoch: [{e}] Total time: 0:00:01 (0.0100 s / it)")
    (d / "train_log.txt").write_text("\n".join(lines) + "\n")


def w_detectron2(h: History, d: Path) -> None:
    lines = ["[11/29 10:00:00 d2.engine.train_loop]: Starting training from iteration 0"]
    for i, s in enumerate(h.step):
        if s % 20 == 19:
            lines.append(f"[11/29 10:00:{s % 60:02d} d2.utils.events]:  eta: 0:01:00  iter: {s}  total_loss: "
                         f"{h.loss[i]:.4g}  loss_cls: {h.loss[i] * 0.6:.4g}  loss_box_reg: {h.loss[i] * 0.4:.4g}  "
                         f"time: 0.0100  data_time: 0.0010  lr: {h.lrs[i]:.5g}  max_mem: 100M")
    (d / "log.txt").write_text("\n".join(lines) + "\n")


def w_deepspeed(h: History, d: Path) -> None:
    lines = ["[2026-11-29 10:00:00,000] [INFO] [config.py:1003:print]   loss_scale ................... 0"]
    over = {s: (a, r) for s, a, r in h.overflow}
    for i, s in enumerate(h.step):
        if s in over:
            a, r = over[s]
            lines.append(f"[2026-11-29 10:00:01,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
                         f"Rank 0 Skipping step. Attempted loss scale: {a:.0f}, reducing to {r:.0f}")
        if s % 10 == 0:
            lines.append(f"step:{s}, loss:{_f(h.loss[i])}")
    (d / "zero_run.log").write_text("\n".join(lines) + "\n")


WRITERS = {
    "keyvalue": w_keyvalue, "mindspore": w_mindspore, "hf_print": w_hf_print, "hf_state": w_hf_state,
    "keras": w_keras, "keras_csv": w_keras_csv, "lightning": w_lightning, "jsonl": w_jsonl,
    "metriclogger": w_metriclogger, "detectron2": w_detectron2, "deepspeed": w_deepspeed,
}


def write_run(h: History, fmt: str, d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    WRITERS[fmt](h, d)
    (d / "hparams.yaml").write_text(f"optimizer: {h.optimizer}\nlr: {h.lr}\nnum_classes: {CLASSES}\n"
                                    f"framework: pytorch\nbatch_size: 32\n")
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--runs", nargs="*", default=list(RUNS))
    ap.add_argument("--formats", nargs="*", default=list(WRITERS))
    args = ap.parse_args()
    labels = {}
    for kind in args.runs:
        h = train(kind)
        for fmt in args.formats:
            d = write_run(h, fmt, args.out / f"{kind}__{fmt}")
            labels[d.name] = {"cause": h.cause, "run": kind, "format": fmt}
    (args.out / "labels.json").write_text(json.dumps(labels, indent=1))


if __name__ == "__main__":
    main()
