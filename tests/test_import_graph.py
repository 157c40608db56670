"""The package's import graph (issue 52): no import cycle, lazy imports included, and no private name imported
from another module beyond a short list that says why.

Read from the source with ``ast`` (nothing is imported): every ``import``/``from ... import`` of an advisor module,
at module level or inside a function, is an edge; an import under ``if TYPE_CHECKING:`` is not (it never runs),
but a private name imported there still counts. A new cycle or a new private import fails here with the modules
that make it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "advisor"

#: private names another module may import, each with why it is not a public name of its own
PRIVATE_IMPORTS_ALLOWED: dict[tuple[str, str, str], str] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                inside.update(id(n) for n in ast.walk(stmt))
    return inside


def _graph() -> tuple[dict[str, set[str]], list[tuple[str, str, str]]]:
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    private: list[tuple[str, str, str]] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = _type_checking_nodes(tree)
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                if id(node) not in typing_only:
                    edges[name].update(a.name for a in node.names if a.name in modules)
                continue
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("advisor"):
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in modules:
                    if id(node) not in typing_only:
                        edges[name].add(full)
                elif target in modules:
                    if id(node) not in typing_only:
                        edges[name].add(target)
                    if alias.name.startswith("_") and not alias.name.startswith("__") and target != name:
                        private.append((name, target, alias.name))
    return edges, private


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return groups


def test_no_import_cycle_lazy_imports_included():
    edges, _ = _graph()
    assert _cycles(edges) == []


def test_no_private_name_is_imported_from_another_module():
    _, private = _graph()
    unexplained = [p for p in private if p not in PRIVATE_IMPORTS_ALLOWED]
    assert unexplained == []
    assert len(PRIVATE_IMPORTS_ALLOWED) <= 10


def test_the_checks_see_a_cycle_and_a_private_import():
    """The two checks can fail: a made-up pair of modules that import each other (one lazily) is a cycle, and a
    private name imported across them is found."""
    edges = {"a": {"b"}, "b": {"a"}, "c": set()}
    assert _cycles(edges) == [["a", "b"]]
    tree = ast.parse("if TYPE_CHECKING:\n    from advisor.x import y\nfrom advisor.z import _w\n")
    hidden = _type_checking_nodes(tree)
    kinds = [(isinstance(n, ast.ImportFrom) and id(n) in hidden) for n in tree.body[0].body + tree.body[1:]]
    assert kinds == [True, False]
