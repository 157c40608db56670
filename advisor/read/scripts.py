"""Python training scripts of a run -> syntax trees. Parsed, never imported or executed. No judgement.

A run folder often holds the script that trained it (``train.py``, ``main.py``, a notebook exported to
``.py``); ``advisor diagnose --code FILE`` names one kept elsewhere. Each is read with the standard library's
``ast.parse`` (the tree of the text: nothing in it runs, no module it names is imported), within limits a
training script stays far below:

- at most ``MAX_SCRIPTS`` files of a folder (the ones whose names say they train first), each of at most
  ``MAX_SCRIPT_BYTES`` and ``MAX_SCRIPT_LINES`` lines;
- the text decoded as its encoding declaration (PEP 263) says, UTF-8 by default;
- a text the parser refuses (a syntax error, nesting deeper than it allows, a NUL byte) is a note naming the
  file and the reason; the rest of the diagnosis goes on.

Trees are walked by the extractors without recursion (``ast.walk``), so a deep expression costs time, not the
stack.
"""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from advisor.read.safe import file_problem

MAX_SCRIPTS = 12
MAX_SCRIPT_BYTES = 2 << 20
MAX_SCRIPT_LINES = 20_000
#: bytes of code read from one folder in all (a copy of a whole repository costs no more than this)
MAX_TOTAL_SCRIPT_BYTES = 4 << 20
#: file names that say a script trains (searched in the stem, lower case): read first
TRAINING_WORDS = ("train", "main", "finetune", "fine_tune", "fit", "run", "sft", "dpo", "pretrain")
#: folders of a run whose .py files are not the user's training code
NOT_CODE_DIRS = frozenset({"site-packages", "__pycache__", ".git", "node_modules", "venv", ".venv", "env"})


@dataclass
class ScriptFile:
    """One Python script: its tree and its lines, or why it could not be read."""

    shown: str
    tree: ast.Module | None = None
    lines: list[str] = field(default_factory=list)
    problem: str | None = None
    #: what extractors derived from the tree once (its index), by their own key
    derived: dict[str, object] = field(default_factory=dict, repr=False, compare=False)

    def line(self, lineno: int | None) -> str:
        """The source line ``lineno`` (1-based), stripped; '' when out of range."""
        if lineno is None or not 1 <= lineno <= len(self.lines):
            return ""
        return self.lines[lineno - 1].strip()


def script_candidates(files: list[Path]) -> list[Path]:
    """The .py files of a folder listing worth reading, training scripts first, at most ``MAX_SCRIPTS``."""
    found = [
        rel
        for rel in files
        if rel.suffix.lower() == ".py" and not any(p.lower() in NOT_CODE_DIRS for p in rel.parts[:-1])
    ]

    def order(rel: Path) -> tuple[int, int, str]:
        stem = rel.stem.lower()
        return (0 if any(w in stem for w in TRAINING_WORDS) else 1, len(rel.parts), rel.as_posix())

    return sorted(found, key=order)[:MAX_SCRIPTS]


def read_scripts(candidates: list[tuple[Path, str, bytes | None]]) -> list[ScriptFile]:
    """(path, shown, bytes held in memory or None) -> the scripts read, within MAX_TOTAL_SCRIPT_BYTES in all."""
    out: list[ScriptFile] = []
    left = MAX_TOTAL_SCRIPT_BYTES
    for path, shown, data in candidates:
        size = len(data) if data is not None else _size(path)
        if size > left:
            out.append(
                ScriptFile(
                    shown,
                    problem=f"not read: the scripts before it used the {MAX_TOTAL_SCRIPT_BYTES}-byte read of a run's code",
                )
            )
            continue
        got = read_script(path, shown, data)
        left -= size if got.problem is None or got.lines else 0
        out.append(got)
    return out


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # read_script says why it cannot be read


def read_script(path: Path, shown: str, data: bytes | None = None) -> ScriptFile:
    """The script at ``path`` (or its bytes ``data``) parsed; a ``ScriptFile`` with ``problem`` when it cannot be."""
    if data is None:
        problem = file_problem(path, MAX_SCRIPT_BYTES)
        if problem is not None:
            return ScriptFile(shown, problem=problem)
        try:
            data = path.read_bytes()
        except OSError as exc:
            return ScriptFile(shown, problem=f"cannot be read ({exc.strerror or exc})")
    if len(data) > MAX_SCRIPT_BYTES:
        return ScriptFile(shown, problem=f"{len(data)} bytes, above the {MAX_SCRIPT_BYTES}-byte limit for a script")
    return parse_script(data, shown)


def parse_script(data: bytes, shown: str) -> ScriptFile:
    """Decode and parse script bytes (bounded by the caller)."""
    text, problem = _decode(data)
    if text is None:
        return ScriptFile(shown, problem=problem)
    lines = text.splitlines()
    if len(lines) > MAX_SCRIPT_LINES:
        return ScriptFile(
            shown,
            problem=f"{len(lines)} lines, more than the {MAX_SCRIPT_LINES} read of a script: not read",
        )
    try:
        with warnings.catch_warnings():  # invalid escape sequences and the like: the user's, not ours to print
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=shown)
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        return ScriptFile(shown, lines=lines, problem=f"not valid Python{where} ({exc.msg}): its code was not read")
    except (ValueError, RecursionError, MemoryError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc) or type(exc).__name__
        return ScriptFile(shown, lines=lines, problem=f"cannot be parsed ({reason}): its code was not read")
    return ScriptFile(shown, tree=tree, lines=lines)


def _decode(data: bytes) -> tuple[str | None, str | None]:
    """(text, None), or (None, why) when the bytes are not text in the encoding the script declares."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # bytes that are not UTF-8 without a declaration, an unknown declared encoding
        if "invalid or missing encoding declaration" in str(exc):
            return None, "not UTF-8 text, and no encoding declared (PEP 263): its code was not read"
        return None, f"its encoding cannot be used ({exc.msg}): its code was not read"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        at = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        return None, f"not {encoding} text{at}: its code was not read"
    return text.removeprefix("\ufeff"), None
