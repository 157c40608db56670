"""Overhead of advisor.capture on a small CNN: step time with and without the hook.

    python benchmarks/capture_overhead.py [--device cpu|cuda] [--every 10] [--steps 200] [--repeats 5]
    python benchmarks/capture_overhead.py --tensors 20000 --every 1 --steps 3 --warmup 1 --repeats 1
    python benchmarks/capture_overhead.py --framework keras|lightning|hf|mindspore|all [--steps 60] [--repeats 3]

``--framework``: the framework callbacks instead of the raw-loop hook, each on
the same MLP (256 -> 512 -> 512 -> 10, Tanh, batch 256, SGD) trained through
the framework's own loop (``fit``, ``Trainer.fit``, ``Trainer.train``,
``Model.train``) on the CPU, without the callback, with it at ``--every`` and
at every step; time per step = the loop's time / steps (process CPU time with
``--clock cpu``), interleaved and repeated as below.

Trains the same CNN (4 conv layers + BatchNorm + ReLU, a linear head; CIFAR-sized
random batches of 64) three ways, interleaved to spread machine noise over all
of them: no capture; capture of weights/gradients/updates/activations every
``--every`` steps; the same every step (the worst case). Reports the median
step time of each (over ``--repeats`` runs, each a median over ``--steps``
steps after a warm-up; ``--clock cpu`` measures process CPU time instead of
wall time) and the overhead relative to no capture. On CUDA every
step ends with a synchronisation so that the step time is the real one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import torch
from torch import nn

from advisor.capture import attach


def cnn() -> nn.Module:
    def block(cin: int, cout: int) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    return nn.Sequential(*block(3, 32), *block(32, 32), nn.MaxPool2d(2), *block(32, 64), *block(64, 64),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


class Wide(nn.Module):
    """``tensors`` parameter tensors: ``tensors // 2`` small linear heads (weight and bias each) over one input,
    their outputs averaged; a model of many small tensors, where the hook's cost per tensor dominates."""

    def __init__(self, tensors: int):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(8, 10) for _ in range(max(1, tensors // 2)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([h(x) for h in self.heads]).mean(0)


def step_times(device: str, steps: int, every: int | None, warmup: int = 10, clock=time.perf_counter,
               tensors: int = 0) -> float:
    torch.manual_seed(0)
    model = (Wide(tensors) if tensors else cnn()).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(64, 8, device=device) if tensors else torch.randn(64, 3, 32, 32, device=device)
    y = torch.randint(0, 10, (64,), device=device)
    times = []
    with tempfile.TemporaryDirectory() as out:
        cap = attach(model, opt, out, every=every) if every else None
        for i in range(warmup + steps):
            t0 = clock()
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if device != "cpu":
                torch.cuda.synchronize()
            if i >= warmup:
                times.append(clock() - t0)
        if cap is not None:
            cap.close()
    # mean over whole cycles of `every` steps: the recorded step's cost is spread over the cycle
    return sum(times) / len(times)


# -- framework callbacks --------------------------------------------------------------
MLP = (256, 512, 512, 10)
BATCH = 256


def _data(steps: int):
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.normal(size=(steps * BATCH, MLP[0])).astype("float32")
    y = rng.integers(0, MLP[-1], size=steps * BATCH).astype("int64")
    return x, y


def _keras(steps: int, every: int | None, out: str, clock) -> float:
    import keras

    x, y = _data(steps)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((MLP[0],)), keras.layers.Dense(MLP[1], activation="tanh"),
                              keras.layers.Dense(MLP[2], activation="tanh"), keras.layers.Dense(MLP[3])])
    model.compile(optimizer=keras.optimizers.SGD(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x[:BATCH * 2], y[:BATCH * 2], batch_size=BATCH, epochs=1, verbose=0)  # warm-up
    cbs = []
    if every:
        from advisor.capture.keras import AdvisorCallback

        cbs = [AdvisorCallback(out, every=every)]
    t0 = clock()
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False, callbacks=cbs)
    return (clock() - t0) / steps


def _torch_mlp():
    layers = []
    for a, b in zip(MLP[:-1], MLP[1:]):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers[:-1])


def _lightning(steps: int, every: int | None, out: str, clock) -> float:
    import lightning.pytorch as L

    x, y = _data(steps)

    class Net(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = _torch_mlp()

        def training_step(self, batch, i):
            return nn.functional.cross_entropy(self.net(batch[0]), batch[1])

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    torch.manual_seed(0)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
                                       batch_size=BATCH)
    cbs = []
    if every:
        from advisor.capture.lightning import AdvisorCallback

        cbs = [AdvisorCallback(out, every=every)]
    trainer = L.Trainer(max_epochs=1, accelerator="cpu", callbacks=cbs, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, default_root_dir=out)
    t0 = clock()
    trainer.fit(Net(), data)
    return (clock() - t0) / steps


