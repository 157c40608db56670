"""Overhead of advisor.capture on a small CNN: step time with and without the hook.

    python benchmarks/capture_overhead.py [--device cpu|cuda] [--every 10] [--steps 200] [--repeats 5]

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


def step_times(device: str, steps: int, every: int | None, warmup: int = 10, clock=time.perf_counter) -> float:
    torch.manual_seed(0)
    model = cnn().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(64, 3, 32, 32, device=device)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: leave as is)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: process CPU time, steadier on a shared machine (use with --threads 1)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    modes = {"none": None, f"every {args.every}": args.every, "every 1": 1}
    results: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(args.repeats):
        for name, every in modes.items():
            clock = time.process_time if args.clock == "cpu" else time.perf_counter
            results[name].append(step_times(args.device, args.steps, every, clock=clock))
    base = statistics.median(results["none"])
    report = {"device": args.device, "torch": torch.__version__, "steps": args.steps, "repeats": args.repeats,
              "threads": torch.get_num_threads(), "clock": args.clock, "step_ms": {}, "overhead_pct": {}}
    for name, vals in results.items():
        med = statistics.median(vals)
        report["step_ms"][name] = round(1000 * med, 3)
        report["overhead_pct"][name] = round(100 * (med / base - 1), 2)
        report.setdefault("runs_ms", {})[name] = [round(1000 * v, 2) for v in vals]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
