"""The rule engine behind one door: which back-end runs the compiled rules.

Two back-ends give the same firings (the tests hold them to it):

- ``durable``: durable-rules (engine.py, via compile.py's conditions), where it
  imports: Python 3.10-3.12 with the package installed;
- ``python``: the built-in matcher (matcher.py), everywhere.

``choose()`` is the one place the choice is made: the requested name (the
CLI's ``--engine``), else the ``ADVISOR_ENGINE`` environment variable, else
``auto``, which takes the built-in matcher. durable-rules runs when asked for:
its C engine corrupts its heap on some combinations of rules in one ruleset
(measured: four shipped rules on the ``examples/healthy`` facts crash the process
with SIGSEGV whenever glibc's ``MALLOC_TRIM_THRESHOLD_`` is set, as Dask sets it for
its workers and the processes they start; upstream reports the same class of
crash, e.g. jruizgit/rules#381), and a diagnosis must not depend on the heap's
layout. The matcher gives the same firings and is faster (benchmarks/engine_bench.py).
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, Protocol

from advisor.rulebase import cache, engine, matcher
from advisor.rulebase.matcher import matches
from advisor.rulebase.schema import Not, Rule

ENGINES = ("auto", "durable", "python")
ENV_VAR = "ADVISOR_ENGINE"

Binding = dict[str, int]


class EngineUnavailable(RuntimeError):
    """The requested back-end cannot run here (durable-rules did not import)."""


@lru_cache(maxsize=1)
def durable_problem() -> str | None:
    """Why durable-rules cannot run here, or None when it imports."""
    try:
        engine.load()
    except Exception as exc:  # noqa: BLE001 - ImportError, or OSError/undefined symbol from its C extension
        return f"durable-rules does not import ({type(exc).__name__}: {exc})"
    return None


def choose(requested: str | None = None) -> str:
    """The back-end that will run: 'durable' or 'python'.

    Raises ValueError for an unknown name and EngineUnavailable when
    'durable' is asked for explicitly and cannot run.
    """
    name = (requested or os.environ.get(ENV_VAR) or "auto").strip().lower()
    if name not in ENGINES:
        raise ValueError(f"unknown rule engine '{name}' (expected one of: {', '.join(ENGINES)})")
    if name in ("python", "auto"):
        return "python"
    problem = durable_problem()
    if problem:
        raise EngineUnavailable(f"{problem}; use --engine python (the built-in matcher)")
    return "durable"


class Backend(Protocol):
    name: str

    def evaluate(self, facts: list[dict[str, Any]]) -> list[tuple[str, Binding]]:
        """Every firing over ``facts`` (plain dicts with ``kind``): (rule id, alias -> fact index), sorted."""
        ...


class PythonBackend:
    name = "python"

    def __init__(self, rules: list[Rule], params: dict[str, dict[str, Any]]):
        self.compiled = matcher.compile_rules(rules, params)

    def evaluate(self, facts: list[dict[str, Any]]) -> list[tuple[str, Binding]]:
        return matcher.evaluate(self.compiled, facts)


class DurableBackend:
    """durable-rules for the joins; ``not:`` decided afterwards on the complete fact set.

    durable-rules decides ``$not`` when a fact arrives and never takes a firing
    back when the negated fact comes later (measured), so negations are not
    compiled (compile.py) and are checked here with the matcher's semantics;
    so are references between facts, after durable-rules has joined them.

    A rule whose parameters a call overrides (``--param``, the Python API's
    ``params``) is matched by the matcher, which gives the same firings (the
    tests hold the two back-ends to it): compiled for durable-rules, each
    distinct value would register a ruleset of its own, and durable-rules keeps
    about 0.6 MB of every ruleset it ever made, deleted or not (measured: 120
    diagnoses with distinct values for every parameter grew a process by 600 MB).
    A ruleset is thus registered once per rule content, whatever the values.
    """

    name = "durable"

    def __init__(self, rules: list[Rule], params: dict[str, dict[str, Any]], overrides: dict[str, Any]):
        from advisor.rulebase import compile as C

        texts: dict[str, str] = {}
        needs: dict[str, Any] = {}
        live: list[Rule] = []  # compiled here: user rules
        valued: list[Rule] = []  # rules a parameter override touches: matched by the matcher
        builtin: dict[str, list[Rule]] = {}
        for r in rules:
            key = cache.origin(r)
            if C.overridden(r, overrides):
                valued.append(r)
            elif key is None:
                live.append(r)
            else:
                builtin.setdefault(key, []).append(r)
        self.valued = matcher.compile_rules(valued, params) if valued else []
        for key, group in builtin.items():  # the built-in rules as their defaults compile, from the cache
            table = cache.compiled_rules(key, group, _compile_entries)
            for r in group:
                for name, text, need in table[r.id]:
                    texts[name], needs[name] = text, need
        self.compiled = engine.CompiledRuleset(rules=C.compile_rules(live, overrides).rules, texts=texts, needs=needs)
        self.by_id = {r.id: r for r in rules}
        self.params = params
        self.sep = C.VARIANT_SEP
        #: rule id -> (engine alias -> alias, its negations, its patterns with references), for the rules that fired
        self._checks: dict[str, tuple[dict[str, str], tuple[Any, ...], dict[str, Any]]] = {}

    def _rule_checks(self, rule_id: str) -> tuple[dict[str, str], tuple[Any, ...], dict[str, Any]]:
        checks = self._checks.get(rule_id)
        if checks is None:
            from advisor.rulebase import compile as C

            r = self.by_id[rule_id]
            checks = self._checks[rule_id] = (
                C.engine_aliases(r),
                tuple((i.pattern, matcher.local_pattern(i.pattern)) for i in r.items if isinstance(i, Not)),
                {p.alias: p for p in r.patterns() if matcher.has_refs(p)},
            )
        return checks

    def evaluate(self, facts: list[dict[str, Any]]) -> list[tuple[str, Binding]]:
        out = self._evaluate_durable(facts)
        if self.valued:
            out = sorted(out + matcher.evaluate(self.valued, facts), key=lambda f: (f[0], sorted(f[1].items())))
        return out

    def _evaluate_durable(self, facts: list[dict[str, Any]]) -> list[tuple[str, Binding]]:
        found = set()
        for rid, b in engine.evaluate(self.compiled, facts):
            rule_id = rid.split(self.sep, 1)[0]
            names = self._rule_checks(rule_id)[0]
            found.add((rule_id, tuple(sorted((names.get(a, a), i) for a, i in b.items()))))
        index: matcher.FactIndex | None = None
        not_cands: dict[str, matcher.NotCandidates] = {}
        out = []
        for rule_id, pairs in sorted(found):
            binding = dict(pairs)
            _, nots, joined = self._rule_checks(rule_id)
            if nots or joined:
                bound = {a: facts[i] for a, i in binding.items()}
                params = self.params[rule_id]
                if not all(matches(p, facts[binding[a]], params, bound) for a, p in joined.items() if a in binding):
                    continue  # a reference durable-rules could not order (a cycle of references)
                if rule_id not in not_cands:
                    index = index or matcher.FactIndex(facts)
                    not_cands[rule_id] = matcher.not_candidates(nots, index, params)
                if matcher.negated(not_cands[rule_id], binding, facts, params, bound):
                    continue
            out.append((rule_id, binding))
        return out


def _compile_entries(rules: list[Rule]) -> dict[str, "cache.CompiledEntries"]:
    """Each rule's engine rules with their default parameters: (name, condition text, string needs)."""
    from advisor.rulebase import compile as C

    out = {}
    for r in rules:
        out[r.id] = [
            (name, engine.encode_json_fast(cond), engine.string_needs(cond)) for name, cond in C.compile_rule(r).items()
        ]
    return out


def make(name: str, rules: list[Rule], params: dict[str, dict[str, Any]], overrides: dict[str, Any]) -> Backend:
    """The back-end ``name`` (from ``choose()``) with the rules compiled for it."""
    if name == "durable":
        return DurableBackend(rules, params, overrides)
    return PythonBackend(rules, params)
