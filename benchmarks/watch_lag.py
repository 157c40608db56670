"""How far ``advisor watch`` falls behind a log growing at 10,000 lines/s.

    python benchmarks/watch_lag.py [--rate 10000] [--seconds 10] [--interval 0.1]

A writer process appends a healthy training log (``step N loss X``) to a run
folder at ``--rate`` lines per second, in batches every 10 ms, for
``--seconds`` seconds, then writes one NaN loss line; the run's hparams.yaml
makes that divergence a high-confidence cause (lr_too_high). The watcher runs
in this process (``advisor.watch.Watcher``, polling every ``--interval`` s).

Reported:
- lag of each written batch: from its write to the end of the first diagnosis
  that began after it (median, 90th percentile and max, and per quarter of the
  run, to show whether it grows with the log);
- the NaN alert's delay: from the NaN line's write to the alert that names it (the urgent symptom of a
  non-finite loss, raised by a diagnosis that began after the line was written; alerts raised before it, such as
  a cause the hparams alone make likely, are listed but do not end the measurement);
- reference, measured in the same run: one ``diagnose`` of the final log
  (the lag cannot be below one diagnosis of what has been written so far).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import statistics
import tempfile
import time
from pathlib import Path

from advisor.diagnosis import diagnose
from advisor.watch import Alert, Watcher


#: the watcher's symptoms that name a non-finite loss (advisor/watch.py URGENT_SYMPTOMS)
NONFINITE = ("nonfinite_loss", "nonfinite_loss_at_start")


def writer(log: str, rate: int, seconds: float, times, start, nan_written) -> None:
    batch = max(1, rate // 100)
    start.wait()
    t0 = time.monotonic()
    step = 0
    with open(log, "a") as fh:
        while True:
            due = t0 + step / rate
            now = time.monotonic()
            if now - t0 >= seconds:
                break
            if due > now:
                time.sleep(due - now)
            fh.write("".join(f"step {i} loss {2.0 * math.exp(-i / (rate * seconds)) + 0.01 * (i % 7):.4f}\n"
                             for i in range(step, step + batch)))
            fh.flush()
            times.append(time.monotonic())
            step += batch
        fh.write(f"step {step} loss nan\n")
        fh.flush()
        at = time.monotonic()
        times.append(-at)  # negative: the NaN line
        nan_written.value = at


def nan_alert(raised: list[tuple[Alert, float]], nan_at: float) -> float | None:
    """When the alert for the NaN line came: the first symptom alert of a non-finite loss raised by a diagnosis that
    began after the line was written (``nan_at``: 0 while it is not written yet)."""
    if not nan_at:
        return None
    return next((at for a, at in raised if a.kind == "symptom" and a.cause in NONFINITE and a.seen_at >= nan_at), None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--interval", type=float, default=0.1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        run.mkdir()
        (run / "hparams.yaml").write_text("learning_rate: 0.5\noptimizer: sgd\nbatch_size: 32\n")
        log = run / "train.log"
        log.write_text("")
        w = Watcher(run, alert=0.8)
        w.step()  # rules loaded, first (empty) diagnosis done before the clock starts
        ctx = mp.get_context("spawn")
        with ctx.Manager() as mgr:
            times, start, nan_written = mgr.list(), mgr.Event(), mgr.Value("d", 0.0)
            proc = ctx.Process(target=writer, args=(str(log), args.rate, args.seconds, times, start, nan_written))
            proc.start()
            start.set()
            raised: list[tuple[Alert, float]] = []  # every alert, with when step() returned it
            deadline = time.monotonic() + args.seconds + 120
            while nan_alert(raised, nan_written.value) is None and time.monotonic() < deadline:
                raised += [(a, time.monotonic()) for a in w.step()]
                time.sleep(args.interval)
            proc.join()
            written = list(times)
        w.close()
        batches = [t for t in written if t > 0]
        nan_at = -next(t for t in written if t < 0)
        lines = sum(1 for _ in log.open())
        t_ref = time.perf_counter()
        diagnose(run)
        ref = time.perf_counter() - t_ref
    cycles = w.cycles
    lags = []
    for t in batches:
        c = next((c for c in cycles if c.started > t), None)
        if c is not None:
            lags.append(c.ended - t)
    lags_sorted = sorted(lags)
    q = max(1, len(lags) // 4)
    print(f"log: {lines} lines in {batches[-1] - batches[0]:.1f} s "
          f"({(lines - 1) / max(batches[-1] - batches[0], 1e-9):.0f} lines/s written), {len(cycles)} diagnoses")
    print(f"batch lag: median {statistics.median(lags):.2f} s, p90 {lags_sorted[int(0.9 * len(lags))]:.2f} s, "
          f"max {lags_sorted[-1]:.2f} s")
    print("median lag per quarter of the run: "
          + ", ".join(f"{statistics.median(lags[i:i + q]):.2f} s" for i in range(0, 4 * q, q) if lags[i:i + q]))
    for a, at in raised:
        when = f"{at - nan_at:+.2f} s from the NaN line" if at >= nan_at else f"{nan_at - at:.2f} s before the NaN line"
        print(f"alert {a.kind} {a.cause} (diagnosis {a.cycle}): {when}")
    alert_at = nan_alert(raised, nan_at)
    print(f"NaN alert delay: {alert_at - nan_at:.2f} s" if alert_at else "NaN alert: none")
    print(f"reference: one diagnose of the final {lines}-line log: {ref:.2f} s")


if __name__ == "__main__":
    main()
