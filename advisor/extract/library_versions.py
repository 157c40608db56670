"""The library versions a run's files state -> ``library_version`` facts (one per library and side).

Read from what the run already has, the first statement of each library winning, logs before settings (a
log reports what is installed; a saved config, the version that saved it):

- the start of each text log: ``library==X.Y.Z`` (a pip freeze, LightningCLI's ``# lightning.pytorch==2.6.6``)
  and ``library version: X.Y.Z`` in the spellings of the environment reports issue templates ask for
  (``- `transformers` version: 4.45.2``, ``PyTorch version (GPU?): 2.4.1+cu121``, ``MindSpore version: 2.2.0``);
- settings files: a key ``<library>_version`` (``transformers_version`` in a Hugging Face ``config.json``,
  ``keras_version`` in a Keras model JSON).

A bare ``torch 2.1.0`` is not taken: too many log lines put a number after a word.
"""

from __future__ import annotations

import re

from advisor.extract.base import Extraction, RunPair
from advisor.facts.base import Source
from advisor.facts.environment import LibraryVersion
from advisor.read.run import RunRead

#: the start of a text log searched for versions (environment reports and banners are printed first)
VERSION_BYTES = 200_000

#: spelling (lower case, as logs and package names write it) -> canonical library
LIBRARIES = {
    "torch": "torch",
    "pytorch": "torch",
    "tensorflow": "tensorflow",
    "tensorflow-gpu": "tensorflow",
    "tensorflow-cpu": "tensorflow",
    "keras": "keras",
    "tf-keras": "keras",
    "transformers": "transformers",
    "peft": "peft",
    "accelerate": "accelerate",
    "lightning": "lightning",
    "pytorch-lightning": "lightning",
    "pytorch_lightning": "lightning",
    "lightning.pytorch": "lightning",
    "mindspore": "mindspore",
    "deepspeed": "deepspeed",
    "jax": "jax",
    "mxnet": "mxnet",
    "paddlepaddle": "paddle",
    "paddle": "paddle",
    "ultralytics": "ultralytics",
    "timm": "timm",
    "mmcv": "mmcv",
    "mmcv-full": "mmcv",
    "mmdet": "mmdet",
    "mmdetection": "mmdet",
    "detectron2": "detectron2",
    "numpy": "numpy",
    "onnxruntime": "onnxruntime",
    "trl": "trl",
}
_NAMES = "|".join(sorted((re.escape(k) for k in LIBRARIES), key=len, reverse=True))
_VERSION = r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,6}))?([\w.+-]*)"
_PINNED = re.compile(rf"(?<![\w.-])({_NAMES})\s*==\s*{_VERSION}", re.I)
_REPORTED = re.compile(rf"(?<![\w.-])`?({_NAMES})`?\s+version(?:\s*\([^)\n]{{0,20}}\))?\s*[:=]\s*{_VERSION}", re.I)


def version_code(major: str, minor: str, patch: str | None) -> int:
    return int(major) * 1_000_000 + min(int(minor), 999) * 1_000 + min(int(patch or 0), 999)


def _from_settings(pair: RunPair, side: RunRead, out: dict[str, LibraryVersion]) -> None:
    for flat in pair.view(side).flat_settings:
        if flat.printed:
            continue
        for key, value in flat.values.items():
            leaf = str(key).rsplit(".", 1)[-1].lower()
            if not leaf.endswith("_version") or not isinstance(value, str):
                continue
            lib = LIBRARIES.get(leaf[: -len("_version")])
            m = re.fullmatch(_VERSION, value.strip())
            if lib is None or m is None or lib in out:
                continue
            out[lib] = LibraryVersion(
                side=side.side,
                source=Source(path=flat.shown, line=flat.lines.get(key)),
                library=lib,
                version=value.strip()[:40],
                version_code=version_code(m.group(1), m.group(2), m.group(3)),
                stated_in=f"{key} in {flat.shown}",
            )


def _from_logs(side: RunRead, found: dict[str, LibraryVersion]) -> None:
    for head in side.model_texts:
        text = head.text[:VERSION_BYTES]
        hits = sorted([*_PINNED.finditer(text), *_REPORTED.finditer(text)], key=lambda m: m.start())
        for m in hits:
            lib = LIBRARIES[m.group(1).lower()]
            if lib in found:
                continue
            line = text.count("\n", 0, m.start()) + 1
            found[lib] = LibraryVersion(
                side=side.side,
                source=Source(path=side.shown(head.rel), line=line),
                library=lib,
                version=(".".join(g for g in m.groups()[1:4] if g) + (m.group(5) or ""))[:40],
                version_code=version_code(m.group(2), m.group(3), m.group(4)),
                stated_in=m.group(0).strip()[:120],
            )


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for side in pair.sides():
        found: dict[str, LibraryVersion] = {}
        _from_logs(side, found)
        _from_settings(pair, side, found)
        out.facts.extend(found[k] for k in sorted(found))
    return out
