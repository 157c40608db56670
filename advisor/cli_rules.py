"""``advisor rules list|show|explain|validate|test|schema``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from advisor.cli_common import chosen_engine
from advisor.errors import EXIT_FOUND, EXIT_OK, UsageError
from advisor.read.safe import shown


def _builtin_id_clashes(rules) -> list:
    """duplicate-id errors for rules whose id a built-in rule (in another file) already has."""
    from advisor.diagnosis import builtin_rules_dir, load_rule_set
    from advisor.errors import Diagnostic

    builtin = {r.id: r for r in load_rule_set()[0]}
    root = builtin_rules_dir().resolve()
    out = []
    for r in rules:
        b = builtin.get(r.id)
        if b is not None and not Path(r.path).resolve().is_relative_to(root):
            out.append(
                Diagnostic(
                    path=r.path,
                    line=1,
                    column=1,
                    code="duplicate-id",
                    rule=r.id,
                    message=f"rule id '{r.id}' is already used by a built-in rule",
                    hint=f"first defined at {b.path}; pick another id (or validate with --only-rules)",
                )
            )
    return out


def _rules_for(args: argparse.Namespace):
    from advisor.diagnosis import load_rule_set

    rules, diags = load_rule_set(getattr(args, "rules", None) or (), getattr(args, "only_rules", False))
    for d in diags:
        print(shown(d.format()), file=sys.stderr)
    return rules


def cmd_rules(args: argparse.Namespace) -> int:
    action = args.rules_action
    if action == "schema":
        import json

        from advisor.facts import FACT_KINDS
        from advisor.rulebase.schema import json_schema

        print(json.dumps(json_schema(FACT_KINDS), indent=2))
        return EXIT_OK
    if action in ("validate", "test"):
        from advisor.rulebase.load import load_rules

        rules, diags = load_rules(args.files)
        if not getattr(args, "only_rules", False):  # diagnose would drop a rule whose id a built-in has
            diags += _builtin_id_clashes(rules)
        for d in diags:
            print(shown(d.format()), file=sys.stderr)
        errors = sum(1 for d in diags if d.severity == "error")
        if action == "validate":
            print(f"{len(rules)} rule(s) valid, {errors} error(s), {len(diags) - errors} warning(s)")
            return EXIT_FOUND if errors else EXIT_OK
        from advisor.rulebase.testing import run_tests

        results = run_tests(rules, engine=chosen_engine(args))
        failed = [r for r in results if not r.passed]
        for r in failed:
            print(shown(f"{r.rule.path}:{r.case.pos[0]}: FAIL {r.test_id}: {r.message}"))
        if args.verbose:
            for r in results:
                if r.passed:
                    print(f"ok {r.test_id}")
        print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
        return EXIT_FOUND if failed or errors else EXIT_OK
    rules = _rules_for(args)
    if action == "list":
        for r in sorted(rules, key=lambda r: (r.concludes, r.id)):
            kind = "cause" if r.cause else "finding"
            print(shown(f"{r.id:45s} {kind} {r.concludes:24s} {r.confidence:+.2f} {r.severity:6s} {r.title}"))
        print(f"{len(rules)} rules", file=sys.stderr)
        return EXIT_OK
    if action in ("show", "explain"):
        match = [r for r in rules if r.id == args.id]
        if not match:
            import difflib

            close = difflib.get_close_matches(args.id, [r.id for r in rules], n=3)
            raise UsageError(f"no rule '{args.id}'" + (f" (did you mean: {', '.join(close)}?)" if close else ""))
        r = match[0]
        if action == "show":
            print(shown(Path(r.path).read_text(encoding="utf-8", errors="replace") if Path(r.path).is_file() else r))
            return EXIT_OK
        print(
            shown(
                f"{r.id}: {r.title}\n  concludes {'cause' if r.cause else 'finding'} {r.concludes}, "
                f"confidence {r.confidence:+.2f}, severity {r.severity}\n"
            )
        )
        for part in ("what", "why", "fix"):
            print(shown(f"{part.upper()}\n  {r.doc.get(part, '')}\n"))
        for ref in r.doc.get("references", []) or []:
            print(shown(f"  see: {ref}"))
        if r.params:
            print(shown("PARAMS\n" + "\n".join(f"  {k} = {v}" for k, v in r.params.items())))
        return EXIT_OK
    raise UsageError(f"unknown rules action '{action}'")
