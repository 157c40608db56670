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

from jinja2 import StrictUndefined, nodes
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import SandboxedEnvironment

from advisor.evidence_format import fmt_num, fmt_pct, fmt_step


class _Lenient(StrictUndefined):
    """Undefined that renders as '?' (a fact field that was not measured)."""

    def __str__(self) -> str:  # type: ignore[override]  # renders instead of failing
        return "?"


#: budgets of one evidence text (a user's rule file is untrusted: a template must not hang or flood)
MAX_EVIDENCE_CHARS = 20_000
MAX_RENDER_SECONDS = 2.0
MAX_VALUE = 100_000  # characters or items of any value a template makes on the way
MAX_WIDTH = 10_000  # widths, repeat counts and exponents in a template
_WIDE = re.compile(r"\d{5,}")  # a width or precision of 10000 or more in a format spec


class TemplateBudgetError(Exception):
    """An evidence template that ran past its time or size budget."""


def _check_count(n: Any, what: str) -> None:
    if isinstance(n, int) and not isinstance(n, bool) and abs(n) > MAX_WIDTH:
        raise TemplateBudgetError(f"{what} {n} is above the limit of {MAX_WIDTH}")


def _check_size(value: Any) -> Any:
    if isinstance(value, (str, list, tuple, dict)) and len(value) > MAX_VALUE:
        raise TemplateBudgetError(f"a value of {len(value)} items or characters, above the limit of {MAX_VALUE}")
    return value


