"""The warnings libraries print about a run's own calls -> ``api_warning`` facts (one per distinct message).

Read from the start of each text log (``model_texts``: warnings about the code are printed when the model, the
optimizer and the first batches are built). The spellings read are the ones the tools print:

- Python's ``warnings`` module: ``path.py:42: UserWarning: ...`` (also ``FutureWarning``, ``DeprecationWarning``,
  numpy's ``VisibleDeprecationWarning``): PyTorch, torchvision, transformers, Keras 2 and numpy warn this way;
- TensorFlow's logger: ``WARNING:tensorflow:From x.py:12: ... is deprecated and will be removed ...`` and
  ``The name tf.placeholder is deprecated. Please use tf.compat.v1.placeholder instead.``;
- MindSpore's logger: ``[WARNING] ME(...) ... is deprecated ...``.

A ``UserWarning`` is kept only when it speaks of a version change (deprecated, removed, renamed, "in PyTorch
1.1.0 and later", "changed ... since"); any other warning (a shape, a worker count) is not about the API.
"""

from __future__ import annotations

import re

from advisor.extract.base import Extraction, RunPair
from advisor.facts.base import Source
from advisor.facts.environment import ApiWarning
from advisor.read.run import RunRead

#: distinct warnings kept per side (behaviour changes first)
MAX_WARNINGS = 8
MAX_MESSAGE = 240
#: characters before a Python warning's category searched for its file path
MAX_HEAD = 400

_PYTHON = re.compile(r"(?P<category>(?:Deprecation|Future|User)Warning): (?P<message>[^\n]+)")
#: what precedes a Python warning's category on its line: ``path.py:42: `` and a prefix of the category
#: (numpy's ``Visible``DeprecationWarning)
_PYTHON_HEAD = re.compile(r"(?:(?P<path>\S+\.py):\d+: )?(?P<prefix>\w*)$")
_TF = re.compile(r"WARNING:tensorflow:(?:From (?P<path>[^\n:]+):\d+: )?(?P<message>[^\n]*deprecated[^\n]*)")
_MINDSPORE = re.compile(r"\[WARNING\] ME\([^)\n]*\)[^\n]*?\] (?P<message>[^\n]*deprecated[^\n]*)", re.I)

#: the library says the call means something else now than when the code was written
_CHANGED = re.compile(
    r"\bIn \w+ v?\d+(?:\.\d+)+ and later\b|removed and now has no effect|no longer has (?:any )?effect|"
    r"\bis changed to\b|\bhas changed\b|\bchanged (?:to|from|in|since)\b|behaviou?r (?:has )?changed",
    re.I,
)
#: the code is written against an older major API that the library converts, renames or reads differently
_LEGACY = re.compile(
    r"call to the Keras \d API|has been renamed|was renamed|is renamed|renamed to\b|\bis not the same as\b|"
    r"\bsemantics of\b",
    re.I,
)
#: a UserWarning about the API (any other UserWarning is not about versions)
_ABOUT_VERSIONS = re.compile(
    r"deprecat|removed|renamed|\bKeras \d\b|not the same as|will be changed|\bsince v?\d+\.\d+|and later\b", re.I
)

#: where a warning's library is read from: its file's path or the names its message uses
_LIBRARY_HINTS = (
    ("torchvision", re.compile(r"torchvision", re.I)),
    ("torch", re.compile(r"\btorch\b|PyTorch|\bnn\.|lr_scheduler|volatile|size_average", re.I)),
    ("keras", re.compile(r"\bkeras\b", re.I)),
    ("tensorflow", re.compile(r"tensorflow|\btf\.", re.I)),
    ("transformers", re.compile(r"transformers", re.I)),
    ("mindspore", re.compile(r"mindspore", re.I)),
    ("numpy", re.compile(r"numpy|\bnp\.|ndarray", re.I)),
)
_ORDER = {"behaviour_changed": 0, "legacy_api": 1, "deprecated": 2}


def warning_head(text: str, start: int) -> tuple[int, re.Match[str] | None]:
    """Where the line of a Python warning whose category matched at ``start`` begins, and its head
    (``path.py:42: `` and a prefix of the category), searched in the MAX_HEAD characters before it only (a
    hostile line of megabytes is not searched from its start at every warning)."""
    lo = max(0, start - MAX_HEAD)
    line_start = max(text.rfind("\n", lo, start) + 1, lo)
    return line_start, _PYTHON_HEAD.search(text, line_start, start)


def _shortened(message: str) -> str:
    """The message on one line of single spaces, cut at a sentence's end before MAX_MESSAGE where it is longer."""
    message = " ".join(message.split())
    if len(message) <= MAX_MESSAGE:
        return message
    cut = message.rfind(". ", 0, MAX_MESSAGE)
    return message[: cut + 1] if cut > MAX_MESSAGE // 3 else message[: MAX_MESSAGE - 3] + "..."


def _category(message: str) -> str:
    if _LEGACY.search(message):
        return "legacy_api"
    if _CHANGED.search(message):
        return "behaviour_changed"
    return "deprecated"


def _library(path: str, message: str, default: str) -> str:
    site = re.search(r"site-packages/(\w+)", path)
    if site:
        return site.group(1)
    for lib, hint in _LIBRARY_HINTS:
        if hint.search(message):
            return lib
    return default


def _warnings_of(side: RunRead) -> list[ApiWarning]:
    first: dict[str, ApiWarning] = {}
    counts: dict[str, int] = {}
    for head in side.model_texts:
        text = head.text
        hits: list[tuple[int, str, str, str]] = []
        for m in _PYTHON.finditer(text):
            message = m.group("message").strip()
            _, head_m = warning_head(text, m.start())
            prefix = head_m.group("prefix") if head_m else ""
            if m.group("category") == "UserWarning" and not prefix and not _ABOUT_VERSIONS.search(message):
                continue
            if prefix and not prefix.endswith("Visible"):
                continue  # another class of warning whose name ends in one of these (a library's own)
            hits.append((m.start(), (head_m.group("path") if head_m else None) or "", message, ""))
        hits += [
            (m.start(), m.group("path") or "", m.group("message").strip(), "tensorflow") for m in _TF.finditer(text)
        ]
        hits += [(m.start(), "", m.group("message").strip(), "mindspore") for m in _MINDSPORE.finditer(text)]
        for start, path, message, default in sorted(hits):
            message = _shortened(message)
            counts[message] = counts.get(message, 0) + 1
            if message not in first:
                first[message] = ApiWarning(
                    side=side.side,
                    source=Source(path=side.shown(head.rel), line=text.count("\n", 0, start) + 1),
                    category=_category(message),  # type: ignore[arg-type]
                    library=_library(path, message, default),
                    message=message,
                )
    ranked = sorted(first.values(), key=lambda w: (_ORDER[w.category], w.source.line if w.source else 0))
    return [w.model_copy(update={"count": counts[w.message]}) for w in ranked[:MAX_WARNINGS]]


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for side in pair.sides():
        out.facts.extend(_warnings_of(side))
    return out
