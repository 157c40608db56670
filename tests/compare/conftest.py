"""Fixtures of the comparison tests. Torch is needed only by the tests that take dumps
(they skip without it); the metric tests run on numpy alone."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
MSPROBE = SHARED / "fixtures" / "msprobe"


@pytest.fixture
def dumps(tmp_path):
    """dumps(cls, run_kw, base_kw, x, layout=, mode=) -> (run folder, baseline folder), the run
    folders holding ``dump/`` (weights equal on both sides; only the injected deviation differs)."""
    pytest.importorskip("torch")
    from torch_models import build, take_dump

    def make(cls, run_kw, base_kw, x, layout="npy", mode="tensor"):
        run, base = tmp_path / "run", tmp_path / "base"
        take_dump(build(cls, **run_kw), x, run / "dump", layout, mode)
        take_dump(build(cls, **base_kw), x, base / "dump", layout, mode)
        return run, base
    return make


@pytest.fixture
def mlp_input():
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    return torch.randn(8, 32)


@pytest.fixture
def shared_msprobe():
    if not MSPROBE.is_dir():
        pytest.skip("../shared/fixtures/msprobe is not present")
    return MSPROBE
