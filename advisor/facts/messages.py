"""Facts about what a log says in words: a message a library printed that names a mechanism.

``log_message``: one kind of message of the table in ``advisor/knowledge/log_messages.py`` (numpy's
``RuntimeWarning: invalid value encountered in log``, PyTorch's ``Using a target size ... that is different to
the input size``), counted over the text read, with where it first appears and, for a Python warning, the file
and the source line that raised it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class LogMessage(Fact):
    """A message a library printed in the run's log that names a mechanism (advisor/knowledge/log_messages.py)."""

    kind: Literal["log_message"] = "log_message"
    message_id: str = Field(description="the table's id of the message (numpy_invalid_value, torch_target_size, ...)")
    library: str = Field(description="the library that prints it (numpy, torch, ...)")
    text: str = Field(description="the first occurrence, on one line (at most 240 characters)")
    count: int = Field(default=1, description="how many times it appears in the text read")
    operation: str = Field(default="", description="the operation it names, where it names one (log, sqrt, exp ...)")
    code_path: str = Field(default="", description="the file that raised it (a Python warning's path), or ''")
    code_line: str = Field(default="", description="the source line Python prints under the warning, or ''")
    about_targets: bool = Field(
        default=False,
        description="the raising file or line handles targets or annotations (box, bbox, anchor, target, label, "
        "annotation, gt_): the values came from the labels, not from the model",
    )
    doc = "a library's message in the log that names a mechanism (an undefined numpy operation, a broadcast loss)"
