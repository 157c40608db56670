"""PyTorch Lightning: ``AdvisorCallback`` records ``tensors.jsonl`` (and dumps) during ``Trainer.fit``.

Two lines::

    from advisor.capture.lightning import AdvisorCallback
    trainer = L.Trainer(callbacks=[AdvisorCallback("runs/exp7", every=10)])

It drives the PyTorch hook (``advisor.capture.hook.Capture``) from Lightning's
own hooks: weights and gradients are read in ``on_before_optimizer_step``
(after the closure ran backward and clipping, before the update), the update
after the optimizer's step; activations of the LightningModule's leaf modules
in training forward passes (validation runs without a graph and is skipped).
Steps are optimizer steps (``trainer.global_step``); with gradient
accumulation an activation record covers all micro-batches of the step
(``calls``). Only the first optimizer is recorded. Only global rank 0 writes.
Without ``out_dir`` it writes into ``trainer.log_dir`` (else ``default_root_dir``).

Beside ``tensors.jsonl`` (``advisor.capture.settings``): ``advisor_hparams.json`` with the first optimizer's
class and settings, the loss module the LightningModule holds as an attribute, the parameter counts, and the
Trainer's epochs, batch size, gradient accumulation, precision and clipping; ``data/train.npz`` with the first
training batch (``(x, y)``, a list, or a mapping with ``input_ids``/``labels``...; ``data_sample=False`` turns
it off).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

try:
    from lightning.pytorch.callbacks import Callback
except ImportError:  # the older package name
    from pytorch_lightning.callbacks import Callback  # type: ignore[no-redef,assignment]

from advisor.capture.hook import Capture
from advisor.capture.settings import loader_settings, split_batch
from advisor.capture.writer import checked_every


class AdvisorCallback(Callback):
    """Record weight, gradient, update and activation statistics every ``every`` optimizer steps."""

    def __init__(
        self,
        out_dir: str | Path | None = None,
        every: int = 10,
        *,
        activations: bool = True,
        updates: bool = True,
        dump_steps: Iterable[int] = (),
        data_sample: bool = True,
    ):
        self.out_dir = out_dir
        self.data_sample = data_sample
        self.every = checked_every(every)
        self.activations = activations
        self.updates = updates
        self.dump_steps = tuple(dump_steps)
        self.capture: Capture | None = None
        self._post: Any = None

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        if trainer.global_rank != 0:
            return
        out = self.out_dir or trainer.log_dir or trainer.default_root_dir
        optimizer = trainer.optimizers[0] if trainer.optimizers else None
        self.capture = Capture(
            pl_module,
            optimizer,
            out,
            self.every,
            activations=self.activations,
            updates=self.updates,
            dump_steps=self.dump_steps,
            start_step=trainer.global_step,
            hook_optimizer=False,
            data_sample=self.data_sample,
        )
        self.capture.record_settings(**_trainer_settings(trainer))
        if optimizer is not None:  # after the real step (Lightning's closure runs inside it)
            self._post = optimizer.register_step_post_hook(lambda opt, args, kwargs: self._after())

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        if self.capture is not None:
            self.capture.record_settings(**loader_settings(getattr(trainer, "train_dataloader", None)))

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int) -> None:
        if self.capture is not None:
            self.capture.record_batch(*split_batch(batch))

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if self.capture is not None:
            self.capture.end_sample()  # one epoch's rows: the next epoch repeats them

    def on_before_optimizer_step(self, trainer: Any, pl_module: Any, optimizer: Any) -> None:
        if self.capture is not None and optimizer is trainer.optimizers[0]:
            self.capture.before_update()

    def _after(self) -> None:
        if self.capture is not None:
            self.capture.after_update()

    def _close(self) -> None:
        if self._post is not None:
            self._post.remove()
            self._post = None
        if self.capture is not None:
            self.capture.close()
            self.capture = None

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        self._close()

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        self._close()


def _trainer_settings(trainer: Any) -> dict[str, Any]:
    """The Trainer's own settings that the checks read (values it does not hold are left out)."""
    out: dict[str, Any] = {}
    for attr, name in (
        ("max_epochs", "epochs"),
        ("accumulate_grad_batches", "gradient_accumulation_steps"),
        ("gradient_clip_val", "grad_clip_norm"),
        ("world_size", "world_size"),
    ):
        v = getattr(trainer, attr, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
            out[name] = v
    precision = getattr(trainer, "precision", None)
    if isinstance(precision, (str, int)):
        out["precision"] = str(precision)
    return out
