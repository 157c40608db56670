"""The base of every fact: a small, typed, frozen summary a rule can test.

A fact is *not* raw data: it is what an extractor concluded from the data
(a curve's features, a hyper-parameter's effective value, a tensor pair's
verdict). A diagnosis needs a few hundred of them, not every logged point.

Conventions (see CONTRIBUTING.md):
- ``kind`` is a snake_case noun, fixed per class (``Literal``).
- field names carry their unit or meaning (``_step``, ``_ratio``,
  ``_per_1k_steps``, ``is_``/``has_`` for booleans);
- ``None`` means "not measured", never 0;
- ``side`` says whether the fact describes the run or the baseline; rules
  match ``side: run`` unless they ask for the baseline explicitly;
- ``source`` says where the fact came from so that evidence can cite it.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field


class Source(BaseModel):
    """Where a fact came from: a file of the run folder and a place in it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(description="file path relative to the run (or baseline) folder")
    line: int | None = Field(default=None, description="first line (1-based) the fact was read from")
    line_end: int | None = Field(default=None, description="last line (1-based), when a range")
    step: int | None = Field(default=None, description="training step the fact refers to")

    def cite(self) -> str:
        """Short human citation: ``train.log:120``, ``metrics.csv (step 300)``."""
        text = self.path
        if self.line is not None:
            text += f":{self.line}"
            if self.line_end is not None and self.line_end != self.line:
                text += f"-{self.line_end}"
        if self.step is not None:
            text += f" (step {self.step})"
        return text


Side = Literal["run", "baseline"]


class Fact(BaseModel):
    """Base class of all facts. Subclasses set ``kind`` as a Literal field."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    #: filled by subclasses: the fact kind name used in rules
    kind: str
    side: Side = Field(default="run", description="which run the fact describes: the run or the baseline")
    source: Source | None = Field(default=None, description="where the fact was read from")

    #: one sentence on what the fact kind holds (shown by `advisor facts --kinds`)
    doc: ClassVar[str] = ""

    @classmethod
    def kind_name(cls) -> str:
        return cls.model_fields["kind"].default
