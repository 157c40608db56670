"""Evidence texts: a rule's jinja2 template filled with the facts it matched.

Rendered in a sandbox (no access to Python internals), never evaluated as
code. Filters: ``num`` (a readable number), ``pct`` (a share as a percent),
``step`` (a step number or '?').
"""

from __future__ import annotations

import re
import sys
import time
from functools import lru_cache
from typing import Any

from advisor.evidence_format import FILTERS
from advisor.facts.base import Source
from advisor.rulebase.template_budget import MAX_EVIDENCE_CHARS, MAX_RENDER_SECONDS, TemplateBudgetError


def render_budgeted(
    template: Any, ctx: dict[str, Any], seconds: float = MAX_RENDER_SECONDS, max_chars: int = MAX_EVIDENCE_CHARS
) -> str:
    """Render with a time budget (checked on every line the template runs) and a size budget
    (checked on every chunk it yields); raises TemplateBudgetError past either."""
    deadline = time.monotonic() + seconds
    counter = [0]

    def local(frame: Any, event: str, arg: Any) -> Any:
        counter[0] += 1
        if counter[0] % 16 == 0 and time.monotonic() > deadline:
            raise TemplateBudgetError(f"ran longer than {seconds:g} s")
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return local

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        out: list[str] = []
        size = 0
        for chunk in template.generate(ctx):
            size += len(chunk)
            if size > max_chars:
                raise TemplateBudgetError(f"wrote more than {max_chars} characters")
            out.append(chunk)
        return "".join(out)
    finally:
        sys.settrace(previous)


@lru_cache(maxsize=1)
def template_env() -> Any:
    """The sandboxed jinja environment evidence templates render in (jinja is imported when first needed:
    a diagnosis whose evidence texts are all plain does without it)."""
    from advisor.rulebase.sandbox import make_template_env

    return make_template_env()


@lru_cache(maxsize=4096)
def _compiled(text: str):
    return template_env().from_string(text)


class _Unmeasured(str):
    """A field that was not measured: renders as '?' and is false in a test (``{% if f.score_name %}``)."""

    def __bool__(self) -> bool:
        return False


_UNMEASURED = _Unmeasured("?")


class _FactView(dict):
    """A fact's fields for templates: missing/None fields read as '?' (false in an ``if``)."""

    def __getattr__(self, name: str) -> Any:
        value = self.get(name)
        return _UNMEASURED if value is None else value


