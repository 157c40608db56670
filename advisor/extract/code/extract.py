"""The run's training scripts -> one ``code_finding`` per place a check trips, and a ``code_summary``."""

from __future__ import annotations

from typing import cast

from advisor.extract.base import Extraction, RunPair
from advisor.extract.code.calls import is_backward
from advisor.extract.code.checks import DETECTORS
from advisor.extract.code.hit import Hit
from advisor.extract.code.index import CodeIndex, index_of, last_name
from advisor.extract.extraction import CheckRun
from advisor.facts.base import Source
from advisor.facts.code import CodeCheckId, CodeFinding, CodeSummary, Framework
from advisor.inventory import InputRecord
from advisor.read.scripts import ScriptFile

MAX_CODE_CHARS = 200
#: findings kept per check and script (one loop's fault is said once, not at every copy of the loop)
MAX_PER_CHECK = 3
#: the framework's training calls, by the name the code calls
HIGH_LEVEL_CALLS = {"fit": "keras_fit", "Trainer": "hf_trainer", "SFTTrainer": "hf_trainer", "DPOTrainer": "hf_trainer"}


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    side = pair.run
    findings: list[CodeFinding] = []
    loops, api, parsed = False, "", 0
    for script in side.scripts:
        index = index_of(script)
        if index is None:
            why = script.problem or "not read"
            out.inputs.append(InputRecord(path=script.shown, kind="code", status="unreadable", why=why, side=side.side))
            continue
        parsed += 1
        out.inputs.append(InputRecord(path=script.shown, kind="code", side=side.side))
        findings += _findings(script, index)
        loops = loops or any(is_backward(c) for c in index.calls)
        api = api or _high_level_api(index)
    if not side.scripts:
        return out
    out.facts += findings
    out.facts.append(CodeSummary(scripts=parsed, has_training_loop=loops, high_level_api=api, findings=len(findings)))
    out.checks.append(
        CheckRun(
            stage="hyperparameters",
            inputs=[s.shown for s in side.scripts if s.tree is not None],
            note=f"training code read without running it: {len(findings)} finding(s)",
        )
    )
    return out


def _findings(script: ScriptFile, index: CodeIndex) -> list[CodeFinding]:
    hits: list[Hit] = []
    for detect in DETECTORS:
        hits += detect(index)
    per_check: dict[str, int] = {}
    out = []
    for hit in sorted(set(hits), key=lambda h: (h.line, h.check)):
        per_check[hit.check] = per_check.get(hit.check, 0) + 1
        if per_check[hit.check] > MAX_PER_CHECK:
            continue
        out.append(
            CodeFinding(
                check=cast(CodeCheckId, hit.check),
                script=script.shown,
                line=hit.line,
                code=script.line(hit.line)[:MAX_CODE_CHARS],
                detail=hit.detail,
                framework=cast(Framework, _framework(index, hit)),
                source=Source(path=script.shown, line=hit.line),
            )
        )
    return out


def _framework(index: CodeIndex, hit: Hit) -> str:
    if hit.framework != "torch":
        return hit.framework
    if "training_step" in index.functions:
        return "lightning"
    return "torch"


def _high_level_api(index: CodeIndex) -> str:
    for call in index.calls:
        api = HIGH_LEVEL_CALLS.get(last_name(call.func))
        if api:
            return api
    return "lightning" if "training_step" in index.functions else ""
