"""Evidence texts: a rule's jinja2 template filled with the facts it matched.

Rendered in a sandbox (no access to Python internals), never evaluated as
code. Filters: ``num`` (a readable number), ``pct`` (a share as a percent),
``step`` (a step number or '?').
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from advisor.evidence_format import fmt_num, fmt_pct, fmt_step


class _Lenient(StrictUndefined):
    """Undefined that renders as '?' (a fact field that was not measured)."""

    def __str__(self) -> str:  # type: ignore[override]  # renders instead of failing
        return "?"


@lru_cache(maxsize=1)
def template_env() -> SandboxedEnvironment:
    env = SandboxedEnvironment(autoescape=False, undefined=_Lenient, keep_trailing_newline=False)
    env.filters["num"] = fmt_num
    env.filters["pct"] = fmt_pct
    env.filters["step"] = fmt_step
    return env


@lru_cache(maxsize=4096)
def _compiled(text: str):
    return template_env().from_string(text)


class _FactView(dict):
    """A fact's fields for templates: missing/None fields read as '?'."""

    def __getattr__(self, name: str) -> Any:
        value = self.get(name)
        return "?" if value is None else value


def render_evidence(text: str, facts: dict[str, Any], params: dict[str, Any]) -> str:
    """Fill the template. ``facts``: alias -> Fact (pydantic) or dict."""
    ctx: dict[str, Any] = dict(params)
    ctx["params"] = dict(params)
    for alias, fact in facts.items():
        data = fact.model_dump() if hasattr(fact, "model_dump") else dict(fact)
        ctx[alias] = _FactView(data)
    try:
        return " ".join(_compiled(text).render(ctx).split())
    except Exception as exc:  # noqa: BLE001 - a template error becomes visible evidence, not a crash
        return f"(evidence template failed: {exc})"