#: a template that only fills in values: text, ``{{ name.field... | num }}`` substitutions and
#: ``{% if name.field %}`` / ``{% if name.field != 'text' %}`` ... ``{% endif %}`` blocks
_TAG = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}", re.S)
_PATH = r"([A-Za-z][A-Za-z0-9_]*)((?:\s*\.\s*[A-Za-z][A-Za-z0-9_]*)*)"
_PLAIN_EXPR = re.compile(r"\s*" + _PATH + r"\s*((?:\|\s*(?:num|pct|step)\s*)*)", re.S)
_PLAIN_IF = re.compile(r"\s*if\s+" + _PATH + r"\s*(?:(==|!=)\s*(?:'([^'\\]*)'|\"([^\"\\]*)\"|(\d{1,9})\b)\s*)?", re.S)
_PLAIN_ENDIF = re.compile(r"\s*endif\s*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
#: names jinja reads as constants or operators, not as a lookup
_NOT_NAMES = frozenset({"true", "false", "none", "True", "False", "None", "not"})
#: ("text", literal) | ("out", path, filters) | ("if", path, operator or "", literal) | ("endif",)
_Plain = tuple[tuple[Any, ...], ...]


def _plain_path(m: re.Match[str]) -> tuple[str, ...] | None:
    if m.group(1) in _NOT_NAMES:
        return None
    return (m.group(1), *_WORD.findall(m.group(2)))


@lru_cache(maxsize=4096)
def _plain_parts(text: str) -> _Plain | None:
    """``text`` as a list of steps when it is a plain template (text, substitutions of a name's fields
    through num/pct/step, ``if`` blocks on a field or on its comparison with a quoted text or an integer: no other
    tag, no comment, whitespace control, call, operator or ``else``); None otherwise."""
    if text.endswith("\n"):  # jinja drops one trailing newline (keep_trailing_newline=False): leave it to jinja
        return None
    parts: list[tuple[Any, ...]] = []
    depth = pos = 0
    for m in [*_TAG.finditer(text), None]:
        literal = text[pos : m.start() if m else len(text)]
        if "{{" in literal or "{%" in literal or "{#" in literal or "\r" in literal:
            return None  # a tag of another shape, or a line end jinja rewrites
        if literal:
            parts.append(("text", literal))
        if m is None:
            break
        pos = m.end()
        if m.group(1) is not None:
            e = _PLAIN_EXPR.fullmatch(m.group(1))
            path = _plain_path(e) if e else None
            if e is None or path is None:
                return None
            parts.append(("out", path, tuple(_WORD.findall(e.group(3)))))
        elif _PLAIN_ENDIF.fullmatch(m.group(2)):
            depth -= 1
            if depth < 0:
                return None
            parts.append(("endif",))
        else:
            c = _PLAIN_IF.fullmatch(m.group(2))
            path = _plain_path(c) if c else None
            if c is None or path is None:
                return None
            # a quoted text, or an integer as jinja reads it
            compared: str | int | None = c.group(4) if c.group(4) is not None else c.group(5)
            if c.group(6) is not None:
                compared = int(c.group(6))
            parts.append(("if", path, c.group(3) or "", compared))
            depth += 1
    return tuple(parts) if depth == 0 else None


_NO_VALUE = object()


def _lookup(obj: Any, name: str) -> Any:
    """``environment.getattr(obj, name)`` of the sandbox for a fact view or a dict, where it gives a value
    (a name a dict has as an attribute, such as ``items``, or a missing key: _NO_VALUE)."""
    if type(obj) is _FactView and not hasattr(_FactView, name):
        return obj.__getattr__(name)
    if type(obj) is dict and not hasattr(dict, name):
        return obj.get(name, _NO_VALUE)
    return _NO_VALUE


def _value(ctx: dict[str, Any], path: tuple[str, ...]) -> Any:
    value = ctx.get(path[0], _NO_VALUE)
    for name in path[1:]:
        if value is _NO_VALUE:
            break
        value = _lookup(value, name)
    return _NO_VALUE if callable(value) else value


def _render_plain(text: str, ctx: dict[str, Any]) -> str | None:
    """The text jinja renders for a plain template (the same lookups, filters, tests and ``str`` of each
    value), without compiling it; None when the template or a value it reads is anything else (jinja
    then renders it in the sandbox, as every other template)."""
    parts = _plain_parts(text)
    if parts is None:
        return None
    out = []
    skipping = 0  # depth of the if blocks being skipped, within a block whose test failed
    try:
        for step in parts:
            kind = step[0]
            if kind == "endif":
                skipping = max(skipping - 1, 0)
            elif kind == "if":
                if skipping:
                    skipping += 1
                    continue
                value = _value(ctx, step[1])
                if value is _NO_VALUE:
                    return None
                test = value != step[3] if step[2] == "!=" else value == step[3] if step[2] == "==" else value
                if not test:
                    skipping = 1
            elif skipping:
                continue
            elif kind == "text":
                out.append(step[1])
            else:
                value = _value(ctx, step[1])
                if value is _NO_VALUE:
                    return None
                for f in step[2]:
                    value = FILTERS[f](value)
                out.append(str(value))
    except Exception:  # noqa: BLE001 - jinja renders it and reports the error as it does
        return None
    result = "".join(out)
    return result if len(result) <= MAX_EVIDENCE_CHARS else None


def render_evidence(text: str, facts: dict[str, Any], params: dict[str, Any], shipped: bool = False) -> str:
    """Fill the template. ``facts``: alias -> Fact (pydantic) or dict. ``shipped``: a built-in rule's
    template, filled without jinja when it only substitutes values (``_render_plain``, the same text);
    every other template, a user's above all, renders in the sandbox."""
    ctx: dict[str, Any] = dict(params)
    ctx["params"] = dict(params)
    for alias, fact in facts.items():
        data = fact.model_dump() if hasattr(fact, "model_dump") else dict(fact)
        source = getattr(fact, "source", None)
        if isinstance(source, Source):  # where the fact was read, as the report cites it: 'hparams.yaml:3'
            data["source"] = source.cite()
        elif isinstance(data.get("source"), dict) and data["source"].get("path"):
            data["source"] = Source(**data["source"]).cite()
        ctx[alias] = _FactView(data)
    plain = _render_plain(text, ctx) if shipped else None
    if plain is not None:
        return " ".join(plain.split())
    try:
        return " ".join(render_budgeted(_compiled(text), ctx).split())
    except TemplateBudgetError as exc:
        return f"(evidence template failed: over budget, {exc}; cut)"
    except Exception as exc:  # noqa: BLE001 - a template error becomes visible evidence, not a crash
        return f"(evidence template failed: {exc})"
