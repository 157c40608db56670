"""The exceptions a run's logs show -> ``training_crash`` facts (one per exception, at most five per side).

A traceback the run went on logging after (a warning's, a failed optional import's) did not end it and is
not a crash, unless it speaks of NaN/Inf; a "loss became NaN" message always is.
"""

from __future__ import annotations

import re

from advisor.extract.base import Extraction, RunPair
from advisor.extract.view.curves import step_int
from advisor.facts.base import Source
from advisor.facts.mixed_precision import TrainingCrash
from advisor.read.logs.merge import MergedRun

#: what the exception of an API that changed between library versions says (AttributeError, TypeError, Keras 3's
#: ValueError for a removed argument, ImportError)
API_CHANGE = re.compile(
    r"has no attribute|unexpected keyword argument|Argument\(s\) not recognized|cannot import name|"
    r"is deprecated|was removed|has been removed|no longer supported"
)
#: crashes kept per side (the first ones: later ones are usually the same failure again)
MAX_CRASHES = 5


def crash_facts(merged: MergedRun, side: str) -> list[TrainingCrash]:
    out: list[TrainingCrash] = []
    # a traceback the run went on logging after (a warning's, a failed optional import's) did not end it
    # a traceback whose exception is a "loss is NaN" message read on its own (MindSpore LossMonitor's ValueError)
    # is that one crash: the message names the step of the non-finite loss, the traceback only the last step logged
    messages = {e.text for e in merged.events if e.kind == "nonfinite_message"}
    crashes = [
        e
        for e in merged.events
        if e.kind == "nonfinite_message"
        or (
            e.kind == "traceback"
            and e.text not in messages
            and (not e.followed_by_points or re.search(r"nan|inf|non-finite", e.text, re.I))
        )
    ]
    for e in crashes[:MAX_CRASHES]:
        out.append(
            TrainingCrash(
                exception=e.text,
                step=step_int(e.step),
                side=side,
                is_nonfinite=bool(re.search(r"nan|inf|non-finite", e.text, re.I)),
                is_api_change=bool(API_CHANGE.search(e.text)),
                source=Source(path=merged.event_paths.get(e.kind, ""), line=e.line),
            )
        )
    return out


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for side in pair.sides():
        out.facts.extend(crash_facts(pair.view(side).curves, side.side))
    return out
