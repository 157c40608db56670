"""The caps a hyper-parameter file is read under, and the error that refuses one: shared by ``hparams.py`` and its
YAML half, ``yaml_mapping.py`` (which is imported only for a YAML file)."""

from __future__ import annotations

MAX_BYTES = 5_000_000
MAX_ALIASES = 100
MAX_DEPTH = 32
MAX_NODES = 100_000  # values after expanding aliases: a config has hundreds


class HparamReadError(ValueError):
    """A hyper-parameter file that cannot be read; the message says why."""
