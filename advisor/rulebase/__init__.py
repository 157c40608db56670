"""YAML rules -> checked model -> rule engine.

load.py (YAML with positions, validation) -> schema.py (the rule model) ->
backends.py (the one door: which engine runs) -> either compile.py (durable
conditions) + engine.py (the only module that imports durable-rules), or
matcher.py (the built-in matcher, on every Python) -> infer.py (rounds of
chained findings) -> testing.py.
"""

from __future__ import annotations

from pathlib import Path


def builtin_rules_dir() -> Path:
    """The built-in rule base: inside the installed package, or rules/ of a checkout."""
    here = Path(__file__).resolve().parent.parent  # advisor/
    for candidate in (here / "rules", here.parent / "rules"):
        if candidate.is_dir():
            return candidate
    return here / "rules"