class _BudgetedCodeGenerator(CodeGenerator):
    """Compiles ``a ~ b`` to a join whose result is size-checked (doubling a text in a loop stops)."""

    def visit_Concat(self, node: nodes.Concat, frame: Any) -> None:
        self.write("environment.budget_join((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class BudgetedSandbox(SandboxedEnvironment):
    """jinja2's sandbox plus limits: repeating a text or list, big powers and wide format specs are
    refused (``range`` is already capped by the sandbox), and every value an operator, a filter or a
    method call makes is size-checked; ``render_budgeted`` adds a time and an output budget."""

    code_generator_class = _BudgetedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+", "//", "/", "-"})

    @staticmethod
    def budget_join(parts: Any) -> str:
        total = 0
        out = []
        for p in parts:
            text = str(p)
            total += len(text)
            if total > MAX_VALUE:
                raise TemplateBudgetError(f"a text above the limit of {MAX_VALUE} characters")
            out.append(text)
        return "".join(out)

    def wrap_str_format(self, value: Any) -> Any:
        fmt = super().wrap_str_format(value)
        if fmt is not None and _WIDE.search(str(getattr(value, "__self__", ""))):

            def refuse(*args: Any, **kwargs: Any) -> str:
                raise TemplateBudgetError("a format width above the limit")

            return refuse
        return fmt

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if (
                    isinstance(seq, (str, list, tuple))
                    and isinstance(n, int)
                    and len(seq) * max(n, 0) > MAX_EVIDENCE_CHARS
                ):
                    raise TemplateBudgetError(f"repeating a {type(seq).__name__} {n} times is above the size limit")
        elif operator == "**":
            if isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > 1024:
                raise TemplateBudgetError(f"the power {left}**{right} is above the limit")
        elif operator == "%" and isinstance(left, str) and _WIDE.search(left):
            raise TemplateBudgetError("a format width above the limit")
        return _check_size(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        if isinstance(getattr(__obj, "__self__", None), str):  # 'x'.ljust(10**9), .zfill, .center ...
            for a in (*args, *kwargs.values()):
                _check_count(a, "a width")
        return _check_size(super().call(__context, __obj, *args, **kwargs))


def _bounded_filter(fn: Any) -> Any:
    """A built-in filter whose extra arguments (widths, counts) are bounded."""

    def run(*args: Any, **kwargs: Any) -> Any:
        rest = [a for a in args[1:] if not hasattr(a, "environment")] + list(kwargs.values())
        for a in rest:
            _check_count(a, "a filter argument")
        value = next((a for a in args if not hasattr(a, "environment")), None)
        if isinstance(value, str) and _WIDE.search(value) and getattr(fn, "__name__", "") == "do_format":
            raise TemplateBudgetError("a format width above the limit")
        return _check_size(fn(*args, **kwargs))

    for attr in ("jinja_pass_arg",):  # keep pass_context / pass_environment markers
        if hasattr(fn, attr):
            setattr(run, attr, getattr(fn, attr))
    return run


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
def template_env() -> SandboxedEnvironment:
    env = BudgetedSandbox(autoescape=False, undefined=_Lenient, keep_trailing_newline=False)
    env.filters.update({name: _bounded_filter(fn) for name, fn in env.filters.items()})
    env.filters["num"] = fmt_num
    env.filters["pct"] = fmt_pct
    env.filters["step"] = fmt_step
    return env


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


#: a template that only fills in values: text, and ``{{ name.field... | num }}`` substitutions
_SUBSTITUTION = re.compile(r"\{\{(.*?)\}\}", re.S)
_PLAIN_EXPR = re.compile(
    r"\s*([A-Za-z][A-Za-z0-9_]*)((?:\s*\.\s*[A-Za-z][A-Za-z0-9_]*)*)\s*((?:\|\s*(?:num|pct|step)\s*)*)", re.S
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
#: names jinja reads as constants or operators, not as a lookup
_NOT_NAMES = frozenset({"true", "false", "none", "True", "False", "None", "not"})
_Plain = tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]


@lru_cache(maxsize=4096)
def _plain_parts(text: str) -> _Plain | None:
    """``text`` as (literal text, name path, filters) parts when it is a plain substitution template
    (no tag, comment, whitespace control, literal, call or operator); None otherwise."""
    pieces = _SUBSTITUTION.split(text)
    parts = []
    for i in range(0, len(pieces), 2):
        literal = pieces[i]
        if "{{" in literal or "{%" in literal or "{#" in literal or "\r" in literal:
            return None  # a tag, or a line end jinja rewrites
        path: tuple[str, ...] = ()
        filters: tuple[str, ...] = ()
        if i + 1 < len(pieces):
            m = _PLAIN_EXPR.fullmatch(pieces[i + 1])
            if m is None or m.group(1) in _NOT_NAMES:
                return None
            path = (m.group(1), *_WORD.findall(m.group(2)))
            filters = tuple(_WORD.findall(m.group(3)))
        parts.append((literal, path, filters))
    if text.endswith("\n"):  # jinja drops one trailing newline (keep_trailing_newline=False): leave it to jinja
        return None
    return tuple(parts)


_NO_VALUE = object()


def _lookup(obj: Any, name: str) -> Any:
    """``environment.getattr(obj, name)`` of the sandbox for a fact view or a dict, where it gives a value
    (a name a dict has as an attribute, such as ``items``, or a missing key: _NO_VALUE)."""
    if type(obj) is _FactView and not hasattr(_FactView, name):
        return obj.__getattr__(name)
    if type(obj) is dict and not hasattr(dict, name):
        return obj.get(name, _NO_VALUE)
    return _NO_VALUE


def _render_plain(text: str, ctx: dict[str, Any]) -> str | None:
    """The text jinja renders for a plain substitution template (same lookups, same filters, ``str`` of
    each value), without compiling it; None when the template or a value along a path is anything else
    (jinja then renders it in the sandbox, as every other template)."""
    parts = _plain_parts(text)
    if parts is None:
        return None
    filters = template_env().filters
    out = []
    for literal, path, names in parts:
        out.append(literal)
        if not path:
            continue
        value = ctx.get(path[0], _NO_VALUE)
        for name in path[1:]:
            value = _lookup(value, name)
            if value is _NO_VALUE:
                return None
        if value is _NO_VALUE or callable(value):
            return None
        try:
            for f in names:
                value = filters[f](value)
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
