"""Hyper-parameter files -> ``hyperparameter`` facts (minimal: canonical names only).

The full vocabulary, framework defaults and baseline diff come with issue 4.
"""

from __future__ import annotations

from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.facts.base import Source
from advisor.facts.hparams import Hyperparameter
from advisor.inventory import InputRecord, RunFolder
from advisor.read.hparams import HPARAM_FILE_NAMES, HparamReadError, flatten, load_mapping

#: synonyms -> canonical name (matched on the last dotted part, lower-case)
SYNONYMS = {
    "lr": "learning_rate", "learning_rate": "learning_rate", "base_lr": "learning_rate",
    "bs": "batch_size", "batch_size": "batch_size", "per_device_train_batch_size": "batch_size",
    "epochs": "epochs", "max_epochs": "epochs", "num_train_epochs": "epochs", "num_epochs": "epochs",
    "optimizer": "optimizer", "optim": "optimizer",
    "loss_scale": "loss_scale", "init_loss_scale": "loss_scale",
    "weight_decay": "weight_decay", "wd": "weight_decay",
    "framework": "framework",
}


def canonical_name(key: str) -> str | None:
    return SYNONYMS.get(key.rsplit(".", 1)[-1].lower())


def _from_folder(folder: RunFolder, out: Extraction) -> None:
    for rel in folder.glob(HPARAM_FILE_NAMES):
        shown = folder.rel(folder.abs(rel))
        try:
            flat = flatten(load_mapping(folder.abs(rel)))
        except (HparamReadError, UnicodeDecodeError, OSError) as exc:
            out.inputs.append(InputRecord(path=shown, kind="hparams", status="unreadable", why=str(exc), side=folder.side))
            continue
        seen: set[str] = set()
        for key, value in flat.items():
            name = canonical_name(key)
            if name is None or name in seen:
                continue
            if isinstance(value, dict) and name == "optimizer":
                continue
            if not isinstance(value, (int, float, str, bool)) or value is None:
                continue
            seen.add(name)
            val = float(value) if isinstance(value, int) and not isinstance(value, bool) else value
            out.facts.append(Hyperparameter(name=name, value=val, raw_key=key, side=folder.side,
                                            source=Source(path=shown)))
        out.inputs.append(InputRecord(path=shown, kind="hparams", status="used", side=folder.side))
        if folder.side == "run":
            out.checks.append(CheckRun(stage="hyperparameters", inputs=[shown]))


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for folder in pair.sides():
        _from_folder(folder, out)
    return out
