"""Session-wide test settings: advisor's rule-base cache goes to a temporary folder, not the user's."""

from __future__ import annotations

import os
import shutil
import tempfile

_made: list[str] = []


def pytest_configure(config) -> None:
    if "ADVISOR_CACHE_DIR" not in os.environ:
        _made.append(tempfile.mkdtemp(prefix="advisor-test-cache-"))
        os.environ["ADVISOR_CACHE_DIR"] = _made[-1]


def pytest_unconfigure(config) -> None:
    for path in _made:
        shutil.rmtree(path, ignore_errors=True)
