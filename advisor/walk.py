"""``os.walk`` without recursion: Python 3.11's walk recurses once per folder level, so a run folder nested a few
thousand levels deep raises RecursionError. Same order (top-down), same in-place pruning of ``dirnames``, links
to folders never followed."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator


def walk(
    top: str | os.PathLike[str], onerror: Callable[[OSError], None] | None = None
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top, followlinks=False, onerror=onerror)``, iteratively."""
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        dirs: list[str] = []
        files: list[str] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    (dirs if is_dir else files).append(entry.name)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        yield folder, dirs, files
        stack.extend(os.path.join(folder, d) for d in reversed(dirs))  # the first listed is walked next
