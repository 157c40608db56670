"""``advisor diagnose RUN RUN...``: several runs diagnosed one by one, summed up in one table."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from advisor.cli_common import (
    check_output,
    chosen_engine,
    diagnose_options,
    format_from_path,
    long_lived_imports,
    parse_assignments,
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
    runner = None
    if options.get("op_compare.scheduler"):  # one cluster for every run of the sweep
        from advisor.compare.dask_runner import DaskRunner, DaskUnavailable

        try:
            runner = DaskRunner(str(options.pop("op_compare.scheduler")), None)
        except DaskUnavailable as exc:
            raise UsageError(f"--scheduler: {exc}") from None
    try:
        return _sweep_runs(args, runs, fmt, options, engine, params, runner)
    finally:
        if runner is not None:
            runner.close()


def _sweep_runs(
    args: argparse.Namespace, runs: list[str], fmt: str, options: dict, engine: str, params: dict, runner: Any
) -> int:
    import json

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
    if fmt == "json":
        text = json.dumps({"runs": rows}, indent=1) + "\n"
    else:
        head = ("run", "shows", "top cause", "confidence")
        table = [
            (
                r["run"],
                r.get("error") and f"error: {r['error']}" or r["symptom"] or "no symptom",
                r["top_cause"] or "-",
                f"{100 * r['confidence']:.0f}%" if r["confidence"] is not None else "-",
            )
            for r in rows
        ]
        if fmt == "md":
            esc = [tuple(c.replace("|", "\\|") for c in t) for t in table]
            text = "| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n"
            text += "".join("| " + " | ".join(t) + " |\n" for t in esc)
        else:
            width = max(len(head[0]), *(len(t[0]) for t in table))  # run names aligned; what it shows last
            text = "".join(f"{t[0]:<{width}}  {t[3]:>10}  {t[2]:<26}  {t[1]}\n" for t in [head, *table])
        text = shown(text)
    write_report(text, args.output)
    if args.output and not args.quiet:
        print(f"advisor: wrote {args.output} ({len(rows)} runs)", file=sys.stderr)
    if failed:
        return EXIT_USAGE
    return EXIT_FOUND if found else EXIT_OK
