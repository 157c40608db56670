"""The PyTorch capture hook: statistics of weights, gradients, updates and activations.

What is recorded, every ``every`` optimizer steps (steps counted from ``start_step``):

- ``activation``: the output of every leaf module (``nn.Linear``, ``nn.ReLU``, ...)
  in forward passes that build a graph (``torch.is_grad_enabled()``); evaluation
  passes under ``no_grad``/``inference_mode`` are not recorded. A module called
  several times in one step gives one record over all its calls (``calls``).
- ``weight`` and ``grad``: every parameter, just before ``optimizer.step()``
  (so the gradient is the one the optimizer applies, after clipping). Tied
  parameters appear under each of their names.
- on the weight record: ``module_type`` (class of the owning module), ``requires_grad``, ``in_optimizer`` (the parameter is in
  one of the optimizer's parameter groups), ``shape``, ``row_std`` (first
  recorded step: mean over inputs of the std across output rows), ``update_norm`` = ||w after the step - w before|| and
  ``update_grad_cos`` = cos(w after - w before, gradient): about -1 for SGD,
  negative for every descent optimizer; ``update_resid_weight_cos`` = cos(the part
  of the update not along the gradient, w): near +1 when the update grows the
  weights along themselves (weight decay with the wrong sign).

Cost: statistics are reductions on the tensors' own device, gathered with one
device-to-host transfer per recorded step; the update needs one copy of each
trainable parameter on recorded steps only. Nothing is computed on the other
steps beyond a counter check in each forward hook. The training itself is not
changed: tensors are only read (``detach``), never modified. A recorded step
takes at most ``MAX_PARAMETERS_PER_STEP`` parameters and the outputs of at most
``MAX_ACTIVATIONS_PER_STEP`` leaf modules: a larger model is recorded in a
rotating window (writer.RotatingSample), the next tensors at the next recorded
step, and each of its records says ``sample_of``: how many parameters (or leaf
modules) the window is taken from.

Statistics are population statistics (``std`` with ddof=0) accumulated in
float64 for weights and gradients, float32 for activations (see ``Capture._stats``). ``sat_frac`` is the share of outputs of a saturating activation
(Sigmoid, Tanh, Hardtanh, Hardsigmoid, Softsign) within 1 % of its output range
from either limit. Non-finite statistics are written as ``null``; ``nan`` and
``inf`` count the non-finite elements.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from advisor.capture.settings import (
    SampleWriter,
    SettingsFile,
    write_model_text,
    hf_model,
    split_batch,
    torch_losses,
    torch_optimizer,
    torch_parameters,
)
from advisor.capture.writer import (
    Guard,
    checked_every,
    MAX,
    MIN,
    SAT,
    SAT_MARGIN,
    SATURATING,
    DumpWriter,
    distributed_rank,
    RotatingSample,
    TensorsFile,
    add_update,
    finite,
    record,
)

__all__ = ["SATURATING", "SAT_MARGIN", "Capture", "attach", "capture"]

#: parameters (weight, gradient and update statistics) recorded per recorded step at most; each costs about 20
#: small reductions, so 100,000 parameters at every step cost minutes per step (issue 50)
MAX_PARAMETERS_PER_STEP = 1024
#: leaf modules whose outputs are recorded per recorded step at most
MAX_ACTIVATIONS_PER_STEP = 1024


class Capture:
    """Hooks on a model (and optimizer) writing ``tensors.jsonl`` into ``out_dir``."""

    def __init__(
        self,
        model: Any,
        optimizer: Any = None,
        out_dir: str | Path = ".",
        every: int = 10,
        *,
        activations: bool = True,
        updates: bool = True,
        dump_steps: Iterable[int] = (),
        start_step: int = 0,
        filename: str = "tensors.jsonl",
        hook_optimizer: bool = True,
        settings: bool = True,
        data_sample: bool = True,
        framework: str = "pytorch",
    ):
        import torch  # lazily: the advisor itself does not need torch

        self._torch = torch
        self.model = model
        self.optimizer = optimizer
        self.every = checked_every(every)
        self.step = int(start_step)
        #: no error of advisor's reaches the training: the first is a warning, then the capture records nothing
        self._guard = Guard("advisor capture")
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / filename
        # a fresh run starts a fresh file; a resumed one (start_step > 0) appends
        self._file: TensorsFile | None = None
        try:
            self._file = TensorsFile(out_dir, filename, append=bool(start_step))
        except OSError as exc:  # an unwritable folder, a file where the folder would be, a full disk
            self._guard.fail(exc)
        self._dumps = DumpWriter(self.out_dir, distributed_rank())
        self._updates = bool(updates) and optimizer is not None
        self._dump_steps = {int(s) for s in dump_steps}
        # tied parameters appear under each of their names
        self._params = list(model.named_parameters(remove_duplicate=False))
        self._names: dict[int, list[str]] = {}  # id(param) -> its names
        self._unique: list[Any] = []  # each parameter once, in model order
        for pname, p in self._params:
            if id(p) not in self._names:
                self._names[id(p)] = []
                self._unique.append(p)
            self._names[id(p)].append(pname)
        self._param_sample = RotatingSample(len(self._unique), MAX_PARAMETERS_PER_STEP)
        #: parameter name -> class of the module that owns it (Linear, Embedding, ...)
        self._owner = {
            f"{mname}.{pname}" if mname else pname: type(m).__name__
            for mname, m in model.named_modules(remove_duplicate=False)
            for pname, _ in m.named_parameters(recurse=False, remove_duplicate=False)
        }
        self._acts: dict[str, list] = {}  # name -> [stats tensor, numel, module type, calls]
        self._snap: dict[int, Any] = {}  # id(param) -> copy before the optimizer step
        self._weights: dict[int, tuple] = {}  # id(param) -> (weight stats, grad stats | None, numel)
        self._row_std_done: set[int] = set()  # id(param) of those whose row_std was recorded
        self._handles: list[Any] = []
        self._record_activations = bool(activations)
        self._sample = SampleWriter(self.out_dir, enabled=data_sample and self.step == 0 and self._file is not None)
        self.settings = SettingsFile(self.out_dir) if settings and self._file is not None else None
        leaves = [(name, m) for name, m in model.named_modules() if next(m.children(), None) is None]
        self._act_sample = RotatingSample(len(leaves), MAX_ACTIVATIONS_PER_STEP)
        if self._file is None:
            return  # nothing can be written: no hook is attached, the training runs as without advisor
        if activations or self._dump_steps:
            for index, (name, module) in enumerate(leaves):
                self._handles.append(module.register_forward_hook(self._forward_hook(name or "model", module, index)))
        if optimizer is not None and hook_optimizer:
            self._handles.append(optimizer.register_step_pre_hook(lambda opt, args, kwargs: self.before_update()))
            self._handles.append(optimizer.register_step_post_hook(lambda opt, args, kwargs: self.after_update()))
        #: advisor_hparams.json (optimizer, loss, parameter counts) and data/train.npz (the first batch's inputs,
        #: and its labels where the model is called with them: Hugging Face's ``labels=``): capture/settings.py
        if self.settings is not None:
            self.record_settings(framework=framework)
            write_model_text(self.out_dir, model)
        if not self._sample.done:
            self._sample_handle = model.register_forward_pre_hook(
                lambda mod, args, kwargs: self._guard.run(self._first_batch, mod, args, kwargs), with_kwargs=True
            )

    # -- public ----------------------------------------------------------
    def record_settings(self, **values: Any) -> None:
        """Add settings to ``advisor_hparams.json`` (the optimizer's and the loss's are read at the start)."""
        if self.settings is None:
            return
        found: dict[str, Any] = {}
        for read in (
            lambda: torch_optimizer(self.optimizer) if self.optimizer is not None else {},
            lambda: torch_losses(self.model),
            lambda: torch_parameters(self.model),
            lambda: hf_model(self.model),
        ):
            try:
                found.update(read())
            except Exception:  # noqa: BLE001 - a setting that cannot be read is left out, training goes on
                pass
        self.settings.update(found | values)

    def end_sample(self) -> None:
        """Write the data sample now (the callbacks call it at the end of the first epoch: later batches repeat
        the same rows)."""
        self._sample.flush()
        self._drop_sample_hook()

    def record_batch(self, x: Any, y: Any = None, name: str = "x") -> None:
        """Offer a training batch for ``data/train.npz`` (the first ones offered are written); ``name``: what the
        inputs are saved as (``input_ids`` for token ids)."""
        self._sample.offer(x, y, name)

    @property
    def recording(self) -> bool:
        """Whether the current step is one whose statistics are written."""
        return self.step % self.every == 0

    @property
    def _turn(self) -> int:
        """The number of the current recorded step: which window of a sampled model it records."""
        return self.step // self.every

    def before_update(self) -> None:
        """With ``hook_optimizer=False``: call when the gradients are ready, before the weights change."""
        self._guard.run(self._before_update)

    def after_update(self) -> None:
        """With ``hook_optimizer=False``: call once the step's update is applied (counts the step)."""
        if self._guard.run(self._after_update) is None and self._guard.broken:
            self.step += 1  # recording stopped; the steps are still counted

    def step_done(self) -> None:
        """Without an optimizer: call once per step after ``backward()`` (and the update)."""
        if self.optimizer is not None:
            raise RuntimeError("the optimizer's step hooks count the steps; do not call step_done() as well")
        self.before_update()
        self.after_update()

    @property
    def stopped(self) -> bool:
        """Whether an error stopped the recording (it was reported once as a warning)."""
        return self._guard.broken

    def close(self) -> None:
        """Remove the hooks, write what is pending and close the file."""
        self._drop_sample_hook()
        self._sample.flush()
        for h in self._handles:
            h.remove()
        self._handles.clear()
        if self._file is not None and not self._file.closed:
            if self._acts:
                self._guard.run(self._flush)
            elif self._dumps.pending:
                self._guard.run(self._dumps.write_manifests)
            self._guard.always(self._file.close)

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _first_batch(self, module: Any, args: tuple, kwargs: dict) -> None:
        if not self._torch.is_grad_enabled():
            return  # an evaluation pass: not what trains the model
        x, y, name = split_batch(kwargs) if kwargs else (None, None, "x")
        if x is None and args:
            x, y, name = split_batch(args[0]) if isinstance(args[0], (dict, tuple, list)) else (args[0], None, "x")
        if x is not None:
            self._sample.offer(x, y, name)
        if self._sample.done:
            self._drop_sample_hook()

    def _drop_sample_hook(self) -> None:
        handle = getattr(self, "_sample_handle", None)
        if handle is not None:
            handle.remove()
            self._sample_handle = None

    # -- statistics --------------------------------------------------------
    def _stats(self, x: Any, limits: tuple[float, float] | None = None, exact: bool = True) -> Any:
        """The statistics vector of a floating tensor, on its device (no sync on accelerators).

        ``exact``: accumulate in float64 (weights and gradients); activations,
        the bulk of the work, accumulate in float32 (PyTorch's pairwise/tree
        sums, relative error about 1e-7). On the CPU the NaN/Inf counts are
        computed only when the sums or the min/max are not finite (a CPU has
        nothing to synchronise, and finite sums prove there is no NaN/Inf);
        on an accelerator they are always computed, to avoid a sync.
        """
        torch = self._torch
        f = x.detach().reshape(-1)
        f64 = torch.float64
        acc = f64 if exact else (torch.float32 if f.dtype in (torch.float16, torch.bfloat16) else f.dtype)
        lo, hi = torch.aminmax(f)
        total = f.sum(dtype=acc)
        sumsq = torch.linalg.vector_norm(f, dtype=acc).square()
        zeros = f.numel() - torch.count_nonzero(f)  # NaN counts as non-zero, as it should
        if limits is None:
            sat = torch.zeros((), dtype=f64, device=f.device)
        else:
            margin = SAT_MARGIN * (limits[1] - limits[0])
            sat = torch.count_nonzero((f <= limits[0] + margin) | (f >= limits[1] - margin))
        if f.device.type == "cpu" and all(map(math.isfinite, (float(total), float(sumsq), float(lo), float(hi)))):
            nan = inf = torch.zeros((), dtype=f64)
        else:
            nan, inf = torch.count_nonzero(torch.isnan(f)), torch.count_nonzero(torch.isinf(f))
        return torch.stack(
            [total.to(f64), sumsq.to(f64), lo.to(f64), hi.to(f64), zeros.to(f64), nan.to(f64), inf.to(f64), sat.to(f64)]
        )

    def _forward_hook(self, name: str, module: Any, index: int):
        limits = SATURATING.get(type(module).__name__)
        mtype = type(module).__name__

        def hook(mod: Any, inputs: Any, output: Any) -> None:
            if not self._guard.broken and self._torch.is_grad_enabled():  # not in an evaluation pass
                if self._dumping or self._records_activation(index):
                    self._guard.run(record, output)

        def record(output: Any) -> None:
            parts, n_items = self._float_tensors(output)
            if not parts:
                return
            tensors = [t for _, t in parts]
            if self._dumping:
                self._save_dump(name, mtype, tensors)
            if not self._records_activation(index):
                return
            for i, t in parts:  # numbered by their place in the output, whatever was skipped
                key = name if n_items == 1 else f"{name}.{i}"
                st = self._stats(t, limits, exact=False)
                acc = self._acts.get(key)
                if acc is None:
                    self._acts[key] = [st, t.numel(), mtype, 1]
                else:
                    merged = acc[0] + st
                    merged[MIN] = self._torch.minimum(acc[0][MIN], st[MIN])
                    merged[MAX] = self._torch.maximum(acc[0][MAX], st[MAX])
                    acc[0], acc[1], acc[3] = merged, acc[1] + t.numel(), acc[3] + 1

        return hook

    @property
    def _dumping(self) -> bool:
        return bool(self._dump_steps) and self.step in self._dump_steps

    def _records_activation(self, index: int) -> bool:
        """Whether this step records the output of leaf module number ``index``."""
        return self._record_activations and self.recording and self._act_sample.holds(index, self._turn)

    def _float_tensors(self, output: Any) -> tuple[list[tuple[int | str, Any]], int]:
        """(place, tensor) of the dense floating tensors of a module's output, and how many parts it has: a tensor,
        or those of a tuple, list or mapping one level down (a sparse, quantised or nested part is skipped)."""
        torch = self._torch
        if isinstance(output, dict):
            items = [(str(k), v) for k, v in output.items()]  # a mapping's parts by their keys
        elif isinstance(output, (tuple, list)):
            items = list(enumerate(output))
        else:
            items = [(0, output)]
        dense = [
            (i, t)
            for i, t in items
            if isinstance(t, torch.Tensor) and t.layout == torch.strided and t.is_floating_point() and t.numel() > 0
        ]
        return dense, len(items)

    def _before_update(self) -> None:
        if not self.recording:
            return
        torch = self._torch
        with torch.no_grad():
            for p in self._sampled_params():
                if p.numel() == 0:
                    continue
                g = p.grad
                w_st = self._stats(p)
                g_st = self._stats(g) if g is not None else None
                row = None
                if id(p) not in self._row_std_done and p.dim() >= 2 and p.shape[0] >= 2:
                    row = p.detach().reshape(p.shape[0], -1).to(torch.float64).std(dim=0, correction=0).mean()
                self._weights[id(p)] = (w_st, g_st, row)
                if self._updates and p.requires_grad:
                    self._snap[id(p)] = p.detach().clone()

    def _sampled_params(self) -> list[Any]:
        """The parameters this recorded step takes (all of them, or a window of a large model's)."""
        return [self._unique[i] for i in self._param_sample.indices(self._turn)]

    def _after_update(self) -> None:
        if self.recording:
            torch = self._torch
            updates: dict[int, Any] = {}
            with torch.no_grad():
                for p in self._sampled_params():
                    old = self._snap.get(id(p))
                    if old is None:
                        continue
                    d = (p.detach() - old).reshape(-1)
                    w = old.reshape(-1)
                    f64 = torch.float64
                    zero = torch.zeros((), dtype=f64, device=d.device)
                    g = p.grad.detach().reshape(-1).to(d.dtype) if p.grad is not None else None
                    updates[id(p)] = torch.stack(
                        [
                            torch.linalg.vector_norm(d, dtype=f64).square(),
                            torch.dot(d, g).to(f64) if g is not None else zero,
                            torch.dot(d, w).to(f64),
                            torch.dot(g, w).to(f64) if g is not None else zero,
                        ]
                    )
            self._flush(updates)
            self._snap.clear()
        elif self._dumps.pending:
            self._dumps.write_manifests()
        self.step += 1

    # -- output ------------------------------------------------------------
    def _flush(self, updates: dict[int, Any] | None = None) -> None:
        """Move every pending statistic to the host at once and write the records."""
        pending: dict[tuple, Any] = {("a", key): acc[0] for key, acc in self._acts.items()}
        for pid, (w_st, g_st, row) in self._weights.items():
            pending.update({("w", pid): w_st, ("g", pid): g_st, ("r", pid): row})
        pending.update({("u", pid): upd for pid, upd in (updates or {}).items()})
        values = _host_values(self._torch, pending)
        records = self._activation_records(values) + self._parameter_records(values)
        if self._file is not None:
            self._file.write(records)
        if self._dumps.pending:
            self._dumps.write_manifests()
        self._acts.clear()
        self._weights.clear()

    def _activation_records(self, values: dict[tuple, list[float]]) -> list[dict]:
        records = []
        for key, (_, numel, mtype, calls) in self._acts.items():
            act = values[("a", key)]
            rec = record(self.step, key, "activation", numel, act)
            rec["module_type"] = mtype
            if calls > 1:
                rec["calls"] = calls
            if mtype in SATURATING:
                rec["sat_frac"] = act[SAT] / numel
            if self._act_sample.sampled:
                rec["sample_of"] = self._act_sample.count
            records.append(rec)
        return records

    def _parameter_records(self, values: dict[tuple, list[float]]) -> list[dict]:
        """The weight (and gradient) records of the parameters this step took, each under every name it has."""
        in_optimizer = (
            {id(p) for group in self.optimizer.param_groups for p in group["params"]}
            if self.optimizer is not None
            else None
        )
        records = []
        for p in self._sampled_params():
            pid = id(p)
            if pid not in self._weights:
                continue
            w_st, g_st, row = values[("w", pid)], values.get(("g", pid)), values.get(("r", pid))
            for name in self._names[pid]:
                w = record(self.step, name, "weight", p.numel(), w_st)
                w["shape"] = list(p.shape)
                if name in self._owner:
                    w["module_type"] = self._owner[name]
                w["requires_grad"] = bool(p.requires_grad)
                if in_optimizer is not None:
                    w["in_optimizer"] = pid in in_optimizer
                if row is not None:
                    w["row_std"] = finite(row[0])
                add_update(w, values.get(("u", pid)), g_st, w_st)
                step_records = [w] if g_st is None else [w, record(self.step, name, "grad", p.numel(), g_st)]
                if self._param_sample.sampled:
                    for rec in step_records:
                        rec["sample_of"] = self._param_sample.count
                records.extend(step_records)
            if row is not None:
                self._row_std_done.add(pid)
        return records

    def _save_dump(self, name: str, mtype: str, tensors: list) -> None:
        arrays = []
        for t in tensors:
            arr = t.detach().to("cpu")
            if arr.dtype in (self._torch.bfloat16,):
                arr = arr.float()
            arrays.append(arr.numpy())
        self._dumps.save(self.step, name, mtype, arrays)


