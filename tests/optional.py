"""Optional heavy libraries in tests: skip when one is missing *or installed but broken*.

``pytest.importorskip`` only catches ``ImportError`` raised by the import itself. A library
installed against another build of its dependencies (a CUDA torchvision next to a CPU torch,
say) fails later: ``import lightning`` raises ``RuntimeError`` from inside torchvision, and
``transformers`` imports lazily, so ``from transformers import Trainer`` fails at the name,
not at the import. Such a library is as unusable as a missing one; the test skips and says why.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest


def importorskip(name: str, *names: str) -> ModuleType:
    """Import ``name`` and touch each of ``names`` on it; skip the calling module if either fails."""
    try:
        module = importlib.import_module(name)
        for attribute in names:
            getattr(module, attribute)
    except ImportError as error:
        if getattr(error, "name", None) == name.split(".")[0]:
            pytest.skip(f"{name} is not installed", allow_module_level=True)
        reason = f"{name} is installed but cannot be imported here: {type(error).__name__}: {error}"
        pytest.skip(reason[:300], allow_module_level=True)
    except Exception as error:  # noqa: BLE001 - any failure inside a broken install means "unusable here"
        reason = f"{name} is installed but cannot be imported here: {type(error).__name__}: {error}"
        pytest.skip(reason[:300], allow_module_level=True)
    return module
