"""An index of one script's syntax tree: names, what they were bound to, functions, loops; no judgement.

Everything is found with ``ast.walk`` (no recursion), once per script. Names are resolved the way a reader of
the script would: ``criterion = nn.CrossEntropyLoss()`` makes ``criterion(...)`` a call of a
``CrossEntropyLoss``; ``self.softmax = nn.Softmax(dim=1)`` makes ``self.softmax(x)`` a softmax;
``out = model(x)`` followed by ``loss = criterion(out, y)`` lets a check see what ``out`` holds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from advisor.read.scripts import ScriptFile

#: how many calls deep the body of a loop follows functions of the same script (train_one_epoch -> step)
INLINE_DEPTH = 3
#: how many assignments back a name is followed (``probs = softmax(out)``; ``loss = crit(probs, y)``)
FOLLOW_DEPTH = 3

LOOPS = (ast.For, ast.AsyncFor, ast.While)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def dotted(node: ast.AST | None) -> str:
    """``torch.nn.functional.softmax`` for the expression that names it; a call is ``f()``; anything else ``?``."""
    parts: list[str] = []
    while node is not None:
        if isinstance(node, ast.Name):
            parts.append(node.id)
            break
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            parts.append("()")
            node = node.func
        elif isinstance(node, ast.Subscript):
            parts.append("[]")
            node = node.value
        else:
            parts.append("?")
            break
    return ".".join(reversed(parts)).replace(".()", "()").replace(".[]", "[]")


def last_name(node: ast.AST | None) -> str:
    """The last name of a dotted expression (``F.softmax`` -> ``softmax``), '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def constant(node: ast.AST | None) -> object:
    """The value of a literal (a number, a string, True/False/None, a negated number); ``MISSING`` otherwise."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    return MISSING


MISSING = object()


def names_in(node: ast.AST) -> set[str]:
    """Every name and attribute name in an expression, lower case (``correct``, ``total``, ``dataset``)."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id.lower())
        elif isinstance(n, ast.Attribute):
            out.add(n.attr.lower())
    return out


@dataclass
class CodeIndex:
    """One script's tree, indexed once."""

    tree: ast.Module
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = field(default_factory=dict)
    #: name (``criterion``, ``self.criterion``) -> every value assigned to it, in line order
    bindings: dict[str, list[ast.expr]] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    loops: list[ast.For | ast.AsyncFor | ast.While] = field(default_factory=list)
    calls: list[ast.Call] = field(default_factory=list)
    parent: dict[int, ast.AST] = field(default_factory=dict)

    @classmethod
    def build(cls, tree: ast.Module) -> "CodeIndex":
        index = cls(tree)
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                index.parent[id(child)] = node
            if isinstance(node, FUNCTIONS):
                index.functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.ClassDef):
                index.classes.setdefault(node.name, node)
            elif isinstance(node, LOOPS):
                index.loops.append(node)
            elif isinstance(node, ast.Call):
                index.calls.append(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    key = dotted(target)
                    if "?" not in key and "()" not in key and "[]" not in key:
                        index.bindings.setdefault(key, []).append(node.value)
        for values in index.bindings.values():
            values.sort(key=lambda v: (v.lineno, v.col_offset))
        index.calls.sort(key=lambda c: (c.lineno, c.col_offset))
        index.loops.sort(key=lambda n: (n.lineno, n.col_offset))
        return index

    # -- what a name or a call is -------------------------------------------------------------------------
    def constructor(self, name: str) -> str:
        """The class or function a name was bound to (``criterion = nn.CrossEntropyLoss()`` -> ``CrossEntropyLoss``;
        ``loss_fn = F.cross_entropy`` -> ``cross_entropy``); '' when unknown."""
        for value in reversed(self.bindings.get(name, [])):
            if isinstance(value, ast.Call):
                return last_name(value.func)
            if isinstance(value, (ast.Name, ast.Attribute)):
                return last_name(value)
        return ""

    def callee(self, call: ast.Call) -> str:
        """What a call calls: the constructor of the instance it calls (``criterion(...)``), else its own last name
        (``F.cross_entropy(...)`` -> ``cross_entropy``)."""
        key = dotted(call.func)
        return self.constructor(key) or last_name(call.func)

    def enclosing(self, node: ast.AST, kinds: tuple[type, ...]) -> ast.AST | None:
        """The nearest enclosing node of one of ``kinds``."""
        cur = self.parent.get(id(node))
        while cur is not None and not isinstance(cur, kinds):
            cur = self.parent.get(id(cur))
        return cur

    def value_before(self, name: str, line: int, scope: ast.AST | None) -> ast.expr | None:
        """The value last assigned to ``name`` before ``line`` inside ``scope`` (a function), or anywhere."""
        best = None
        for value in self.bindings.get(name, []):
            if value.lineno >= line:
                break
            if scope is None or self._inside(value, scope):
                best = value
        return best

    def _inside(self, node: ast.AST, scope: ast.AST) -> bool:
        cur: ast.AST | None = node
        while cur is not None:
            if cur is scope:
                return True
            cur = self.parent.get(id(cur))
        return False

    def resolve(self, expr: ast.expr, depth: int = FOLLOW_DEPTH) -> ast.expr:
        """``expr`` itself, or, for a plain name, the value it was last assigned before this use (followed up to
        ``depth`` names back)."""
        scope = self.enclosing(expr, FUNCTIONS)
        while depth > 0 and isinstance(expr, ast.Name):
            value = self.value_before(expr.id, expr.lineno, scope)
            if value is None:
                break
            expr = value
            depth -= 1
        return expr

    # -- the body a loop runs -----------------------------------------------------------------------------
    def loop_nodes(self, loop: ast.AST) -> Iterator[ast.AST]:
        """Every node the loop's body runs: its own, and those of the script's functions it calls (by name,
        ``INLINE_DEPTH`` calls deep). The loop header (what it iterates over) is left out."""
        if isinstance(loop, (*LOOPS, *FUNCTIONS)):
            yield from self.body_nodes(list(loop.body))
        elif isinstance(loop, ast.stmt):
            yield from self.body_nodes([loop])

    def body_nodes(self, body: list[ast.stmt]) -> Iterator[ast.AST]:
        seen: set[int] = set()
        pending: list[tuple[list[ast.stmt], int]] = [(body, 0)]
        while pending:
            stmts, depth = pending.pop()
            for stmt in stmts:
                for node in ast.walk(stmt):
                    yield node
                    if depth < INLINE_DEPTH and isinstance(node, ast.Call):
                        for fn in self.functions.get(last_name(node.func), []):
                            if id(fn) not in seen:
                                seen.add(id(fn))
                                pending.append((list(fn.body), depth + 1))


def index_of(script: ScriptFile) -> CodeIndex | None:
    """The script's index, built once and kept with it (None when the script was not parsed)."""
    if script.tree is None:
        return None
    index = script.derived.get("index")
    if not isinstance(index, CodeIndex):
        index = script.derived["index"] = CodeIndex.build(script.tree)
    return index
