"""Names the package shares are defined in one module and imported elsewhere: copies drift (issue 30)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "advisor"
SHARED = ("Side", "SEVERITIES", "EXIT_OK", "EXIT_FOUND", "EXIT_USAGE", "compare_arrays", "SYMPTOM_IDS")


def _top_level_definitions() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    names += [e.id for e in ast.walk(t) if isinstance(e, ast.Name)]
            for name in names:
                where[name].append(str(path.relative_to(PACKAGE)))
    return where


def test_shared_names_are_defined_once():
    where = _top_level_definitions()
    twice = {name: where[name] for name in SHARED if len(where[name]) != 1}
    assert not twice, twice


def test_the_walk_reads_tuple_assignments():
    """The walk finds names assigned together (EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2), so a copy of such a line
    would be counted."""
    where = _top_level_definitions()
    assert where["EXIT_OK"] == ["errors.py"] and where["EXIT_USAGE"] == ["errors.py"]
