"""Hugging Face ``Trainer``: ``AdvisorCallback`` records ``tensors.jsonl`` (and dumps) while it trains.

Two lines::

    from advisor.capture.hf import AdvisorCallback
    trainer = Trainer(model=model, args=args, ..., callbacks=[AdvisorCallback("runs/exp7", every=10)])

It drives the PyTorch hook (``advisor.capture.hook.Capture``) from the
Trainer's events: weights and gradients in ``on_pre_optimizer_step`` (after
gradient clipping, before the update), the update in ``on_optimizer_step``;
activations of the model's leaf modules in training forward passes
(evaluation runs without a graph and is skipped). Steps are optimizer steps
(``state.global_step``); with gradient accumulation an activation record
covers every micro-batch of the step (``calls``). The Trainer's logs
(``loss``, ``grad_norm``, ``learning_rate``, ``eval_loss`` ...) go to
``metrics.jsonl`` beside it. Only the world's process zero writes. Without
``out_dir`` it writes into ``args.output_dir``.

Beside them (``advisor.capture.settings``): ``advisor_hparams.json`` with the optimizer the Trainer built and its
settings, the training arguments the checks read (epochs, per-device batch, accumulation, fp16/bf16, clipping,
schedule, warm-up), the class count of a classification head and the parameter counts; ``data/train.npz`` with
the first training batch the model was called with (``input_ids`` and ``labels``; ``data_sample=False`` turns
it off).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from advisor.capture.hook import Capture
from advisor.capture.settings import loader_settings
from advisor.capture.writer import Guard, MetricsFile, checked_every


class AdvisorCallback(TrainerCallback):
    """Record weight, gradient, update and activation statistics every ``every`` optimizer steps."""

    def __init__(
        self,
        out_dir: str | Path | None = None,
        every: int = 10,
        *,
        activations: bool = True,
        updates: bool = True,
        dump_steps: Iterable[int] = (),
        metrics: bool = True,
        data_sample: bool = True,
    ):
        self.out_dir = out_dir
        self.data_sample = data_sample
        self.every = checked_every(every)
        self.activations = activations
        self.updates = updates
        self.dump_steps = tuple(dump_steps)
        self.metrics = metrics
        self.capture: Capture | None = None
        self._metrics: MetricsFile | None = None
        self._guard = Guard("advisor capture (metrics.jsonl)")

    def on_train_begin(
        self, args: Any, state: Any, control: Any, model: Any = None, optimizer: Any = None, **kwargs: Any
    ) -> None:
        if not state.is_world_process_zero or model is None:
            return
        out = self.out_dir or args.output_dir
        self.capture = Capture(
            model,
            optimizer,
            out,
            self.every,
            activations=self.activations,
            updates=self.updates,
            dump_steps=self.dump_steps,
            start_step=state.global_step,
            hook_optimizer=False,
            data_sample=self.data_sample,
        )
        self.capture.record_settings(**_training_args(args), **loader_settings(kwargs.get("train_dataloader")))
        if self.metrics and not self.capture.stopped:
            self._metrics = self._guard.run(MetricsFile, out, append=bool(state.global_step))

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.capture is not None:
            self.capture.end_sample()  # one epoch's rows: the next epoch repeats them

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.capture is not None:
            self.capture.before_update()

    def on_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.capture is not None:
            self.capture.after_update()

    def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kwargs: Any) -> None:
        if self._metrics is not None and logs:
            self._guard.run(self._metrics.write, state.global_step, logs)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.capture is not None:
            self.capture.close()
            self.capture = None
        if self._metrics is not None:
            self._guard.always(self._metrics.close)
            self._metrics = None


#: TrainingArguments fields -> advisor's hyper-parameter names
_ARGS = {
    "num_train_epochs": "epochs",
    "max_steps": "max_steps",
    "per_device_train_batch_size": "batch_size",
    "gradient_accumulation_steps": "gradient_accumulation_steps",
    "max_grad_norm": "grad_clip_norm",
    "warmup_ratio": "warmup_ratio",
    "warmup_steps": "warmup_steps",
    "fp16": "fp16",
    "bf16": "bf16",
    "label_smoothing_factor": "label_smoothing",
    "world_size": "world_size",
}


def _training_args(args: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, name in _ARGS.items():
        v = getattr(args, field, None)
        if isinstance(v, (bool, int, float)) and not (field == "max_steps" and v is not None and v <= 0):
            out[name] = v
    sched = getattr(args, "lr_scheduler_type", None)
    if sched is not None:
        out["lr_scheduler"] = str(getattr(sched, "value", sched))
    return out