def _host_values(torch: Any, pending: dict[tuple, Any]) -> dict[tuple, list[float]]:
    """The statistics tensors of ``pending`` (None: not computed, left out) as lists of floats, by key: one
    device-to-host transfer per device for all of them."""
    keys = [k for k, t in pending.items() if t is not None]
    tensors = [pending[k].reshape(-1) for k in keys]
    flat = _to_host(torch, tensors)
    out, at = {}, 0
    for key, t in zip(keys, tensors):
        n = t.numel()
        out[key] = flat[at : at + n]
        at += n
    return out


def _to_host(torch: Any, tensors: list) -> list[float]:
    """Concatenate small device tensors and copy them to the host: one transfer per device."""
    if not tensors:
        return []
    devices = {t.device for t in tensors}
    if len(devices) == 1:
        return torch.cat(tensors).tolist()
    parts = {d: torch.cat([t for t in tensors if t.device == d]).tolist() for d in devices}
    pos = {d: 0 for d in devices}
    out: list[float] = []
    for t in tensors:
        n = t.numel()
        out.extend(parts[t.device][pos[t.device] : pos[t.device] + n])
        pos[t.device] += n
    return out


def attach(model: Any, optimizer: Any = None, out_dir: str | Path = ".", every: int = 10, **kwargs: Any) -> Capture:
    """Start capturing; returns the ``Capture`` (call ``close()`` at the end of training)."""
    return Capture(model, optimizer, out_dir, every, **kwargs)


@contextmanager
def capture(
    model: Any, optimizer: Any = None, out_dir: str | Path = ".", every: int = 10, **kwargs: Any
) -> Iterator[Capture]:
    """``with capture(model, optimizer, "run/"):`` captures inside the block."""
    cap = Capture(model, optimizer, out_dir, every, **kwargs)
    try:
        yield cap
    finally:
        cap.close()
