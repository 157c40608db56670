"""What a capture records besides tensor statistics: the settings the framework holds, and a data sample.

Every callback and the PyTorch hook write, into their output folder:

- ``advisor_hparams.json`` (``SETTINGS_FILE``): the optimizer and its settings as the framework holds them
  (class, learning rate, weight decay, momentum, betas, epsilon), the loss and its settings (class,
  ``from_logits``, label smoothing, reduction), the class count where the framework knows it, the framework,
  and the trainable and total parameter counts; keys in advisor's hyper-parameter vocabulary, so the
  diagnosis reads them as it reads a ``hparams.json`` (and before it: what the framework held is what ran).
- ``model.txt`` (PyTorch hook and the callbacks that drive it): ``print(model)``, the model's description.
- ``data/train.npz`` (``SAMPLE_FILE``): the first training batches the model saw, as arrays ``x`` and (where
  the framework shows them to a callback) ``y``, at most ``MAX_SAMPLE_ROWS`` rows from ``MAX_SAMPLE_BATCHES``
  batches and ``MAX_SAMPLE_BYTES`` bytes, from the first epoch only where the framework says where an epoch
  ends (the callbacks; the bare PyTorch hook does not know, and a data set smaller than the sample repeats in
  it); ``data_sample=False`` on the callback or hook turns it off. An existing file is never replaced.

Nothing here may break training: a setting that cannot be read is left out, and an error writing a file is
reported once as a warning, after which the capture goes on without it.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from advisor.atomic import write_atomic

SETTINGS_FILE = "advisor_hparams.json"
SAMPLE_FILE = "data/train.npz"
MAX_SAMPLE_ROWS = 256
MAX_SAMPLE_BYTES = 8_000_000
MAX_SAMPLE_BATCHES = 16


def as_float(x: Any) -> float | None:
    """A plain float from a float, a 0-d tensor/array or a Keras variable; None otherwise."""
    try:
        if hasattr(x, "detach"):
            x = x.detach().cpu()
        v = float(x)
    except (TypeError, ValueError, RuntimeError):
        return None
    return v if math.isfinite(v) else None


def _f32(x: Any) -> float | None:
    """A float32 setting (a Keras variable) at the precision it was given: 0.0010000000474974513 -> 0.001."""
    v = as_float(x)
    return None if v is None else float(f"{v:.7g}")


def torch_optimizer(optimizer: Any) -> dict[str, Any]:
    """A ``torch.optim`` optimizer's class and its first parameter group's settings (the base rate a scheduler
    started from, ``initial_lr``, where one is attached; else the group's rate now)."""
    inner = optimizer
    for attr in ("_optimizer", "optimizer"):  # Lightning's LightningOptimizer, accelerate's AcceleratedOptimizer
        wrapped = getattr(inner, attr, None)
        if wrapped is not None and hasattr(wrapped, "param_groups"):
            inner = wrapped
    groups = getattr(inner, "param_groups", None)
    if not groups:
        return {}
    g = groups[0]
    out: dict[str, Any] = {"optimizer": type(inner).__name__}
    lr = as_float(g.get("initial_lr", g.get("lr")))
    if lr is not None:
        out["learning_rate"] = lr
    for key, name in (("weight_decay", "weight_decay"), ("momentum", "momentum"), ("eps", "adam_epsilon")):
        v = as_float(g.get(key))
        if v is not None:
            out[name] = v
    if isinstance(g.get("nesterov"), bool):
        out["nesterov"] = g["nesterov"]
    betas = g.get("betas")
    if isinstance(betas, (tuple, list)) and len(betas) == 2:
        b1, b2 = as_float(betas[0]), as_float(betas[1])
        if b1 is not None and b2 is not None:
            out["adam_beta1"], out["adam_beta2"] = b1, b2
    if len(groups) > 1:
        out["param_groups"] = len(groups)
    return out


def torch_losses(model: Any) -> dict[str, Any]:
    """The loss module a model holds as an attribute (``self.loss_fn = nn.CrossEntropyLoss()``): its class and
    settings; {} when it holds none or several of different classes."""
    try:
        from torch.nn.modules.loss import _Loss
    except ImportError:
        return {}
    found = [m for _, m in model.named_modules() if isinstance(m, _Loss)]
    if not found or len({type(m) for m in found}) > 1:
        return {}
    loss = found[0]
    out: dict[str, Any] = {"loss": type(loss).__name__}
    smoothing = as_float(getattr(loss, "label_smoothing", None))
    if smoothing is not None:
        out["label_smoothing"] = smoothing
    if isinstance(getattr(loss, "reduction", None), str):
        out["loss_reduction"] = loss.reduction
    return out


def torch_parameters(model: Any) -> dict[str, Any]:
    """Trainable and total parameter counts (each tensor once)."""
    seen: set[int] = set()
    total = trainable = 0
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        total += p.numel()
        trainable += p.numel() if p.requires_grad else 0
    return {"num_parameters": total, "trainable_parameters": trainable}


def hf_model(model: Any) -> dict[str, Any]:
    """What a Hugging Face model's config says about the task: the class count of a classification head."""
    cfg = getattr(model, "config", None)
    out: dict[str, Any] = {}
    arch = type(model).__name__
    n = getattr(cfg, "num_labels", None)
    if isinstance(n, int) and n > 0 and arch.endswith(("ForSequenceClassification", "ForTokenClassification")):
        out["num_classes"] = n
    problem = getattr(cfg, "problem_type", None)
    if isinstance(problem, str):
        out["problem_type"] = problem
    # from_pretrained sets name_or_path to the checkpoint; a model built from a config has none: random weights
    name = getattr(model, "name_or_path", getattr(cfg, "_name_or_path", None))
    if isinstance(name, str) and cfg is not None:
        out["pretrained"] = bool(name.strip())
        if name.strip():
            out["model_name_or_path"] = name
    return out


def keras_model(model: Any) -> dict[str, Any]:
    """A compiled Keras model's optimizer and loss settings, and its parameter counts."""
    out: dict[str, Any] = {"framework": "keras"}
    opt = getattr(model, "optimizer", None)
    if opt is not None:
        out["optimizer"] = type(opt).__name__
        rate = getattr(opt, "_learning_rate", None)
        lr = _f32(getattr(opt, "learning_rate", None))
        if lr is None and rate is not None and hasattr(rate, "get_config"):  # a schedule: its starting rate
            cfg = rate.get_config()
            lr = _f32(cfg.get("initial_learning_rate", cfg.get("learning_rate")))
        if lr is not None:
            out["learning_rate"] = lr
        for attr, name in (
            ("weight_decay", "weight_decay"),
            ("momentum", "momentum"),
            ("beta_1", "adam_beta1"),
            ("beta_2", "adam_beta2"),
            ("epsilon", "adam_epsilon"),
        ):
            v = getattr(opt, attr, None)
            num = 0.0 if attr == "weight_decay" and v is None else _f32(v)
            if num is not None:
                out[name] = num
        if isinstance(getattr(opt, "nesterov", None), bool):
            out["nesterov"] = opt.nesterov
    loss = getattr(model, "loss", None)
    if isinstance(loss, str):
        out["loss"] = loss
    elif loss is not None and hasattr(loss, "get_config"):
        out["loss"] = type(loss).__name__
        cfg = loss.get_config()
        if isinstance(cfg.get("from_logits"), bool):
            out["from_logits"] = cfg["from_logits"]
        smoothing = as_float(cfg.get("label_smoothing"))
        if smoothing is not None:
            out["label_smoothing"] = smoothing
        if isinstance(cfg.get("reduction"), str):
            out["loss_reduction"] = cfg["reduction"]
    outputs = getattr(model, "outputs", None)
    shape = getattr(outputs[0], "shape", None) if outputs else None
    width = shape[-1] if shape else None
    if isinstance(width, int) and width > 1 and "categorical" in str(out.get("loss", "")).lower():
        out["num_classes"] = width  # a categorical loss over the output's units
    try:
        out["num_parameters"] = int(model.count_params())
        out["trainable_parameters"] = int(sum(int(math.prod(v.shape)) for v in model.trainable_variables))
    except (ValueError, AttributeError, TypeError):  # a model not built yet
        pass
    return out


def loader_settings(loader: Any) -> dict[str, Any]:
    """A torch DataLoader's batch size and the length of its data set (the whole training set, not the sample)."""
    out: dict[str, Any] = {}
    size = getattr(loader, "batch_size", None)
    if isinstance(size, int) and size > 0:
        out["batch_size"] = size
    try:
        n = len(loader.dataset)  # type: ignore[union-attr]
    except (TypeError, AttributeError, NotImplementedError):  # an iterable data set has no length
        n = None
    if isinstance(n, int) and n > 0:
        out["num_train_samples"] = n
    return out


class SettingsFile:
    """``advisor_hparams.json`` of one capture: updated as settings become known, written whole each time
    (to a temporary file, then renamed)."""

    def __init__(self, out_dir: str | Path):
        self.path = Path(out_dir) / SETTINGS_FILE
        self.values: dict[str, Any] = {}
        self.failed = False

    def update(self, values: dict[str, Any]) -> None:
        new = {k: v for k, v in values.items() if v is not None and self.values.get(k) != v}
        if not new or self.failed:
            return
        self.values.update(new)
        try:
            write_atomic(self.path, (json.dumps(self.values, indent=2, sort_keys=True) + "\n").encode())
        except (OSError, TypeError, ValueError) as exc:
            self.failed = True
            warnings.warn(f"advisor capture: cannot write {self.path} ({exc}); settings are not recorded", stacklevel=2)


#: ``model.txt`` larger than this is not written (a print of a large model is still far smaller)
MAX_MODEL_TEXT = 2_000_000


def write_model_text(out_dir: str | Path, model: Any) -> None:
    """``model.txt``: ``print(model)`` of a PyTorch module (its layers, their sizes and activations), which the
    diagnosis reads as the model's description; not written over a file already there."""
    path = Path(out_dir) / "model.txt"
    try:
        if path.exists():
            return
        text = str(model)
        if len(text) <= MAX_MODEL_TEXT:
            write_atomic(path, (text + "\n").encode("utf-8"))
    except Exception as exc:  # noqa: BLE001 - a model whose repr fails must not stop training
        warnings.warn(f"advisor capture: cannot write {path} ({exc})", stacklevel=2)


def as_numpy(x: Any) -> Any:
    """A numpy array of a tensor / array / Keras tensor; None for anything else (text, nested structures)."""
    try:
        if hasattr(x, "detach"):
            x = x.detach().cpu()
            if str(x.dtype) in ("torch.bfloat16",):
                x = x.float()
            x = x.numpy()
        elif hasattr(x, "numpy") and not isinstance(x, np.ndarray):
            x = x.numpy()
        a = np.asarray(x)
    except (TypeError, ValueError, RuntimeError, AttributeError):
        return None
    return a if a.dtype.kind in "biuf" and a.ndim >= 1 else None


#: mapping keys of a batch's inputs, in the order looked for; token ids are saved under their own name, so that
#: the data checks do not measure distances between vocabulary indices as if they were features
_INPUT_KEYS = ("input_ids", "pixel_values", "input_values", "x", "inputs", "input")
_LABEL_KEYS = ("labels", "label", "y", "targets", "target")


def split_batch(batch: Any) -> tuple[Any, Any, str]:
    """(inputs, labels, the name to save the inputs under) of a batch as data loaders yield it: ``(x, y)``,
    ``[x, y, ...]``, or a mapping with ``input_ids``/``pixel_values``/``x``/``inputs`` and ``labels``/``y``;
    (x, None, "x") for a lone tensor."""
    if isinstance(batch, dict):
        key = next((k for k in _INPUT_KEYS if k in batch), None)
        y = next((batch[k] for k in _LABEL_KEYS if k in batch), None)
        return (batch[key] if key else None), y, ("input_ids" if key == "input_ids" else "x")
    if isinstance(batch, (tuple, list)):
        if len(batch) >= 2:
            return batch[0], batch[1], "x"
        return (batch[0], None, "x") if batch else (None, None, "x")
    return batch, None, "x"


class SampleWriter:
    """Writes ``data/train.npz`` from the first training batches offered: up to ``MAX_SAMPLE_ROWS`` rows from at
    most ``MAX_SAMPLE_BATCHES`` batches (one batch of 32 says little about class balance), written when full or
    at ``flush``; never replaces a file already there."""

    def __init__(self, out_dir: str | Path, enabled: bool = True):
        self.path = Path(out_dir) / SAMPLE_FILE
        self.done = not enabled
        self._x: list[Any] = []
        self._y: list[Any] | None = []
        self._rows = 0
        self._offers = 0
        self._name: str | None = None

    def offer(self, x: Any, y: Any = None, name: str = "x") -> None:
        if self.done:
            return
        self._name = self._name or name  # the first batch's naming holds for the sample
        try:
            self._add(x, y)
        except Exception as exc:  # noqa: BLE001 - never break the user's training
            self._give_up(exc)
            return
        if self.done:
            return
        if self._rows >= MAX_SAMPLE_ROWS or self._offers >= MAX_SAMPLE_BATCHES:
            self.flush()

    def flush(self) -> None:
        """Write what was gathered (at the end of training, if the sample is not full yet)."""
        if self.done:
            return
        self.done = True
        try:
            self._write()
        except Exception as exc:  # noqa: BLE001
            self._give_up(exc)

    def _give_up(self, exc: Exception) -> None:
        self.done = True
        self._x, self._y = [], None
        warnings.warn(f"advisor capture: no data sample written to {self.path} ({exc})", stacklevel=3)

    def _add(self, x: Any, y: Any) -> None:
        self._offers += 1
        xa = as_numpy(x)
        if xa is None or (self._x and xa.shape[1:] != self._x[0].shape[1:]):
            return  # not an array batch, or another shape (variable-length sequences): the rows so far stand
        ya = as_numpy(y) if y is not None else None
        per_row = max(1, xa[:1].nbytes)
        room = min(MAX_SAMPLE_ROWS - self._rows, (MAX_SAMPLE_BYTES - self._rows * per_row) // per_row)
        if room <= 0:
            return
        self._x.append(np.array(xa[:room]))  # a copy: the batch's memory may be reused
        if (
            self._y is not None
            and ya is not None
            and len(ya) == len(xa)
            and (not self._y or ya.shape[1:] == self._y[0].shape[1:])
        ):
            self._y.append(np.array(ya[:room]))
        else:
            self._y = None  # labels for some batches only: none are written
        self._rows += len(self._x[-1])

    def _write(self) -> None:
        import io

        if not self._x or self.path.exists():
            return
        arrays: dict[str, Any] = {self._name or "x": np.concatenate(self._x)}
        if self._y:
            arrays["y"] = np.concatenate(self._y)
            # rows per batch, in order: the class mix of each batch tells whether the loader shuffles
            arrays["batch_rows"] = np.array([len(a) for a in self._x], dtype=np.int64)
        self._x, self._y = [], None
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        write_atomic(self.path, buf.getvalue())
