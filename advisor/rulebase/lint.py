"""House rules of the built-in rule base, beyond what every rule file must satisfy.

A built-in rule lives at ``rules/<stage>/<id>.yaml``: its folder is the id of
the stage of the tuning routine that looks at its evidence (advisor/stages.py)
and its file is named after its id. ``python -m advisor.rulebase.lint`` prints
the problems; tests/rulebase/test_lint.py keeps the built-in rules clean.
"""

from __future__ import annotations

import sys
from pathlib import Path

from advisor.errors import Diagnostic
from advisor.rulebase import builtin_rules_dir
from advisor.rulebase.schema import Rule
from advisor.stages import STAGE_IDS


def _problem(r: Rule, shown: str, message: str, **more: str) -> Diagnostic:
    return Diagnostic(path=shown, line=r.pos[0], column=r.pos[1], code="rule-lint", rule=r.id, message=message, **more)


def lint(rules: list[Rule], rules_dir: Path) -> list[Diagnostic]:
    """Problems of built-in rules loaded from ``rules_dir`` (``rules/``)."""
    out = []
    root = rules_dir.resolve()
    for r in rules:
        path = Path(r.path)
        full = (path if path.is_absolute() else root.parent / path).resolve()
        shown = full.relative_to(root.parent).as_posix() if full.is_relative_to(root.parent) else r.path

        if full.stem != r.id:
            out.append(
                _problem(r, shown, f"file of rule '{r.id}' is named '{full.name}'", hint=f"rename it to {r.id}.yaml")
            )
        rel = full.relative_to(root) if full.is_relative_to(root) else Path(full.name)
        stage = rel.parts[0] if len(rel.parts) == 2 else None
        if stage not in STAGE_IDS:
            out.append(
                _problem(
                    r,
                    shown,
                    f"rule '{r.id}' is not in a stage folder (rules/<stage>/{r.id}.yaml)",
                    expected="one of: " + ", ".join(STAGE_IDS),
                    hint="move it to the folder of the stage that looks at its evidence",
                )
            )
    return out


def main() -> int:
    from advisor.rulebase.load import load_rules

    rules_dir = builtin_rules_dir()
    rules, diags = load_rules([rules_dir], display_root=rules_dir.parent, trusted=True)
    problems = diags + lint(rules, rules_dir)
    for d in problems:
        print(d.format(), file=sys.stderr)
    print(f"{len(rules)} rules, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
