"""TensorBoard event files: advisor's reader against tensorboard's ``EventAccumulator`` on the same file, in one run.

Writes an event file of ``--steps`` steps x ``--tags`` scalar tags, one scalar per event as ``torch``'s
``SummaryWriter.add_scalar``, Lightning and Keras write them (``--tensor``: as TensorFlow 2's ``tf.summary.scalar``
writes them, a float32 tensor; ``--per-event``: all the tags of a step in one event), then measures in fresh
processes, alternately (CPU seconds, least of ``--repeat``):

- ``EventAccumulator(path, size_guidance={"scalars": 0}).Reload()`` (tensorboard's own reader, every scalar kept);
- ``advisor.read.logs.read_file(path)``.

``read``: the reading alone, each process having imported its modules first (tensorboard's record loader for both);
``process``: the whole child process (interpreter, imports and reading).

Usage::

    python benchmarks/tb_events_bench.py [--steps 100000] [--tags 3] [--tensor] [--per-event] [--repeat 3]
                                         [--before DIR] [--json OUT.json]

``--before DIR``: also measure the reader of the advisor tree in DIR (another version, in the same run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAGS = ("train/loss", "train/acc", "lr")

_ACCUMULATOR = """
import sys, time
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
c = time.process_time()
acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0, "tensors": 0})
acc.Reload()
n = sum(len(acc.Scalars(t)) for t in acc.Tags()["scalars"]) + sum(len(acc.Tensors(t)) for t in acc.Tags()["tensors"])
print(time.process_time() - c, n)
"""
_ADVISOR = """
import sys, time
sys.path.insert(0, %r)
from pathlib import Path
from advisor.read.logs import read_file
import tensorboard.backend.event_processing.event_file_loader  # (imported by the reader: as the other process)
c = time.process_time()
read = read_file(Path(sys.argv[1]))
n = sum(s.buf.count for s in read.series.values())
print(time.process_time() - c, n)
"""


def write_events(path: Path, steps: int, tags: int, tensor: bool, per_event: bool) -> int:
    """The event file (tensorboard's own writer); returns the number of scalars written."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    from tensorboard.util import tensor_util

    names = [TAGS[k] if k < len(TAGS) else f"metric_{k}" for k in range(tags)]
    writer = EventFileWriter(str(path))
    for step in range(steps):
        values = []
        for k, name in enumerate(names):
            x = 2.0 / (1 + step * 1e-3) + k
            if tensor:
                values.append(summary_pb2.Summary.Value(tag=name, tensor=tensor_util.make_tensor_proto(x)))
            else:
                values.append(summary_pb2.Summary.Value(tag=name, simple_value=x))
        groups = [values] if per_event else [[v] for v in values]
        for group in groups:
            writer.add_event(
                event_pb2.Event(step=step, wall_time=1.0e9 + step, summary=summary_pb2.Summary(value=group))
            )
    writer.close()
    return steps * tags


def cpu_of(code: str, path: Path) -> tuple[float, float, int]:
    """(CPU seconds of the reading, of the whole process, scalars read) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu, n = out.stdout.split()
    whole = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(cpu), whole, int(n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--tags", type=int, default=3)
    ap.add_argument("--tensor", action="store_true", help="scalars as float32 tensors (TensorFlow 2)")
    ap.add_argument("--per-event", action="store_true", help="all the tags of a step in one event")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", type=Path, default=None, help="an advisor tree whose reader is measured too")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        written = write_events(Path(tmp), args.steps, args.tags, args.tensor, args.per_event)
        path = next(Path(tmp).glob("events.out.tfevents.*"))
        readers = {"EventAccumulator": _ACCUMULATOR, "advisor": _ADVISOR % str(ROOT)}
        if args.before is not None:
            readers["advisor (before)"] = _ADVISOR % str(args.before.resolve())
        runs: dict[str, list[float]] = {name: [] for name in readers}
        whole: dict[str, list[float]] = {name: [] for name in readers}
        counts: dict[str, int] = {}
        for _ in range(args.repeat):  # alternately, so that the machine's load hits all alike
            for name, code in readers.items():
                cpu, process, n = cpu_of(code, path)
                runs[name].append(cpu)
                whole[name].append(process)
                counts[name] = n
        size = path.stat().st_size
    best = {k: min(v) for k, v in runs.items()}
    best_whole = {k: min(v) for k, v in whole.items()}
    result = {
        "steps": args.steps,
        "tags": args.tags,
        "tensor": args.tensor,
        "per_event": args.per_event,
        "scalars_written": written,
        "file_bytes": size,
        "scalars_read": counts,
        "read_cpu_s": runs,
        "best_read_cpu_s": best,
        "read_advisor_over_accumulator": best["advisor"] / best["EventAccumulator"],
        "process_cpu_s": whole,
        "best_process_cpu_s": best_whole,
        "process_advisor_over_accumulator": best_whole["advisor"] / best_whole["EventAccumulator"],
        "load_average": os.getloadavg(),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }
    for k, v in result.items():
        print(f"{k:26s} {v}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
