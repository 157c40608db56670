"""What every capture writes, whatever the framework: records of ``tensors.jsonl`` and operator dumps.

The PyTorch hook (``hook.py``) and the framework callbacks (``keras.py``,
``lightning.py``, ``hf.py``, ``mindspore.py``) compute a *statistics vector*
per tensor, ``[sum, sum of squares, min, max, zeros, nan, inf, saturated]``
(positions ``SUM`` ... ``SAT``), and turn it into a record here, so that every
writer gives the same fields with the same meaning (run-layout.md).
A framework without torch tensors uses ``numpy_stats``.
"""

from __future__ import annotations

import json
import math
import re
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: module/layer/activation class name -> (low limit, high limit) of its output
SATURATING = {
    "Sigmoid": (0.0, 1.0),
    "Hardsigmoid": (0.0, 1.0),
    "Tanh": (-1.0, 1.0),
    "Hardtanh": (-1.0, 1.0),
    "Softsign": (-1.0, 1.0),
}
#: share of the output range counted as "at the limit"
SAT_MARGIN = 0.01

# positions in a statistics vector
SUM, SUMSQ, MIN, MAX, ZEROS, NAN, INF, SAT = range(8)


class Guard:
    """Runs a capture's own work so that no error of advisor's reaches the user's training: the first error is
    reported once, as a warning naming what failed, and the capture records nothing more (``broken``); the
    forward pass, the backward pass and the optimizer step go on as if no capture were attached."""

    def __init__(self, what: str = "advisor capture"):
        self.what = what
        self.broken = False

    def run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if self.broken:
            return None
        return self._call(fn, *args, **kwargs)

    def always(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` even after an error stopped the recording (closing a file: a full disk or a file made
        immutable fails the close's flush again); its error is reported as ``run``'s are, one warning in all."""
        return self._call(fn, *args, **kwargs)

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the training must go on, whatever went wrong here
            self.fail(exc, stacklevel=4)
            return None

    def fail(self, exc: BaseException, stacklevel: int = 3) -> None:
        """Stop recording; the first error is one RuntimeWarning (``stacklevel``: the frame it names, as
        ``warnings.warn``'s counted from here)."""
        if self.broken:
            return
        self.broken = True
        message = f"{self.what} stopped recording after an error ({type(exc).__name__}: {exc}); training goes on"
        try:
            warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)
        except Exception:  # noqa: BLE001 - warnings made errors (python -W error): the training still goes on
            print(f"RuntimeWarning: {message}", file=sys.stderr)


class RotatingSample:
    """Which of ``count`` tensors (in model order) a recorded step takes, so that a step's cost is bounded
    whatever the model's size: all of them while ``count <= limit``; else ``limit`` consecutive ones, the next
    ``limit`` at the next recorded step, wrapping around, so that each is recorded once every
    ``ceil(count / limit)`` recorded steps. ``turn``: the number of the recorded step (0, 1, 2, ...)."""

    def __init__(self, count: int, limit: int):
        self.count = count
        self.limit = max(1, limit)

    @property
    def sampled(self) -> bool:
        return self.count > self.limit

    def _start(self, turn: int) -> int:
        return (turn * self.limit) % self.count

    def holds(self, index: int, turn: int) -> bool:
        return not self.sampled or (index - self._start(turn)) % self.count < self.limit

    def indices(self, turn: int) -> range | list[int]:
        if not self.sampled:
            return range(self.count)
        start = self._start(turn)
        return [(start + k) % self.count for k in range(self.limit)]


#: characters kept in a dump file's name (the tensor's full name stays in manifest.json)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def safe_file_name(name: str, limit: int = 150) -> str:
    """``name`` as a file name: no path separators or other characters a file system may refuse, bounded."""
    return (_UNSAFE_NAME.sub("_", name).strip(".") or "tensor")[:limit]


def checked_every(every: Any) -> int:
    """The recording interval as an int; ValueError below 1 (shared by the hook and every callback)."""
    if int(every) < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    return int(every)


def numpy_stats(x: Any, limits: tuple[float, float] | None = None) -> list[float]:
    """The statistics vector of an array (accumulated in float64).

    numpy's own reductions (``einsum``, casting to float64 on the fly), not
    BLAS (``np.dot``): an unpinned BLAS on a busy machine ran them 10-25x
    slower. The NaN/Inf counts are computed only when the sums are not finite
    (finite sums prove there is none).
    """
    import numpy as np

    f = np.asarray(x).reshape(-1)
    if f.size == 0:
        return [0.0, 0.0, math.nan, math.nan, 0.0, 0.0, 0.0, 0.0]
    if f.dtype.kind != "f" or f.dtype.itemsize < 4:
        f = f.astype(np.float32)
    total = float(f.sum(dtype=np.float64))
    sumsq = _dot(f, f)
    lo, hi = float(f.min()), float(f.max())
    nan = inf = 0
    if not all(map(math.isfinite, (total, sumsq, lo, hi))):
        nan = int(np.count_nonzero(np.isnan(f)))
        inf = int(np.count_nonzero(np.isinf(f)))
    sat = 0.0
    if limits is not None:
        margin = SAT_MARGIN * (limits[1] - limits[0])
        sat = float(np.count_nonzero((f <= limits[0] + margin) | (f >= limits[1] - margin)))
    return [total, sumsq, lo, hi, float(f.size - np.count_nonzero(f)), float(nan), float(inf), sat]


def finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def record(step: int, name: str, kind: str, numel: int, st: list[float]) -> dict:
    """One ``tensors.jsonl`` record from a statistics vector (population statistics)."""
    n = float(numel)
    mean = st[SUM] / n
    var = max(st[SUMSQ] / n - mean * mean, 0.0) if math.isfinite(mean) else math.nan
    return {
        "step": step,
        "name": name,
        "kind": kind,
        "numel": int(numel),
        "mean": finite(mean),
        "std": finite(math.sqrt(var)) if math.isfinite(var) else None,
        "min": finite(st[MIN]),
        "max": finite(st[MAX]),
        "norm": finite(math.sqrt(st[SUMSQ])) if st[SUMSQ] >= 0 else None,
        "zero_frac": st[ZEROS] / n,
        "nan": int(st[NAN]),
        "inf": int(st[INF]),
    }


def resid_cos(upd: list[float], gg: float, ww: float) -> float | None:
    """cos(r, w) for r = the part of the update not along the gradient, w = the weights before it.

    ``upd`` = [|d|^2, d.g, d.w, g.w]. About 0.2-0.5 for momentum and Adam, negative
    with weight decay, near +1 when the update adds a multiple of w (decay with the
    wrong sign). None when the update is (numerically) all along the gradient.
    """
    dd, dg, dw, gw = upd
    if not all(map(math.isfinite, (dd, dg, dw, gw, gg, ww))) or dd <= 0 or ww <= 0:
        return None
    k = dg / gg if gg > 0 else 0.0
    rr = dd - k * dg
    if rr <= 1e-4 * dd:
        return None
    return max(-1.0, min(1.0, (dw - k * gw) / math.sqrt(rr * ww)))


def add_update(rec: dict, upd: list[float] | None, grad_st: list[float] | None, weight_st: list[float]) -> None:
    """The update fields of a weight record from ``upd`` = [|d|^2, d.g, d.w, g.w] (d = w after - w before)."""
    if upd is None:
        return
    rec["update_norm"] = finite(math.sqrt(upd[0])) if upd[0] >= 0 else None
    gn = math.sqrt(grad_st[SUMSQ]) if grad_st is not None and grad_st[SUMSQ] >= 0 else 0.0
    denom = math.sqrt(upd[0]) * gn if upd[0] >= 0 else 0.0
    rec["update_grad_cos"] = finite(max(-1.0, min(1.0, upd[1] / denom))) if denom > 0 else None
    rec["update_resid_weight_cos"] = resid_cos(upd, gn * gn, weight_st[SUMSQ])


def numpy_update(before: Any, after: Any, grad: Any | None) -> list[float]:
    """[|d|^2, d.g, d.w, g.w] for d = after - before, w = before, in float64."""
    import numpy as np

    b = np.asarray(before).reshape(-1)
    d = np.subtract(np.asarray(after).reshape(-1), b, dtype=np.float64)
    if grad is None:
        return [_dot(d, d), 0.0, _dot(d, b), 0.0]
    g = np.asarray(grad).reshape(-1)
    return [_dot(d, d), _dot(d, g), _dot(d, b), _dot(g, b)]


def _dot(a: Any, b: Any) -> float:
    """sum(a * b) in float64 without BLAS and without float64 copies of the inputs."""
    import numpy as np

    return float(np.einsum("i,i->", a, b, dtype=np.float64, casting="unsafe"))


def numpy_row_std(x: Any) -> float | None:
    """Mean over inputs of the std across output rows (first axis), as the hook's ``row_std``."""
    import numpy as np

    a = np.asarray(x, dtype=np.float64)
    if a.ndim < 2 or a.shape[0] < 2:
        return None
    return finite(float(a.reshape(a.shape[0], -1).std(axis=0).mean()))


class TensorsFile:
    """``tensors.jsonl`` in ``out_dir``: a fresh run starts a fresh file, a resumed one appends."""

    def __init__(self, out_dir: str | Path, filename: str = "tensors.jsonl", append: bool = False):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.out_dir / filename
        self._fh = self.path.open("a" if append else "w", encoding="utf-8")

    @property
    def closed(self) -> bool:
        return self._fh.closed

    def write(self, records: Iterable[dict]) -> None:
        """Write whole lines and flush, so that a reader (``advisor watch``) never sees half a record."""
        lines = [json.dumps(r) for r in records]
        if lines:
            self._fh.write("\n".join(lines) + "\n")
            self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


class DumpWriter:
    """Per-operator dumps: ``dump/step_NNNNNN/<index>_<name>.npy`` and a ``manifest.json`` per step; in a
    distributed run of more than one rank, ``dump/rank_R/step_NNNNNN/`` (a tree advisor compares rank by rank)."""

    def __init__(self, out_dir: str | Path, rank: int | None = None):
        self.out_dir = Path(out_dir)
        self.root = self.out_dir / "dump" / (f"rank_{rank}" if rank is not None else "")
        self._entries: list[dict] = []
        self._calls: dict[tuple[int, str], int] = {}

    def save(self, step: int, name: str, op_type: str, arrays: list) -> None:
        """Save the outputs of one call of operator ``name`` (numpy arrays)."""
        import numpy as np

        folder = self.root / f"step_{step:06d}"
        folder.mkdir(parents=True, exist_ok=True)
        calls = self._calls.get((step, name), 0)
        self._calls[(step, name)] = calls + 1
        base = name if calls == 0 else f"{name}.call{calls}"
        for i, arr in enumerate(arrays):
            tname = f"{base}.forward.output.{i}"
            fname = f"{len(self._entries):04d}_{safe_file_name(tname)}.npy"
            np.save(folder / fname, np.asarray(arr), allow_pickle=False)
            self._entries.append({"name": tname, "file": fname, "op_type": op_type, "step": step})

    @property
    def pending(self) -> bool:
        return bool(self._entries)

    def write_manifests(self) -> None:
        by_step: dict[int, list[dict]] = {}
        for e in self._entries:
            by_step.setdefault(e["step"], []).append({k: v for k, v in e.items() if k != "step"})
        for step, entries in by_step.items():
            folder = self.root / f"step_{step:06d}"
            (folder / "manifest.json").write_text(json.dumps(entries, indent=1), encoding="utf-8")
        self._entries.clear()
        self._calls.clear()


def distributed_rank() -> int | None:
    """This process's rank when torch.distributed runs more than one, else None."""
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            return int(dist.get_rank())
    except (ImportError, RuntimeError, ValueError):
        return None
    return None


class MetricsFile:
    """``metrics.jsonl`` (run-layout.md): one ``{"step": ..., "loss": ...}`` object per logged step."""

    def __init__(self, out_dir: str | Path, filename: str = "metrics.jsonl", append: bool = False):
        self.path = Path(out_dir) / filename
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("a" if append else "w", encoding="utf-8")

    def write(self, step: int, values: dict) -> None:
        """Numbers only (a framework's logs also hold strings and tensors); NaN and Infinity spelled as
        Python's json writes them (the metrics reader accepts them), so that a diverged loss stays visible."""
        row: dict[str, Any] = {"step": int(step)}
        for k, v in values.items():
            try:
                f = float(v)
            except (TypeError, ValueError):
                continue
            row[str(k)] = f
        self._fh.write(json.dumps(row) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
