"""The checks of a rule's inline ``tests`` (cases that fire it and keep it quiet), a part of the rule checker
(``load._RuleChecker``)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

import advisor.facts as vocabulary
from advisor.rulebase import schema as S
from advisor.rulebase.positions import PosList

from advisor.rulebase.load_common import CheckerBase, suggest


class TestChecks(CheckerBase):
    """``tests``: the checker gives ``err``, ``_vpos``, ``_kpos`` and ``check_item``."""

    def check_tests(self, tests: Any) -> tuple[list[S.TestCase], list[S.TestCase]]:
        if tests is None:
            return [], []
        tpos = self._vpos(self.data, "tests")
        if not isinstance(tests, dict):
            self.err(tpos, "'tests' must be a mapping with 'fires' and 'quiet' lists")
            return [], []
        for key in tests:
            if key not in ("fires", "quiet"):
                self.err(
                    self._kpos(tests, key),
                    f"unknown key '{key}' in tests",
                    expected="fires, quiet",
                    hint=suggest(key, ("fires", "quiet")),
                )
        out: list[list[S.TestCase]] = []
        for key in ("fires", "quiet"):
            cases = tests.get(key)
            if not isinstance(cases, list) or not cases:
                self.err(
                    self._vpos(tests, key, tpos),
                    f"rule '{self.rule_id}' has no '{key}' test case",
                    code="rule-tests",
                    expected=f"tests.{key}: a list of at least one case",
                )
                out.append([])
                continue
            parsed = []
            for i, case in enumerate(cases):
                c = self.check_case(case, cases.pos[i] if isinstance(cases, PosList) else tpos)
                if c:
                    parsed.append(c)
            out.append(parsed)
        return out[0], out[1]

    def check_case(self, case: Any, pos: S.Pos) -> S.TestCase | None:
        if not isinstance(case, dict):
            self.err(pos, "a test case must be a mapping with name and facts")
            return None
        for key in case:
            if key not in S.TEST_CASE_KEYS:
                self.err(
                    self._kpos(case, key),
                    f"unknown key '{key}' in a test case",
                    expected=", ".join(S.TEST_CASE_KEYS),
                    hint=suggest(key, S.TEST_CASE_KEYS),
                )
        name = case.get("name")
        if not isinstance(name, str) or not name:
            self.err(pos, "a test case needs a 'name'")
            name = "?"
        facts_raw = case.get("facts")
        if not isinstance(facts_raw, list):
            self.err(self._vpos(case, "facts", pos), f"test case '{name}' needs a list of 'facts'")
            return None
        facts = []
        for i, f in enumerate(facts_raw):
            fpos = facts_raw.pos[i] if isinstance(facts_raw, PosList) else pos
            if not isinstance(f, dict) or len(f) != 1:
                self.err(
                    fpos, "a test fact is a mapping of one fact kind to its fields, like {loss_curve: {split: train}}"
                )
                continue
            kind, fields = next(iter(f.items()))
            if kind not in vocabulary.FACT_KINDS:
                self.err(
                    self._kpos(f, kind),
                    f"unknown fact kind '{kind}' in test case '{name}'",
                    expected="one of: " + ", ".join(vocabulary.FACT_KINDS),
                    hint=suggest(kind, vocabulary.FACT_KINDS),
                )
                continue
            fields = fields or {}
            if not isinstance(fields, dict):
                self.err(self._vpos(f, kind, fpos), f"the fields of '{kind}' must be a mapping")
                continue
            try:
                facts.append(vocabulary.FACT_KINDS[kind](**dict(fields)))
            except ValidationError as exc:
                for e in exc.errors():
                    loc = e["loc"][0] if e["loc"] else None
                    epos = (
                        self._vpos(fields, loc, self._vpos(f, kind, fpos))
                        if loc in fields
                        else self._vpos(f, kind, fpos)
                    )
                    msg = e["msg"]
                    if e["type"] == "extra_forbidden":
                        msg = f"fact kind '{kind}' has no field '{loc}'"
                    elif e["type"] == "missing":
                        msg = f"'{kind}' needs field '{loc}'"
                    self.err(
                        epos,
                        f"test case '{name}': {msg}",
                        code="rule-tests",
                        hint=suggest(str(loc), vocabulary.FACT_KINDS[kind].model_fields)
                        if e["type"] == "extra_forbidden"
                        else None,
                    )
        ev = case.get("evidence_has")
        if ev is not None and not isinstance(ev, str):
            self.err(self._vpos(case, "evidence_has", pos), "'evidence_has' must be a text")
            ev = None
        return S.TestCase(name=name, facts=facts, evidence_has=ev, pos=pos)
