"""How to collect what a skipped check needs, in the words of the tool that made the run.

advisor/stages.py words each hint for a plain PyTorch loop (the ``attach`` hook). A run made with the Hugging Face
Trainer, Lightning, Keras or MindSpore has a callback of advisor's that records the same thing with one argument
added where the user already configures the trainer (docs/capture-*.md); a hint that tells them to add a PyTorch
hook to code they did not write is no hint. ``hint(stage, tool)`` gives that wording, or None for the default.
"""

from __future__ import annotations

#: tool -> (module of advisor's callback, the line it goes on, whether it can dump operator outputs)
_CALLBACKS: dict[str, tuple[str, str, bool]] = {
    "transformers": ("advisor.capture.hf", "Trainer(..., callbacks=[AdvisorCallback('run/', every=10{dump})])", True),
    "peft": ("advisor.capture.hf", "Trainer(..., callbacks=[AdvisorCallback('run/', every=10{dump})])", True),
    "lightning": (
        "advisor.capture.lightning",
        "L.Trainer(..., callbacks=[AdvisorCallback('run/', every=10{dump})])",
        True,
    ),
    "keras": ("advisor.capture.keras", "model.fit(..., callbacks=[AdvisorCallback('run/', every=10)])", False),
    "mindspore": (
        "advisor.capture.mindspore",
        "model.train(epochs, dataset, callbacks=[AdvisorCallback('run/', every=10)], dataset_sink_mode=False)",
        False,
    ),
}

_NAMES = {
    "transformers": "the Hugging Face Trainer",
    "peft": "the Hugging Face Trainer",
    "lightning": "Lightning",
    "keras": "Keras",
    "mindspore": "MindSpore",
}

_RECORDS = {
    "model_structure": "record weight/gradient statistics",
    "training_dynamics": "write tensors.jsonl (weights, gradients, updates)",
}
_DUMPS = ("network_wide_comparison", "random_errors")
#: what the callbacks write for these stages besides tensors.jsonl (advisor/capture/settings.py)
_WRITES = {
    "hyperparameters": "advisor_hparams.json (the optimizer, the loss and their settings as the framework holds them)",
    "input_data": "data/train.npz (the first epoch's training batches, inputs and labels)",
}


def _line(tool: str, dump: bool) -> str:
    module, where, _ = _CALLBACKS[tool]
    return f"`from {module} import AdvisorCallback` and `{where.format(dump=', dump_steps=[0]' if dump else '')}`"


def hint(stage: str, tool: str | None) -> str | None:
    """The hint for ``stage`` in ``tool``'s words; None where the default (PyTorch) wording stands."""
    if tool not in _CALLBACKS:
        return None
    name = _NAMES[tool]
    if stage in _RECORDS:
        return f"{_RECORDS[stage]} with advisor's callback for {name}, two lines in your training script: {_line(tool, False)}"
    if stage in _WRITES:
        if stage == "input_data" and tool == "mindspore":  # a MindSpore callback does not see the batches
            return "save a sample of the preprocessed batches: `numpy.savez('run/data/train.npz', x=..., y=...)`"
        return f"advisor's callback for {name} writes {_WRITES[stage]}, two lines in your training script: {_line(tool, False)}"
    if stage in _DUMPS:
        if tool == "mindspore":
            return (
                "dump per-operator outputs with msprobe (its dump.json and .npy tensors) in the run and in the "
                "baseline, passed with --baseline"
                + ("; run the same configuration twice to see random errors" if stage == "random_errors" else "")
            )
        if not _CALLBACKS[tool][2]:
            return None
        twice = (
            "run the same configuration twice and pass the second run as --baseline; "
            if stage == "random_errors"
            else ""
        )
        return (
            f"{twice}dump per-operator outputs at step 0 with advisor's callback for {name} in each training "
            f"script: {_line(tool, True)}"
        )
    return None
