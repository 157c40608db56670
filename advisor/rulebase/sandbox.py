"""The jinja sandbox evidence templates render in: jinja2's SandboxedEnvironment with size and
width budgets (a user's rule file is untrusted: a template must not hang or flood). Imported by
``evidence.template_env`` when a template first needs jinja."""

from __future__ import annotations

from typing import Any

from jinja2 import StrictUndefined, nodes
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import SandboxedEnvironment

from advisor.evidence_format import FILTERS
from advisor.rulebase.template_budget import (
    MAX_EVIDENCE_CHARS,
    MAX_VALUE,
    WIDE_FORMAT_SPEC,
    TemplateBudgetError,
    check_count,
    check_size,
)


class _Lenient(StrictUndefined):
    """Undefined that renders as '?' (a fact field that was not measured)."""

    def __str__(self) -> str:  # type: ignore[override]  # renders instead of failing
        return "?"


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
        if fmt is not None and WIDE_FORMAT_SPEC.search(str(getattr(value, "__self__", ""))):

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
        elif operator == "%" and isinstance(left, str) and WIDE_FORMAT_SPEC.search(left):
            raise TemplateBudgetError("a format width above the limit")
        return check_size(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        if isinstance(getattr(__obj, "__self__", None), str):  # 'x'.ljust(10**9), .zfill, .center ...
            for a in (*args, *kwargs.values()):
                check_count(a, "a width")
        return check_size(super().call(__context, __obj, *args, **kwargs))


def _bounded_filter(fn: Any) -> Any:
    """A built-in filter whose extra arguments (widths, counts) are bounded."""

    def run(*args: Any, **kwargs: Any) -> Any:
        rest = [a for a in args[1:] if not hasattr(a, "environment")] + list(kwargs.values())
        for a in rest:
            check_count(a, "a filter argument")
        value = next((a for a in args if not hasattr(a, "environment")), None)
        if isinstance(value, str) and WIDE_FORMAT_SPEC.search(value) and getattr(fn, "__name__", "") == "do_format":
            raise TemplateBudgetError("a format width above the limit")
        return check_size(fn(*args, **kwargs))

    for attr in ("jinja_pass_arg",):  # keep pass_context / pass_environment markers
        if hasattr(fn, attr):
            setattr(run, attr, getattr(fn, attr))
    return run


def make_template_env() -> SandboxedEnvironment:
    env = BudgetedSandbox(autoescape=False, undefined=_Lenient, keep_trailing_newline=False)
    env.filters.update({name: _bounded_filter(fn) for name, fn in env.filters.items()})
    env.filters.update(FILTERS)
    return env
