"""Command-line interface: argument parsing only, one function per subcommand.

Heavy modules (numpy, pydantic, durable-rules) are imported inside the
subcommands so that ``advisor --help`` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from advisor import cli_common
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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(EXIT_USAGE, f"advisor: error: {message} (see: {self.prog} --help)\n")


# ---------------------------------------------------------------------------- subcommands
def _sweep(args: argparse.Namespace) -> int:
    from advisor.cli_sweep import diagnose_many

    return diagnose_many(args)


def _rules(args: argparse.Namespace) -> int:
    from advisor.cli_rules import cmd_rules

    return cmd_rules(args)


def cmd_diagnose(args: argparse.Namespace) -> int:
    if isinstance(args.run, list):
        if len(args.run) > 1:
            return _sweep(args)
        args.run = args.run[0]
    with long_lived_imports():
        from advisor.diagnosis import diagnose
        from advisor.report.render import render

    fmt = format_from_path(args.output, args.format)
    check_output(args.output, [(args.run, "run"), (args.baseline, "baseline")])
    if not 0.0 <= args.min_confidence <= 1.0:
        raise UsageError(f"--min-confidence must be between 0 and 1, got {args.min_confidence}")
    if (
        args.baseline
        and Path(args.baseline).is_dir()
        and Path(args.run).is_dir()
        and Path(args.baseline).resolve() == Path(args.run).resolve()
    ):
        raise UsageError("--baseline is the run folder itself: give the benchmark run's folder")
    if (
        args.baseline
        and Path(args.baseline).is_file()
        and Path(args.run).is_file()
        and Path(args.baseline).resolve() == Path(args.run).resolve()
    ):
        raise UsageError("--baseline is the run log itself: give the benchmark run's log or folder")
    if args.only_rules and not args.rules:
        raise UsageError("--only-rules without --rules leaves no rule to run")
    for path in args.rules or ():
        if not Path(path).exists():
            raise UsageError(f"--rules '{path}': no such rule file or folder")
    options = diagnose_options(args)
    engine = chosen_engine(args)
    runner = cluster_runner(args.scheduler, trusted=args.trust_scheduler)
    try:
        report = diagnose(
            args.run,
            baseline=args.baseline,
            rules=args.rules or (),
            only_rules=args.only_rules,
            params=parse_assignments(args.param),
            options=options,
            engine=engine,
            runner=runner,
            code=args.code or (),
        )
    finally:
        if runner is not None:
            print_notes(runner)
            runner.close()
    for w in report.warnings:
        print(shown(w), file=sys.stderr)
    color = fmt == "text" and not args.output and sys.stdout.isatty()
    write_report(render(report, fmt, color=color), args.output)
    if args.output and not args.quiet:
        print(f"advisor: wrote {args.output} ({report.summary.headline})", file=sys.stderr)
    if report.rule_errors:  # a broken rule of the user's must not pass a --fail-on gate silently
        print(
            f"advisor: error: {report.rule_errors} error(s) in the --rules files (above); those rules did not run",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.fail_on:
        level = SEVERITIES.index(args.fail_on)
        hits = [c for c in report.found(args.min_confidence) if SEVERITIES.index(c.severity) >= level]
        if hits:
            return EXIT_FOUND
    return EXIT_OK


def _finite(v):
    """``v`` with NaN as None and infinities as the strings 'inf'/'-inf' (JSON has neither)."""
    import math

    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def cmd_facts(args: argparse.Namespace) -> int:
    if args.kinds:
        from advisor.facts import FACT_KINDS

        for kind, model in FACT_KINDS.items():
            print(f"{kind}: {model.doc}")
            for name, f in model.model_fields.items():
                if name in ("kind", "source"):
                    continue
                print(f"    {name}: {f.description or ''}")
        return EXIT_OK
    if not args.run:
        raise UsageError("facts needs RUN (or --kinds)")
    import json

    from advisor.diagnosis import read_pair, threshold_problems
    from advisor.extract import extract_facts

    options = parse_assignments(args.threshold, "--threshold")
    for w in threshold_problems(options):
        print(w, file=sys.stderr)
    pair, notes = read_pair(args.run, args.baseline, options)
    for w in notes:
        print(shown(w), file=sys.stderr)
    ex = extract_facts(pair)
    if args.format == "json":  # strict JSON: NaN -> null, +-inf -> "inf"/"-inf"
        from advisor.report.render import escaped

        print(
            json.dumps(
                escaped(
                    _finite(
                        {
                            "facts": [f.model_dump(mode="json") for f in ex.facts],
                            "inputs": [i.model_dump(mode="json") for i in ex.inputs],
                        }
                    )
                ),
                indent=2,
                allow_nan=False,
                default=str,
            )
        )
        return EXIT_OK
    for f in ex.facts:
        fields = f.model_dump(mode="json", exclude={"kind", "source", "side"}, exclude_none=True)
        where = f" @ {f.source.cite()}" if f.source else ""
        side = " (baseline)" if f.side == "baseline" else ""
        print(shown(f"{f.kind}{side}: " + ", ".join(f"{k}={v}" for k, v in fields.items()) + where))
    for i in ex.inputs:
        if i.status != "used":
            print(shown(f"{'baseline/' if i.side == 'baseline' else ''}{i.path}: {i.status}: {i.why}"), file=sys.stderr)
    if not ex.facts:
        print("no facts: nothing the extractors could read was found", file=sys.stderr)
    return EXIT_OK


def cmd_watch(args: argparse.Namespace) -> int:
    from advisor.watch import RunGone, level, watch

    try:
        alert = level(args.alert)
        exit_on = level(args.exit_on) if args.exit_on else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not Path(args.run).is_dir():
        raise UsageError(f"RUN '{args.run}' is not a folder")
    if args.interval <= 0:
        raise UsageError(f"--interval must be above 0, got {args.interval}")

    def say(alert_) -> None:
        print(alert_.line(), flush=True)

    params, options = parse_assignments(args.param), parse_assignments(args.threshold, "--threshold")
    try:
        return watch(
            args.run,
            alert=alert,
            exit_on=exit_on,
            once=args.once,
            interval=args.interval,
            idle_exit=args.idle_exit,
            on_alert=say,
            rules=args.rules or (),
            params=params,
            options=options,
        )
    except KeyboardInterrupt:
        return EXIT_OK
    except RunGone as exc:
        raise UsageError(str(exc)) from None


# ---------------------------------------------------------------------------- parser
#: the rule engine back-ends (advisor/rulebase/backends.py; listed here so --help does not import it)
ENGINE_CHOICES = ("auto", "durable", "python")
ENGINE_HELP = (
    "rule engine: python (built-in matcher, any Python; the default, also 'auto') or durable (durable-rules, "
    "Python 3.10-3.12; env ADVISOR_ENGINE)"
)


def build_parser() -> argparse.ArgumentParser:
    from advisor import __version__

    p = _Parser(prog="advisor", description="Tells you why a training run is not accurate, and what to do about it.")
    p.add_argument("--version", action="version", version=f"advisor {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    d = sub.add_parser(
        "diagnose",
        help="diagnose a run folder (optionally against a baseline run)",
        description="Diagnose RUN: read what it wrote, infer likely causes, print a ranked report.",
    )
    d.add_argument(
        "run",
        metavar="RUN",
        nargs="+",
        help="the run folder, one log file, or - for a log on standard input (read-only); several RUNs (a sweep) "
        "are each diagnosed and summed up in one table: run, symptom, top cause, confidence",
    )
    d.add_argument("--baseline", "-b", metavar="DIR", help="the benchmark run's folder")
    d.add_argument(
        "--code",
        action="append",
        metavar="FILE",
        help="the training script, when it is not in the run folder (repeatable; read, never run: docs/code-checks.md)",
    )
    d.add_argument(
        "--baseline-kind",
        choices=("auto", "rerun", "port"),
        default="auto",
        help="rerun: the baseline is the same configuration run again (dump differences are random "
        "errors); port: another device, framework or build (differences are accuracy); auto "
        "(default): decided from the dumps",
    )
    d.add_argument(
        "--format", "-f", choices=("text", "json", "md", "html"), help="output format (default: from -o, else text)"
    )
    d.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE (.html, .json, .md, .txt)")
    d.add_argument("--rules", action="append", metavar="FILE_OR_DIR", help="extra YAML rules (repeatable)")
    d.add_argument("--only-rules", action="store_true", help="use only the --rules given, not the built-in rules")
    d.add_argument(
        "--param", action="append", metavar="RULE.PARAM=VALUE", help="override a rule parameter (repeatable)"
    )
    d.add_argument(
        "--threshold",
        action="append",
        metavar="NAME=VALUE",
        help="override an extractor threshold, e.g. loss_curve.spike_z=8 (repeatable; docs/thresholds.md lists them)",
    )
    d.add_argument("--fail-on", choices=SEVERITIES, help="exit 1 when a cause of this severity or above is found")
    d.add_argument(
        "--min-confidence", type=float, default=0.5, help="confidence from which --fail-on counts a cause (default 0.5)"
    )
    d.add_argument("--quiet", "-q", action="store_true", help="no progress message on stderr")
    d.add_argument("--engine", choices=ENGINE_CHOICES, help=ENGINE_HELP)
    d.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="compare the run's dumps on a Dask cluster: tcp://HOST:8786, tls://HOST:8786, or 'local' (as advisor "
        "compare --scheduler); a cluster runs code and returns pickles: name only one you control (docs/cluster.md)",
    )
    d.add_argument(
        "--trust-scheduler",
        action="store_true",
        help="allow a --scheduler off this machine without TLS (tcp://): you control that cluster and its network",
    )
    d.set_defaults(func=cmd_diagnose)

    f = sub.add_parser("facts", help="print the facts extracted from a run (the vocabulary rules match)")
    f.add_argument("run", metavar="RUN", nargs="?", help="the run folder, one log file, or - (standard input)")
    f.add_argument("--baseline", "-b", metavar="DIR", help="the benchmark run's folder (facts of both sides)")
    f.add_argument("--format", "-f", choices=("text", "json"), default="text", help="output format (default text)")
    f.add_argument("--threshold", action="append", metavar="NAME=VALUE", help="override an extractor threshold")
    f.add_argument("--kinds", action="store_true", help="list every fact kind and its fields instead")
    f.set_defaults(func=cmd_facts)

    r = sub.add_parser("rules", help="list, show, validate and test rules")
    rsub = r.add_subparsers(dest="rules_action", metavar="ACTION", parser_class=_Parser, required=True)
    for name, helptext in (
        ("list", "list the rules"),
        ("show", "print a rule's YAML"),
        ("explain", "print a rule's documentation"),
    ):
        a = rsub.add_parser(name, help=helptext)
        if name != "list":
            a.add_argument("id", metavar="ID")
        a.add_argument("--rules", action="append", metavar="FILE_OR_DIR", help="extra YAML rules (repeatable)")
        a.add_argument("--only-rules", action="store_true", help="only the --rules given")
    v = rsub.add_parser("validate", help="check rule files; report every problem with file:line:column")
    v.add_argument("files", nargs="+", metavar="FILE_OR_DIR")
    v.add_argument("--only-rules", action="store_true", help="do not check ids against the built-in rules")
    t = rsub.add_parser("test", help="run the rules' inline tests")
    t.add_argument("files", nargs="+", metavar="FILE_OR_DIR")
    t.add_argument("--verbose", "-v", action="store_true")
    t.add_argument("--engine", choices=ENGINE_CHOICES, help=ENGINE_HELP)
    rsub.add_parser("schema", help="print a JSON Schema of the rule format (for editors)")
    r.set_defaults(func=_rules)

    w = sub.add_parser(
        "watch",
        help="follow a run while it trains; print a line when a cause becomes likely",
        description="Follow RUN while it trains: re-diagnose when logs, metrics or tensors.jsonl grow, "
        "and print one line when a cause first reaches the --alert confidence.",
    )
    w.add_argument("run", metavar="RUN", help="the run folder (read-only)")
    w.add_argument(
        "--alert",
        default="high",
        metavar="LEVEL",
        help="confidence that prints a line: low (0.3), medium (0.5), high (0.8) or a number (default high)",
    )
    w.add_argument("--exit-on", metavar="LEVEL", help="stop with exit status 1 once a cause reaches this confidence")
    w.add_argument("--once", action="store_true", help="diagnose once, print the causes at --alert, exit (for cron)")
    w.add_argument("--interval", type=float, default=0.5, help="seconds between looks at the folder (default 0.5)")
    w.add_argument("--idle-exit", type=float, metavar="SECONDS", help="stop (status 0) when nothing changed this long")
    w.add_argument("--rules", action="append", metavar="FILE_OR_DIR", help="extra YAML rules (repeatable)")
    w.add_argument("--param", action="append", metavar="RULE.PARAM=VALUE", help="override a rule parameter")
    w.add_argument("--threshold", action="append", metavar="NAME=VALUE", help="override an extractor threshold")
    w.set_defaults(func=cmd_watch)

    try:  # the standalone comparison, where installed (advisor/compare/cli.py)
        from advisor.compare.cli import add_compare_parser
    except ImportError:
        pass
    else:
        add_compare_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    # advisor's models use no pydantic plugin; looking for them reads every installed package's entry points
    # (~20 ms of a ~0.5 s diagnosis). An explicit setting of the user's is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(shown(f"advisor: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def run() -> None:
    """The ``advisor`` command (the console script, ``python -m advisor``): ``main`` in a process of its own."""
    cli_common.mark_own_process()
    raise SystemExit(main())


if __name__ == "__main__":
    run()
