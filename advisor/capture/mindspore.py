"""MindSpore: ``AdvisorCallback`` records ``tensors.jsonl`` during ``Model.train``.

Two lines::

    from advisor.capture.mindspore import AdvisorCallback
    model.train(epochs, dataset, callbacks=[AdvisorCallback("runs/exp7", every=10)], dataset_sink_mode=False)

What is recorded, every ``every`` steps (counted from the step ``train`` starts at):

- ``weight``: every trainable parameter, and parameters frozen with
  ``requires_grad = False`` (normalisation layers' moving statistics are
  state, not weights, and are left out): statistics before the step's update,
  the update (``update_norm``, ``update_grad_cos``, ``update_resid_weight_cos``), the
  owning cell's class (``module_type``), ``shape`` (MindSpore's order is
  PyTorch's: output first), ``requires_grad``, ``in_optimizer``.
- ``grad``: in PyNative mode (MindSpore's default), the gradients handed to the
  optimizer, after gradient reduction and before the update: the callback puts
  a pass-through cell in front of ``TrainOneStepCell``'s optimizer for the
  training and restores it at the end. In GRAPH_MODE the gradients stay inside
  the compiled graph: only weights and updates are written there.
- ``metrics.jsonl``: the loss of every step (``net_outputs``).
- ``advisor_hparams.json`` (``advisor.capture.settings``): the optimizer's class
  and settings (learning rate, weight decay, momentum), the loss cell's class
  and its ``sparse`` flag, the epochs and steps per epoch, the parameter
  counts. No data sample: a callback does not see the batches, and reading the
  data set would move its iterator.

Needs ``dataset_sink_mode=False`` for per-step records (with sinking, a
"step" is a whole sink). Per-operator dumps: use MindSpore's own dump
(``MINDSPORE_DUMP_CONFIG``), which ``advisor`` reads too. Activations are not recorded.

Cost: on recorded steps one host copy of every parameter and gradient and
numpy reductions in float64; on other steps a counter check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import nn
from mindspore.train import Callback

from advisor.capture.settings import SettingsFile, as_float
from advisor.capture.writer import (
    Guard,
    checked_every,
    MetricsFile,
    TensorsFile,
    add_update,
    numpy_row_std,
    numpy_stats,
    numpy_update,
    record,
)


class _GradTap(nn.Cell):
    """Stands in front of the optimizer: copies the gradients on recorded steps, then applies them."""

    def __init__(self, optimizer: Any, owner: AdvisorCallback):
        super().__init__(auto_prefix=False)
        self.optimizer = optimizer
        self._owner = owner

    def construct(self, grads: Any) -> Any:
        if self._owner.recording:
            self._owner._guard.run(self._copy, grads)
        return self.optimizer(grads)

    def _copy(self, grads: Any) -> None:
        self._owner._grads = [g.asnumpy() for g in grads]


class AdvisorCallback(Callback):
    """Record weight, gradient and update statistics every ``every`` steps of ``Model.train``."""

    def __init__(
        self, out_dir: str | Path, every: int = 10, *, grads: bool = True, updates: bool = True, metrics: bool = True
    ):
        self.out_dir = Path(out_dir)
        self.every = checked_every(every)
        self.grads = grads
        self.updates = updates
        self.metrics = metrics
        self.step = 0
        self._file: TensorsFile | None = None
        self._metrics: MetricsFile | None = None
        self._params: list[tuple[Any, str | None, bool]] = []  # (parameter, owning cell's class, in optimizer)
        self._before: dict[int, np.ndarray] = {}
        self._grads: list[np.ndarray] | None = None
        self._grad_index: dict[int, int] = {}
        self._tapped: Any = None
        self._row_std_done = False
        self._guard = Guard("advisor capture (MindSpore callback)")

    @property
    def recording(self) -> bool:
        return self._file is not None and not self._guard.broken and self.step % self.every == 0

    # -- Model.train events: every one guarded (capture/writer.py Guard) ---------------------------------------
    def on_train_begin(self, run_context: Any) -> None:
        self._guard.run(self._train_begin, run_context)

    def on_train_step_begin(self, run_context: Any) -> None:
        self._guard.run(self._step_begin, run_context)

    def on_train_step_end(self, run_context: Any) -> None:
        self._guard.run(self._step_end, run_context)

    def on_train_end(self, run_context: Any) -> None:
        try:  # even after an error: the optimizer untapped, the files closed
            self._train_end(run_context)
        except Exception as exc:  # noqa: BLE001
            self._guard.fail(exc)

    def _train_begin(self, run_context: Any) -> None:
        cb = run_context.original_args()
        self.step = int(getattr(cb, "initial_step", 0) or 0)
        self._file = TensorsFile(self.out_dir, append=self.step > 0)
        if self.metrics:
            self._metrics = MetricsFile(self.out_dir, append=self.step > 0)
        net = cb.network
        optimizer = getattr(cb, "optimizer", None)
        in_opt = [p for p in optimizer.parameters] if optimizer is not None else []
        self._grad_index = {id(p): i for i, p in enumerate(in_opt)}
        owner: dict[int, str] = {}
        for _, cell in net.cells_and_names():
            for p in cell.get_parameters(expand=False):
                owner.setdefault(id(p), type(cell).__name__)
        params = []
        for p in net.get_parameters():
            ltype = owner.get(id(p))
            if not p.requires_grad and "Norm" in (ltype or ""):
                continue  # moving statistics of normalisation layers
            params.append((p, ltype, id(p) in self._grad_index))
        self._params = params
        try:
            SettingsFile(self.out_dir).update(_settings(cb, optimizer, net))
        except Exception:  # noqa: BLE001 - settings that cannot be read are left out, training goes on
            pass
        train = cb.train_network
        if (
            self.grads
            and ms.get_context("mode") == ms.PYNATIVE_MODE
            and isinstance(getattr(train, "optimizer", None), nn.Optimizer)
        ):
            self._tapped = train.optimizer
            train.optimizer = _GradTap(self._tapped, self)

    def _step_begin(self, run_context: Any) -> None:
        if self.recording:
            self._before = {id(p): p.asnumpy().copy() for p, _, _ in self._params}
            self._grads = None

    def _step_end(self, run_context: Any) -> None:
        cb = run_context.original_args()
        if self._metrics is not None:
            loss = _loss(cb.net_outputs)
            if loss is not None:
                self._metrics.write(self.step, {"loss": loss})
        if self.recording and self._before and self._file is not None:
            self._file.write(self._records())
            self._before, self._grads = {}, None
            self._row_std_done = True
        self.step += 1

    def _train_end(self, run_context: Any) -> None:
        if self._tapped is not None:
            run_context.original_args().train_network.optimizer = self._tapped
            self._tapped = None
        for f in (self._file, self._metrics):
            if f is not None:
                self._guard.always(f.close)  # each closed, whatever the other's close raised
        self._file = self._metrics = None

    # -- records ---------------------------------------------------------------
    def _records(self) -> list[dict]:
        out = []
        for p, ltype, in_opt in self._params:
            before = self._before[id(p)]
            i = self._grad_index.get(id(p))
            grad = self._grads[i] if self._grads is not None and i is not None else None
            w_st = numpy_stats(before)
            rec = record(self.step, p.name, "weight", before.size, w_st)
            rec["shape"] = list(before.shape)
            if ltype:
                rec["module_type"] = ltype
            rec["requires_grad"] = bool(p.requires_grad)
            rec["in_optimizer"] = in_opt
            if not self._row_std_done:
                row = numpy_row_std(before)
                if row is not None:
                    rec["row_std"] = row
            g_st = numpy_stats(grad) if grad is not None else None
            if self.updates and in_opt:
                add_update(rec, numpy_update(before, p.asnumpy(), grad), g_st, w_st)
            out.append(rec)
            if g_st is not None and grad is not None:
                out.append(record(self.step, p.name, "grad", grad.size, g_st))
        return out


def _loss(outputs: Any) -> float | None:
    """The loss from ``net_outputs``: a tensor, or the first of (loss, overflow, loss scale)."""
    if isinstance(outputs, (tuple, list)):
        outputs = outputs[0] if outputs else None
    if outputs is None:
        return None
    try:
        a = outputs.asnumpy() if hasattr(outputs, "asnumpy") else np.asarray(outputs)
        return float(a.reshape(-1)[0]) if a.size else None
    except (TypeError, ValueError):
        return None


def _value(x: Any) -> float | None:
    """A float of a MindSpore Parameter/Tensor holding one value (a learning rate schedule's current value)."""
    if hasattr(x, "asnumpy"):
        a = x.asnumpy()
        return as_float(a.reshape(-1)[0]) if a.size >= 1 else None
    return as_float(x)


def _settings(cb: Any, optimizer: Any, net: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"framework": "mindspore"}
    if optimizer is not None:
        out["optimizer"] = type(optimizer).__name__
        for attr, name in (
            ("learning_rate", "learning_rate"),
            ("weight_decay", "weight_decay"),
            ("moment", "momentum"),
        ):
            v = _value(getattr(optimizer, attr, None))
            if v is not None:
                out[name] = float(f"{v:.7g}")  # float32 parameters, at the precision they were given
    loss = getattr(cb, "loss_fn", None)
    if loss is not None:
        out["loss"] = type(loss).__name__
        if isinstance(getattr(loss, "sparse", None), bool):
            out["loss_sparse"] = loss.sparse
    for attr, name in (("epoch_num", "epochs"), ("batch_num", "steps_per_epoch")):
        v = getattr(cb, attr, None)
        if isinstance(v, int) and v > 0:
            out[name] = v
    params = list(net.get_parameters())
    out["num_parameters"] = int(sum(int(np.prod(p.shape)) for p in params))
    out["trainable_parameters"] = int(sum(int(np.prod(p.shape)) for p in params if p.requires_grad))
    return out
