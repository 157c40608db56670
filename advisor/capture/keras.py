"""Keras 3: ``AdvisorCallback`` records ``tensors.jsonl`` during ``model.fit``.

Two lines::

    from advisor.capture.keras import AdvisorCallback
    model.fit(x, y, epochs=5, callbacks=[AdvisorCallback("runs/exp7", every=10)])

What is recorded, every ``every`` training batches (steps counted from the
optimizer's ``iterations`` when ``fit`` starts):

- ``weight``: every trainable variable, and the variables of layers frozen with
  ``trainable = False`` (``requires_grad: false``); not the non-trainable state
  of trainable layers (BatchNormalization's moving statistics, seeds), which
  PyTorch keeps as buffers. Statistics of the weights before the batch's
  update, the update (``update_norm``, ``update_grad_cos``,
  ``update_resid_weight_cos``), the layer's class (``module_type``) and the
  ``shape`` in PyTorch's order, output axis first (a Dense kernel ``(in, out)`` is
  written ``[out, in]``), so that fan-in and ``row_std`` mean the same as the hook's.
- ``grad``: on the torch backend, the gradient the optimizer applied (Keras
  leaves it on the variable until the next batch). JAX and TensorFlow do not
  expose gradients to a callback: there only weights and updates are written.
- ``metrics.jsonl``: the logs of every epoch (``loss``, ``val_loss``, ...) at
  the step where the epoch ended.

- ``advisor_hparams.json`` (``advisor.capture.settings``): the optimizer's class
  and settings (learning rate, weight decay, betas, epsilon, momentum), the
  loss and its ``from_logits`` / label smoothing, ``fit``'s epochs and the
  parameter counts; ``model.json``: the model and its compile settings as
  ``keras.saving.serialize_keras_object`` writes them (layers, activations,
  loss), unless a file of that name is there already.
- ``data/train.npz``: the first training batch (``x``, ``y``), read by wrapping
  the model's ``train_step`` for that one call on the torch backend (JAX and
  TensorFlow compile it: there no sample is taken); ``data_sample=False`` turns
  it off.

Activations and per-operator dumps are not recorded (a callback does not see
the layers' outputs); use the PyTorch hook on the torch backend's modules for those.

Cost: on recorded batches one host copy of every weight (and gradient)
and numpy reductions in float64; nothing on other batches.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import keras
import numpy as np

from advisor.capture.settings import SampleWriter, SettingsFile, keras_model
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


class AdvisorCallback(keras.callbacks.Callback):
    """Record weight, gradient and update statistics every ``every`` batches of ``fit``."""

    def __init__(
        self,
        out_dir: str | Path,
        every: int = 10,
        *,
        updates: bool = True,
        metrics: bool = True,
        settings: bool = True,
        data_sample: bool = True,
    ):
        super().__init__()
        self.out_dir = Path(out_dir)
        self.settings = settings
        self.data_sample = data_sample
        self._sample: SampleWriter | None = None
        self._restore: Any = None
        self._guard = Guard("advisor capture (Keras callback)")
        self._settings: SettingsFile | None = None
        self.every = checked_every(every)
        self.updates = updates
        self.metrics = metrics
        self.step = 0
        self._file: TensorsFile | None = None
        self._metrics: MetricsFile | None = None
        self._vars: list[tuple[str, Any, str | None, bool]] = []  # (name, variable, layer class, trainable)
        self._before: dict[int, np.ndarray] = {}
        self._row_std_done = False

    # -- fit events: every one guarded, so that no error of advisor's stops fit (capture/writer.py Guard) -------
    def on_train_begin(self, logs: dict | None = None) -> None:
        self._guard.run(self._train_begin)

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self._guard.run(self._batch_begin)

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._guard.run(self._batch_end)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._guard.run(self._epoch_end, epoch, logs)

    def on_train_end(self, logs: dict | None = None) -> None:
        try:  # even after an error: the model's own train_step back, the files closed
            self._train_end()
        except Exception as exc:  # noqa: BLE001
            self._guard.fail(exc)

    def _train_begin(self) -> None:
        opt = getattr(self.model, "optimizer", None)
        self.step = int(_numpy(opt.iterations.value)) if opt is not None else 0
        self._file = TensorsFile(self.out_dir, append=self.step > 0)
        if self.metrics:
            self._metrics = MetricsFile(self.out_dir, append=self.step > 0)
        self._vars = _variables(self.model)
        if self.settings:
            self._record_settings()
        if self.data_sample and self.step == 0 and keras.backend.backend() == "torch":
            self._sample = SampleWriter(self.out_dir)
            self._wrap_train_step()

    def _record_settings(self) -> None:
        try:
            values = keras_model(self.model)
            epochs = (self.params or {}).get("epochs")
            if isinstance(epochs, int):
                values["epochs"] = epochs
        except Exception:  # noqa: BLE001 - settings that cannot be read are left out, training goes on
            return
        self._settings = SettingsFile(self.out_dir)
        self._settings.update(values)
        path = self.out_dir / "model.json"
        if path.exists():
            return
        try:
            text = json.dumps(keras.saving.serialize_keras_object(self.model), default=str)
            path.write_text(text, encoding="utf-8")
        except Exception as exc:  # noqa: BLE001
            warnings.warn(f"advisor capture: cannot write {path} ({exc})", stacklevel=2)

    def _wrap_train_step(self) -> None:
        """Read the first batch ``fit`` gives ``train_step`` (the instance attribute is looked up per call)."""
        model, original = self.model, self.model.train_step

        first = [True]

        def first_step(data: Any) -> Any:
            sample = self._sample
            if sample is None or sample.done:
                model.train_step = original  # the sample is taken: the model's own step again
                return original(data)
            try:
                x, y, _ = keras.utils.unpack_x_y_sample_weight(data)
                sample.offer(x, y)
                steps, rows = (self.params or {}).get("steps"), len(x) if hasattr(x, "__len__") else None
                if first[0] and isinstance(steps, int) and rows and self._settings is not None:  # exact to a batch
                    self._settings.update({"batch_size": rows, "num_train_samples": steps * rows})
                first[0] = False
            except Exception:  # noqa: BLE001 - never break training
                pass
            return original(data)

        model.train_step = first_step
        self._restore = lambda: setattr(model, "train_step", original) if model.train_step is first_step else None

    def _batch_begin(self) -> None:
        if self._file is not None and self.step % self.every == 0:
            self._before = {id(v): _numpy(v.value).copy() for _, v, _, _ in self._vars}  # not a view

    def _batch_end(self) -> None:
        if self._file is not None and self._before:
            self._file.write(self._records())
            self._before = {}
            self._row_std_done = True
        self.step += 1

    def _epoch_end(self, epoch: int, logs: dict | None) -> None:
        if self._sample is not None:
            self._sample.flush()  # one epoch's rows: the next epoch repeats them
        if self._metrics is not None and logs:
            self._metrics.write(self.step, {"epoch": epoch + 1, **logs})

    def _train_end(self) -> None:
        if self._restore is not None:  # the model's own train_step again, however far the sample got
            self._restore()
            self._restore = None
        if self._sample is not None:
            self._sample.flush()
        for f in (self._file, self._metrics):
            if f is not None:
                self._guard.always(f.close)  # each closed, whatever the other's close raised
        self._file = self._metrics = None

    # -- records -------------------------------------------------------------
    def _records(self) -> list[dict]:
        out = []
        for name, v, ltype, trainable in self._vars:
            before = self._before[id(v)]
            grad = _grad(v) if trainable else None
            w_st = numpy_stats(before)
            rec = record(self.step, name, "weight", before.size, w_st)
            torch_order = _torch_order(before, ltype)
            rec["shape"] = list(torch_order.shape)
            if ltype:
                rec["module_type"] = ltype
            rec["requires_grad"] = trainable
            rec["in_optimizer"] = trainable
            if not self._row_std_done:
                row = numpy_row_std(torch_order)
                if row is not None:
                    rec["row_std"] = row
            g_st = numpy_stats(grad) if grad is not None else None
            if self.updates and trainable:
                add_update(rec, numpy_update(before, _numpy(v.value), grad), g_st, w_st)
            out.append(rec)
            if g_st is not None and grad is not None:
                out.append(record(self.step, name, "grad", grad.size, g_st))
        return out


def _variables(model: Any) -> list[tuple[str, Any, str | None, bool]]:
    """(path, variable, owning layer's class, trainable) for the trainable variables and those of frozen layers,
    in the model's layer order (a frozen body before its trained head, as it is in the model)."""
    trainable = {id(v) for v in model.trainable_variables}
    layers = model._flatten_layers(include_self=False) if hasattr(model, "_flatten_layers") else model.layers
    seen: set[int] = set()
    out: list[tuple[str, Any, str | None, bool]] = []
    for layer in layers:
        own = list(getattr(layer, "_trainable_variables", [])) + list(getattr(layer, "_non_trainable_variables", []))
        if not layer.trainable:
            own += [v for v in layer.weights if id(v) not in trainable]
        for v in own:
            if id(v) in seen or (id(v) not in trainable and layer.trainable):
                continue  # non-trainable state of a trainable layer (moving statistics, seeds)
            seen.add(id(v))
            out.append((v.path, v, type(layer).__name__, id(v) in trainable))
    for v in model.trainable_variables:  # variables no layer lists (a model's own)
        if id(v) not in seen:
            seen.add(id(v))
            out.append((v.path, v, None, True))
    return out


def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):  # torch backend: no round trip through keras.ops
        return x.detach().cpu().numpy()
    return np.asarray(keras.ops.convert_to_numpy(x))


def _grad(v: Any) -> np.ndarray | None:
    g = getattr(v.value, "grad", None)  # only the torch backend keeps it
    return None if g is None else _numpy(g)


def _torch_order(a: np.ndarray, layer_type: str | None) -> np.ndarray:
    """Keras kernels keep the output axis last (Dense (in, out), Conv (kh, kw, in, out)); PyTorch first."""
    if a.ndim < 2 or (layer_type and "Embedding" in layer_type):
        return a
    return np.moveaxis(a, -1, 0)
