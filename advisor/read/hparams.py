"""Hyper-parameter files (hparams/config/args .yaml/.json) -> flat key/value dicts.

YAML is read with ``yaml.safe_load`` only (no tags that build objects), with
a size cap and an alias cap against "billion laughs" anchor bombs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 5_000_000
MAX_ALIASES = 100

HPARAM_FILE_NAMES = (
    "hparams.yaml", "hparams.yml", "hparams.json", "config.yaml", "config.yml", "config.json",
    "args.json", "training_args.json",
)


class HparamReadError(ValueError):
    pass


class _CountingLoader(yaml.SafeLoader):
    """SafeLoader that refuses documents with many aliases (anchor bombs)."""

    def compose_node(self, parent, index):  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            self._aliases = getattr(self, "_aliases", 0) + 1
            if self._aliases > MAX_ALIASES:
                raise HparamReadError(f"more than {MAX_ALIASES} YAML aliases (an anchor bomb?)")
        return super().compose_node(parent, index)


def load_mapping(path: Path) -> dict[str, Any]:
    """The file's top-level mapping. Raises HparamReadError with a reason."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise HparamReadError(f"file is {size} bytes, larger than the {MAX_BYTES}-byte limit for a config file")
    text = path.read_bytes().decode("utf-8", errors="strict")
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            data = yaml.load(text, Loader=_CountingLoader)  # noqa: S506 - a SafeLoader subclass
    except HparamReadError:
        raise
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise HparamReadError(f"not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: "
                              f"{str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise HparamReadError(f"expected a mapping of names to values at the top, got {type(data).__name__}")
    return data


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings -> dotted keys: {'optimizer': {'lr': 1}} -> {'optimizer.lr': 1}."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out
