"""Messages a user can act on: position first, then what is wrong, expected, hint.

Format (as ruff and compilers print it)::

    rules/custom/plateau.yaml:14:5: error[rule-schema]: unknown key 'confidance' in rule 'x'
      expected one of: id, cause, ...
      hint: did you mean 'confidence'?
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Diagnostic(BaseModel):
    """One problem found in a user's file (a rule file, a log, a data sample)."""

    path: str
    message: str
    code: str = "error"
    severity: Literal["error", "warning"] = "error"
    line: int | None = None
    column: int | None = None
    rule: str | None = None
    expected: str | None = None
    hint: str | None = None

    def format(self) -> str:
        pos = self.path
        if self.line is not None:
            pos += f":{self.line}"
            if self.column is not None:
                pos += f":{self.column}"
        text = f"{pos}: {self.severity}[{self.code}]: {self.message}"
        if self.expected:
            text += f"\n  expected {self.expected}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


#: the exit codes of every command: nothing found, a cause found (or a deviation), bad usage or input
EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad command-line usage: the CLI prints one line and exits 2."""