def _hf(steps: int, every: int | None, out: str, clock) -> float:
    import transformers

    x, y = _data(steps)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = _torch_mlp()

        def forward(self, x, labels=None):
            logits = self.net(x)
            return {"loss": nn.functional.cross_entropy(logits, labels), "logits": logits}

    class Rows(torch.utils.data.Dataset):
        def __len__(self):
            return len(x)

        def __getitem__(self, i):
            return {"x": torch.from_numpy(x[i]), "labels": torch.tensor(y[i])}

    torch.manual_seed(0)
    args = transformers.TrainingArguments(output_dir=out, per_device_train_batch_size=BATCH, num_train_epochs=1,
                                          learning_rate=0.01, optim="sgd", lr_scheduler_type="constant",
                                          max_grad_norm=0.0, logging_steps=10**9, save_strategy="no", report_to=[],
                                          use_cpu=True, disable_tqdm=True, dataloader_drop_last=True)
    cbs = []
    if every:
        from advisor.capture.hf import AdvisorCallback

        cbs = [AdvisorCallback(out, every=every)]
    trainer = transformers.Trainer(model=Net(), args=args, train_dataset=Rows(), callbacks=cbs)
    t0 = clock()
    trainer.train()
    return (clock() - t0) / steps


def _mindspore(steps: int, every: int | None, out: str, clock) -> float:
    import mindspore as ms
    import mindspore.dataset as ds
    from mindspore import nn as msnn
    from mindspore.train import Model

    x, y = _data(steps)
    y = y.astype("int32")

    class Batches:
        def __getitem__(self, i):
            return x[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH]

        def __len__(self):
            return steps

    ms.set_seed(0)
    net = msnn.SequentialCell([msnn.Dense(MLP[0], MLP[1]), msnn.Tanh(), msnn.Dense(MLP[1], MLP[2]), msnn.Tanh(),
                               msnn.Dense(MLP[2], MLP[3])])
    model = Model(net, msnn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  msnn.SGD(net.trainable_params(), learning_rate=0.01))
    cbs = []
    if every:
        from advisor.capture.mindspore import AdvisorCallback

        cbs = [AdvisorCallback(out, every=every)]
    data = ds.GeneratorDataset(Batches(), ["x", "y"], shuffle=False)
    t0 = clock()
    model.train(1, data, callbacks=cbs, dataset_sink_mode=False)
    return (clock() - t0) / steps


FRAMEWORKS = {"keras": _keras, "lightning": _lightning, "hf": _hf, "mindspore": _mindspore}


def framework_overhead(name: str, steps: int, every: int, repeats: int, clock) -> dict:
    run = FRAMEWORKS[name]
    modes = {"none": None, f"every {every}": every, "every 1": 1}
    results: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(repeats):
        for mode, ev in modes.items():
            with tempfile.TemporaryDirectory() as out:
                results[mode].append(run(steps, ev, out, clock))
    base = statistics.median(results["none"])
    per_record = statistics.median(results["every 1"]) - base  # the cost of one recorded step
    return {"framework": name, "steps": steps, "repeats": repeats,
            "step_ms": {m: round(1000 * statistics.median(v), 3) for m, v in results.items()},
            "overhead_pct": {m: round(100 * (statistics.median(v) / base - 1), 2) for m, v in results.items()},
            f"expected_overhead_pct_every_{every}": round(100 * per_record / every / base, 2),
            "runs_ms": {m: [round(1000 * x, 2) for x in v] for m, v in results.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: leave as is)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: process CPU time, steadier on a shared machine (use with --threads 1)")
    ap.add_argument("--framework", choices=("torch", "all", *FRAMEWORKS), default="torch",
                    help="torch: the raw-loop hook on a CNN; else the framework callbacks on an MLP")
    ap.add_argument("--tensors", type=int, default=0,
                    help="the raw-loop hook on a model of this many small parameter tensors instead of the CNN")
    ap.add_argument("--warmup", type=int, default=10, help="steps before the timed ones")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.framework != "torch":
        clock = time.process_time if args.clock == "cpu" else time.perf_counter
        for name in (FRAMEWORKS if args.framework == "all" else [args.framework]):
            print(json.dumps(framework_overhead(name, args.steps, args.every, args.repeats, clock), indent=1),
                  flush=True)
        return
    modes = {"none": None, f"every {args.every}": args.every, "every 1": 1}
    results: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(args.repeats):
        for name, every in modes.items():
            clock = time.process_time if args.clock == "cpu" else time.perf_counter
            results[name].append(step_times(args.device, args.steps, every, args.warmup, clock, args.tensors))
    base = statistics.median(results["none"])
    report = {"device": args.device, "torch": torch.__version__, "steps": args.steps, "repeats": args.repeats,
              "model": f"{args.tensors} small parameter tensors" if args.tensors else "CNN",
              "threads": torch.get_num_threads(), "clock": args.clock, "step_ms": {}, "overhead_pct": {}}
    for name, vals in results.items():
        med = statistics.median(vals)
        report["step_ms"][name] = round(1000 * med, 3)
        report["overhead_pct"][name] = round(100 * (med / base - 1), 2)
        report.setdefault("runs_ms", {})[name] = [round(1000 * v, 2) for v in vals]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
