"""``advisor diagnose RUN RUN...``: several runs diagnosed one by one, summed up in one table."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from advisor.cli_common import (
    check_output,
    chosen_engine,
    cluster_runner,
    diagnose_options,
    format_from_path,
    long_lived_imports,
    parse_assignments,
    print_notes,
    write_report,
)
from advisor.errors import EXIT_FOUND, EXIT_OK, EXIT_USAGE, UsageError
from advisor.read.safe import shown
from advisor.rulebase.schema import SEVERITIES


def diagnose_many(args: argparse.Namespace) -> int:
    """Several RUNs (a sweep, or runs to triage): each diagnosed as ``advisor diagnose RUN`` would (same rules,
    engine and options, the same --baseline for all), then one table: run, what it shows, its top cause and
    that cause's confidence. A run that cannot be diagnosed gets its error in the table; the others go on.
    With --scheduler, one Dask cluster serves every run."""
    with long_lived_imports():
        import advisor.diagnosis  # noqa: F401 (imported once, out of the collector's reach)

    runs: list[str] = args.run
    if "-" in runs:
        raise UsageError("standard input (-) can only be diagnosed alone")
    fmt = format_from_path(args.output, args.format)
    if fmt == "html":
        raise UsageError("several RUNs are summed up in a table: use text, md or json (diagnose one RUN for HTML)")
    check_output(args.output, [(r, "run") for r in runs] + [(args.baseline, "baseline")])
    if not 0.0 <= args.min_confidence <= 1.0:
        raise UsageError(f"--min-confidence must be between 0 and 1, got {args.min_confidence}")
    options = diagnose_options(args)
    engine, params = chosen_engine(args), parse_assignments(args.param)
    runner = cluster_runner(args.scheduler, trusted=args.trust_scheduler)  # one cluster for every run
    try:
        return _sweep_runs(args, runs, fmt, options, engine, params, runner)
    finally:
        if runner is not None:
            print_notes(runner)
            runner.close()


def _sweep_runs(
    args: argparse.Namespace, runs: list[str], fmt: str, options: dict, engine: str, params: dict, runner: Any
) -> int:
    from advisor.diagnosis import diagnose

    rows: list[dict] = []
    failed = found = False
    for run in runs:
        row: dict = {"run": run, "verdict": None, "symptom": None, "top_cause": None, "confidence": None}
        try:
            report = diagnose(
                run,
                baseline=args.baseline,
                rules=args.rules or (),
                only_rules=args.only_rules,
                params=params,
                options=options,
                engine=engine,
                runner=runner,
            )
        except UsageError as exc:
            row["error"] = str(exc)
            failed = True
            rows.append(row)
            continue
        for w in report.warnings:
            print(shown(f"{run}: {w}"), file=sys.stderr)
        failed = failed or bool(report.rule_errors)
        s = report.summary
        top = report.causes[0] if report.causes else None
        row.update(
            verdict=s.verdict,
            symptom=s.symptoms[0].text
            if s.symptoms
            else ("trains well" if s.symptom_status == "trains_well" else None),
            top_cause=top.id if top else None,
            confidence=round(top.confidence, 3) if top else None,
        )
        rows.append(row)
        if args.fail_on:
            level = SEVERITIES.index(args.fail_on)
            found = found or any(SEVERITIES.index(c.severity) >= level for c in report.found(args.min_confidence))
    write_report(sweep_text(rows, fmt), args.output)
    if args.output and not args.quiet:
        print(f"advisor: wrote {args.output} ({len(rows)} runs)", file=sys.stderr)
    if failed:
        return EXIT_USAGE
    return EXIT_FOUND if found else EXIT_OK


#: the sweep table's columns
HEAD = ("run", "shows", "top cause", "confidence")


def sweep_text(rows: list[dict], fmt: str) -> str:
    """The sweep's table in ``fmt`` (json, md or text). Every cell may come from the run (its folder name, an
    error naming a file): JSON escapes it as JSON does; Markdown escapes link, image and HTML syntax and table
    breaks (``md_escape``); text shows control characters and newlines as ``\\xNN``."""
    if fmt == "json":
        import json

        return json.dumps({"runs": rows}, indent=1) + "\n"
    table = [_cells(r) for r in rows]
    return _markdown(table) if fmt == "md" else _text(table)


def _cells(row: dict) -> tuple[str, str, str, str]:
    """One run's cells: run, what it shows, its top cause, that cause's confidence."""
    shows = row.get("error") and f"error: {row['error']}" or row["symptom"] or "no symptom"
    confidence = f"{100 * row['confidence']:.0f}%" if row["confidence"] is not None else "-"
    return str(row["run"]), str(shows), str(row["top_cause"] or "-"), confidence


def _markdown(table: list[tuple[str, str, str, str]]) -> str:
    from advisor.report.render import md_escape

    text = "| " + " | ".join(HEAD) + " |\n|" + "---|" * len(HEAD) + "\n"
    text += "".join("| " + " | ".join(md_escape(c) for c in t) + " |\n" for t in table)
    return shown(text)


def _text(table: list[tuple[str, str, str, str]]) -> str:
    """Run names aligned; what the run shows last. Each cell on one line (a newline in a name is shown)."""
    lines = [tuple(shown(c, newlines=False) for c in t) for t in [HEAD, *table]]
    width = max(len(t[0]) for t in lines)
    return "".join(f"{t[0]:<{width}}  {t[3]:>10}  {t[2]:<26}  {t[1]}\n" for t in lines)
