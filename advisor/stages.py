"""The stages of the accuracy-tuning routine (docs/routine.md).

Each extractor reports the stages it ran; the report lists every stage as
ran or skipped, and for a skipped stage what the user should collect.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    id: str
    title: str
    enable: str  # what to collect (and how) to run the stage


STAGES: tuple[Stage, ...] = (
    Stage(
        "pre_check",
        "Benchmark check (the run against its baseline; the baseline itself)",
        "pass --baseline with the benchmark run's folder (its training log or metrics file)",
    ),
    Stage(
        "hyperparameters",
        "Code and hyper-parameters",
        "save the hyper-parameters as hparams.yaml / config.json (add `framework: pytorch|mindspore|...`), "
        "and pass --baseline with the benchmark run's folder to diff them",
    ),
    Stage(
        "model_structure",
        "Model structure",
        "record weight/gradient statistics with the capture hook, two lines in your training script: "
        "`from advisor.capture import attach; cap = attach(model, optimizer, 'run/', every=10)`",
    ),
    Stage(
        "input_data",
        "Input data",
        "save a sample of the preprocessed batches as data/train.npz and data/eval.npz (arrays x, y)",
    ),
    Stage(
        "loss_curve",
        "Loss curve",
        "keep the training log (train.log) or a metrics file (metrics.csv, metrics.jsonl, trainer_state.json)",
    ),
    Stage(
        "training_dynamics",
        "Training dynamics (weights, gradients, activations)",
        "write tensors.jsonl with the capture hook, two lines in your training script: "
        "`from advisor.capture import attach; cap = attach(model, optimizer, 'run/', every=10)`",
    ),
    Stage(
        "floating_point_exceptions",
        "Floating-point exceptions",
        "keep the log with the loss-scale / overflow messages, or log `loss_scale` per step",
    ),
    Stage("fusion", "Fusion exceptions", "dump operator outputs with fusion enabled (run) and disabled (--baseline)"),
    Stage(
        "network_wide_comparison",
        "Network-wide comparison",
        "dump per-operator outputs (dump/ with .npy files, or msprobe) in the run and in the baseline, passed "
        "with --baseline; the capture hook writes them, two lines in each training script: "
        "`from advisor.capture import attach; cap = attach(model, optimizer, 'run/', dump_steps=[0])`",
    ),
    Stage(
        "random_errors",
        "Random errors",
        "run the same configuration twice with dumps and pass the second run as --baseline; the capture hook "
        "writes the dumps, two lines in the training script: "
        "`from advisor.capture import attach; cap = attach(model, optimizer, 'run/', dump_steps=[0])`",
    ),
)

STAGE_IDS = tuple(s.id for s in STAGES)
STAGE_BY_ID = {s.id: s for s in STAGES}
