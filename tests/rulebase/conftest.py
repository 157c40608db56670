"""``engine_name``: a test that takes it runs on each back-end that can run here (durable-rules skips where it does not import)."""

from __future__ import annotations

import pytest

from advisor.rulebase import backends


def engine_params() -> list:
    problem = backends.durable_problem()
    return [pytest.param("durable", marks=pytest.mark.skipif(problem is not None, reason=problem or "")), "python"]


@pytest.fixture(params=engine_params())
def engine_name(request, monkeypatch) -> str:
    """The back-end under test; RuleBase() without an engine argument takes it (ADVISOR_ENGINE)."""
    monkeypatch.setenv(backends.ENV_VAR, request.param)
    return request.param
