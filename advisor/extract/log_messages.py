"""What a log says in words -> ``log_message`` facts: each message of ``advisor/knowledge/log_messages.py``
found in the start of a text log (``model_texts``), once per kind with its count, where it first appears, and,
for a Python warning (``path.py:42: RuntimeWarning: ...`` then the source line indented under it), the file and
line of code that raised it."""

from __future__ import annotations

import re

from advisor.extract.api_warnings import warning_head
from advisor.extract.base import Extraction, RunPair
from advisor.facts.base import Source
from advisor.facts.messages import LogMessage
from advisor.knowledge.log_messages import ABOUT_TARGETS, MESSAGES
from advisor.read.run import RunRead

MAX_TEXT = 240
_CODE = re.compile(r"\n[ \t]+(?P<code>[^\n]{1,200})")


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def _messages_of(side: RunRead) -> list[LogMessage]:
    out: list[LogMessage] = []
    for head in side.model_texts:
        text = head.text
        for pattern in MESSAGES:
            matches = list(pattern.pattern.finditer(text))
            if not matches:
                continue
            m = matches[0]
            line_start, head_m = warning_head(text, m.start())
            line_end = text.find("\n", m.end())
            line_end = len(text) if line_end < 0 else line_end
            path = (head_m.group("path") if head_m else None) or ""
            code_m = _CODE.match(text, line_end) if path else None
            code = code_m.group("code").strip() if code_m else ""
            out.append(
                LogMessage(
                    side=side.side,
                    source=Source(path=side.shown(head.rel), line=text.count("\n", 0, m.start()) + 1),
                    message_id=pattern.id,
                    library=pattern.library,
                    text=_one_line(text[line_start:line_end]),
                    count=len(matches),
                    operation=(m.groupdict().get("op") or "").strip(),
                    code_path=path,
                    code_line=code,
                    # the file's name and the line, not its folders (a project called labelme is no label code)
                    about_targets=bool(ABOUT_TARGETS.search(f"{path.rsplit('/', 1)[-1]} {code}")),
                )
            )
    return out


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for side in pair.sides():
        out.facts.extend(_messages_of(side))
    return out
