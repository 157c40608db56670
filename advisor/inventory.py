"""Walks a run folder once and lists what it holds. Read-only.

``read_run`` (advisor/read/run.py) asks the ``RunFolder`` for candidate
files (by name pattern or predicate) and reads them; which of them the
extractors could use, and why not, they report as ``InputRecord`` entries. Nothing outside the folder is ever opened: symbolic
links that lead outside are skipped, and ``RunFolder.resolve`` refuses
relative paths that escape it (a manifest pointing at ``../../etc/passwd``).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Literal, cast

from pydantic import BaseModel, Field

from advisor.walk import walk
from advisor.facts.base import Side

#: folders never descended into (caches, VCS metadata, virtual environments)
SKIP_DIRS = {".git", "__pycache__", ".ipynb_checkpoints", "node_modules", ".venv", "venv", ".mypy_cache"}


class InputRecord(BaseModel):
    """One artifact of the run: what it was taken for and whether it could be used."""

    path: str = Field(description="path relative to the run (or baseline) folder")
    kind: str = Field(description="what the file was read as: log, metrics, hparams, data, dump, tensors, ...")
    status: Literal["used", "unreadable", "ignored"] = "used"
    why: str | None = Field(default=None, description="for unreadable/ignored: the reason, naming the problem")
    side: Side = "run"

    @classmethod
    def internal(cls, where: str, exc: BaseException, side: Side = "run") -> "InputRecord":
        """A step of ours (``where``: '<reader logs>', '<extractor model>') that failed on a bug: named with
        the exception and the line that raised it, so the rest of the diagnosis goes on and the user can
        report it."""
        import traceback

        last = traceback.extract_tb(exc.__traceback__)[-1]
        return cls(
            path=where,
            kind="internal",
            status="unreadable",
            side=side,
            why=f"internal error {type(exc).__name__}: {exc} (at {last.filename.rsplit('/', 1)[-1]}:{last.lineno})",
        )


def output_problem(out: str | os.PathLike, folders: Iterable[tuple[str | os.PathLike | None, str]]) -> str | None:
    """Why a report may not be written to ``out`` (None: it may): its folder is missing, or it lies
    inside one of ``folders`` ((path, what) pairs), which advisor never writes to."""
    from advisor.read.safe import resolve

    if "\x00" in os.fspath(out) or resolve(out) is None:
        return "is not a usable path (a NUL byte, or a symbolic-link loop)"
    target = Path(out).resolve()
    if Path(out).is_dir():
        return "is a folder; name a file to write the report to"
    if not target.parent.is_dir():
        return f"the folder '{Path(out).parent}' does not exist"
    if not os.access(target.parent, os.W_OK):
        return f"the folder '{Path(out).parent}' is not writable"
    for folder, what in folders:
        if folder and folder != "-" and Path(folder).is_file() and target == Path(folder).resolve():
            return f"is the {what} log itself; advisor never writes there"
        if folder and Path(folder).is_dir() and target.is_relative_to(Path(folder).resolve()):
            return (
                f"is inside the {what} folder; advisor never writes there (a report left there would "
                "also be read back as an input next time)"
            )
    # by file identity, not by path: a hard link to a run file, or a folder that is the run's under another
    # path (a bind mount, a second name of the same directory)
    out_id = _identity(target)
    parent_id = _identity(target.parent)
    for folder, what in folders:
        if not folder or folder == "-":
            continue
        files, dirs = _identities(Path(folder))
        if out_id is not None and out_id in files:
            return (
                f"is a file of the {what} (the same file under another name: a hard link); advisor never writes there"
            )
        if parent_id is not None and parent_id in dirs:
            return f"is in a folder of the {what} reached by another path (a bind mount or link); advisor never writes there"
    return None


#: entries looked at when checking -o by file identity (a run folder holds far fewer)
MAX_IDENTITY_ENTRIES = 200_000


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _identities(root: Path) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """(device, inode) of the files and of the folders of a run (a single-file run: that file and no folder)."""
    files: set[tuple[int, int]] = set()
    dirs: set[tuple[int, int]] = set()
    if root.is_file():
        got = _identity(root)
        return ({got} if got else set()), dirs
    seen = 0
    for dirpath, dirnames, filenames in walk(root):
        got = _identity(Path(dirpath))
        if got:
            dirs.add(got)
        for name in filenames:
            got = _identity(Path(dirpath) / name)
            if got:
                files.add(got)
        seen += len(filenames) + len(dirnames)
        if seen > MAX_IDENTITY_ENTRIES:
            break
    return files, dirs


class OutsideRunFolder(ValueError):
    """A path that would leave the run folder."""


@dataclass
class RunFolder:
    """A run (or baseline) folder: its root and the files below it."""

    root: Path
    side: Side = "run"
    files: list[Path] = field(default_factory=list)  # relative paths, sorted
    skipped: list[InputRecord] = field(default_factory=list)  # links leading outside etc.
    #: RUN given as one file or as standard input: every file is a log candidate, whatever its name
    single: bool = False
    #: files held in memory (standard input), by relative name; never written anywhere
    memory: dict[str, bytes] = field(default_factory=dict)
    #: training scripts named with --code (read wherever they lie; nothing else of their folder is read)
    code_files: list[Path] = field(default_factory=list)

    @classmethod
    def open(cls, arg: str | os.PathLike, side: Side = "run", stdin: bytes | None = None) -> "RunFolder":
        """A folder, one file (``train.log``) or ``-`` (``stdin``: the bytes read from standard input)."""
        if str(arg) == "-" and stdin is not None:
            from advisor.read.stdin import STDIN_NAME

            return cls(root=Path("-"), side=side, files=[Path(STDIN_NAME)], single=True, memory={STDIN_NAME: stdin})
        path = Path(arg)
        if path.is_file():
            return cls(root=path.parent, side=side, files=[Path(path.name)], single=True)
        return cls.scan(path, side)

    @classmethod
    def scan(cls, root: str | os.PathLike, side: Side = "run") -> "RunFolder":
        root = Path(root)
        real_root = root.resolve()
        files: list[Path] = []
        skipped: list[InputRecord] = []
        from advisor.read.safe import file_problem, resolve

        def unlistable(exc: OSError) -> None:  # a sub-folder that cannot be listed is named, not dropped
            where = Path(exc.filename or "?")
            shown = where.relative_to(root).as_posix() if where.is_relative_to(root) else where.as_posix()
            skipped.append(
                InputRecord(
                    path=shown + "/",
                    kind="folder",
                    status="unreadable",
                    side=side,
                    why=f"folder cannot be listed ({exc.strerror or exc}); its files were not read",
                )
            )

        for dirpath, dirnames, filenames in walk(root, onerror=unlistable):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                full = Path(dirpath) / name
                rel = full.relative_to(root)
                if full.is_symlink():
                    target = resolve(full)
                    if target is None:
                        skipped.append(
                            InputRecord(
                                path=rel.as_posix(),
                                kind="link",
                                status="unreadable",
                                why="a symbolic-link loop; not read",
                                side=side,
                            )
                        )
                        continue
                    if not target.is_relative_to(real_root):
                        skipped.append(
                            InputRecord(
                                path=rel.as_posix(),
                                kind="link",
                                status="ignored",
                                why="symbolic link to a file outside the run folder",
                                side=side,
                            )
                        )
                        continue
                problem = file_problem(full)
                if problem:
                    skipped.append(
                        InputRecord(
                            path=rel.as_posix(),
                            kind="other",
                            status="unreadable",
                            why=f"{problem}; not read",
                            side=side,
                        )
                    )
                    continue
                if full.is_file():
                    files.append(rel)
        files.sort(key=lambda p: p.as_posix())
        return cls(root=root, side=side, files=files, skipped=skipped)

    # -- lookups ---------------------------------------------------------
    def rel(self, path: Path) -> str:
        """The path as shown to the user: relative to the run folder, with '/'."""
        if self.memory and getattr(path, "name", None) in self.memory:
            return path.name
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return Path(path).as_posix()

    def abs(self, rel: Path | str) -> Path:
        if self.memory and str(rel) in self.memory:
            from advisor.read.stdin import MemoryFile

            return cast(Path, MemoryFile(str(rel), self.memory[str(rel)]))  # has the Path methods readers use
        return self.root / rel

    def find(self, predicate: Callable[[Path], bool]) -> list[Path]:
        """Relative paths of the files for which ``predicate(rel_path)`` holds."""
        return [p for p in self.files if predicate(p)]

    def glob(self, patterns: Iterable[str]) -> list[Path]:
        """Files whose *name* matches one of the shell patterns (case-insensitive)."""
        pats = [p.lower() for p in patterns]
        return self.find(lambda p: any(fnmatch.fnmatch(p.name.lower(), pat) for pat in pats))

    def resolve(self, rel: str | os.PathLike, base: Path | None = None) -> Path:
        """Absolute path of ``rel`` (relative to ``base`` or the root); refuses escapes."""
        start = self.root if base is None else base
        try:
            candidate = (start / rel).resolve()
        except (RuntimeError, OSError, ValueError):  # a link loop, a NUL byte in the name
            raise OutsideRunFolder(f"'{rel}' is a symbolic-link loop or an impossible name") from None
        if not candidate.is_relative_to(self.root.resolve()):
            raise OutsideRunFolder(f"'{rel}' points outside the run folder")
        return candidate
