"""``diagnose(run, baseline=None, rules=...) -> Report``: the one way in, for the CLI and Python users.

The pipeline: pick the latest run of a folder (read.runs.pick_latest) -> read it once (read.run.read_run,
run and baseline) -> extract facts (extract.extract_facts) -> infer (rulebase) -> rank -> assemble the
``Report`` (rendered by advisor.report). The Report's parts are laid out by ``report_assembly.py``; what the
user passes is checked by ``options.py``.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from advisor.version import __version__
from advisor.errors import Diagnostic, UsageError
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder
from advisor.explain import explain
from advisor.rank import rank
from advisor.read.run import RunRead, read_run
from advisor.report.model import FindingReport, Report, Summary
from advisor.rulebase import builtin_rules_dir
from advisor.rulebase.infer import RuleBase
from advisor.rulebase.load import load_rules, merge_rule_sets, rule_files
from advisor.rulebase.schema import Rule
from advisor.summary import REPORT_THRESHOLD, summarise


from advisor.options import param_problems, unknown_options, threshold_problems
from advisor.report_assembly import (
    cap_ignored,
    charts_of,
    checks_of,
    crashes_of,
    dedupe_inputs,
    unread_files,
    with_divergence_markers,
)


@lru_cache(maxsize=2)
def _load_builtin(path: str) -> tuple[tuple[Rule, ...], tuple[Diagnostic, ...]]:
    from advisor.rulebase import cache

    folder = Path(path)
    files, _ = rule_files([folder])
    rules, diags = cache.load_builtin(  # checked once per content, kept in the user's cache folder
        folder, files, lambda: load_rules([folder], display_root=folder.parent, trusted=True)
    )
    return tuple(rules), tuple(diags)


def load_rule_set(
    rules: Iterable[str | os.PathLike] = (), only_rules: bool = False
) -> tuple[list[Rule], list[Diagnostic]]:
    """The built-in rules (unless only_rules) plus the user's files/folders; diagnostics for bad ones."""
    loaded: list[tuple[Iterable[Rule], Iterable[Diagnostic]]] = (
        [] if only_rules else [_load_builtin(str(builtin_rules_dir()))]  # parsed once per process
    )
    for p in rules:  # the user's files are read every time (they may have changed)
        loaded.append(load_rules([Path(p)]))
    return merge_rule_sets(loaded)


#: input kinds that feed a stage: a skipped stage names its unreadable inputs instead of "no input"
def _several_runs(read: RunRead, what: str) -> list[str]:
    """A warning when a folder holds the configuration files of several runs in separate subfolders."""
    folder, found = read.folder, [f.rel for f in read.hparams]
    tops = sorted({p.parts[0] for p in found if len(p.parts) > 1})
    if len(tops) >= 2 and not any(len(p.parts) == 1 for p in found):
        shown = ", ".join(f"{t}/" for t in tops[:4])
        return [
            f"advisor: warning: {what} '{folder.root}' seems to hold several runs ({shown}), read as one run; "
            f"pass one of them as {what}{' and another as --baseline' if what == 'RUN' else ''}"
        ]
    return []


def read_pair(
    run: str | os.PathLike,
    baseline: str | os.PathLike | None,
    options: dict[str, Any] | None = None,
    runner: Any = None,
    code: Iterable[str | os.PathLike] = (),
) -> tuple[RunPair, list[str]]:
    """The run (a folder, one log file or ``-``: standard input) and the optional baseline, read once, and the
    warnings about what was picked (a folder of several runs: the latest). Raises UsageError for a RUN or a
    baseline that is not there, or standard input beyond its limit. Shared by ``diagnose`` and ``advisor
    facts``: what the rules see is what ``facts`` prints. ``code``: training scripts kept outside the run folder
    (``--code``), read with the run's own (never run)."""
    run_path = Path(run)
    if not (run_path.is_dir() or run_path.is_file() or str(run) == "-"):
        raise UsageError(f"RUN '{run}' is not a folder, a file or '-' (standard input)")
    if baseline is not None and not (Path(baseline).is_dir() or Path(baseline).is_file()):
        raise UsageError(f"baseline '{baseline}' is not a folder or a file")
    stdin = None
    if str(run) == "-":
        from advisor.read.stdin import StdinTooLarge, read_stdin

        try:
            stdin = read_stdin()
        except StdinTooLarge as exc:
            raise UsageError(str(exc)) from None
    from advisor.read.runs import pick_latest

    # several runs in one folder (Lightning version_N, checkpoint-N): the latest is read
    run_folder, run_note = pick_latest(RunFolder.open(run_path, "run", stdin))
    run_folder.code_files = [_code_file(c) for c in code]
    base_folder, base_note = (None, None)
    if baseline is not None:
        base_folder, base_note = pick_latest(RunFolder.open(Path(baseline), "baseline"))
    notes = [
        f"advisor: warning: {what}: {note}" for what, note in (("RUN", run_note), ("--baseline", base_note)) if note
    ]
    pair = RunPair(
        run=read_run(run_folder),
        baseline=read_run(base_folder) if base_folder is not None else None,
        options=dict(options or {}),
        runner=runner,
    )
    return pair, notes


def _code_file(path: str | os.PathLike) -> Path:
    """A script named with --code: a regular file (a FIFO, a device or a folder is a usage error)."""
    from advisor.read.safe import file_problem

    problem = file_problem(path) if Path(path).exists() or Path(path).is_symlink() else "no such file"
    if problem is not None:
        raise UsageError(f"--code '{path}': {problem}")
    return Path(path)


def diagnose(
    run: str | os.PathLike,
    baseline: str | os.PathLike | None = None,
    rules: Iterable[str | os.PathLike] = (),
    only_rules: bool = False,
    params: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    engine: str | None = None,
    runner: Any = None,
    code: Iterable[str | os.PathLike] = (),
) -> Report:
    """Diagnose a run folder, one log file or ``-`` (standard input), optionally against a baseline.

    ``rules``: extra rule files/folders; ``only_rules``: drop the built-in rules;
    ``params``: rule parameter overrides ``{"rule-id.param": value}``;
    ``options``: extractor threshold overrides; ``engine``: the rule engine back-end
    ('durable', 'python' or 'auto'; see rulebase/backends.py); ``runner``: a comparison runner the caller made
    and closes (``advisor.compare.dask_runner.DaskRunner``: several diagnoses on one cluster); ``code``: training
    scripts kept outside the run folder (read, never run). Nothing in the folders is written.
    """
    if options and "compare.kernel" in options:
        from advisor.compare.engine import use_compiled

        try:
            use_compiled(str(options["compare.kernel"]), 0)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    rule_list, diags = load_rule_set(rules, only_rules)
    options = dict(options or {})
    threshold_warnings = threshold_problems(options)
    pair, runs_notes = read_pair(run, baseline, options, runner, code)
    extraction = extract_facts(pair)
    params = dict(params or {})
    param_warnings = param_problems(rule_list, params)
    rulebase = RuleBase(rule_list, params, engine=engine)  # compiled rulesets are registered once per content
    firings, warnings = rulebase.infer(extraction.facts)
    causes, ruled_out = rank(firings)
    causes, smells = explain(causes, ruled_out, extraction.facts)
    findings = [
        FindingReport(
            id=f.rule.finding,
            source=f.rule.id,
            text=f.evidence,
            detail={
                a: fact.model_dump(mode="json", exclude_none=True, exclude={"source"}) for a, fact in f.facts.items()
            },
        )
        for f in firings
        if f.rule.finding
    ]
    inputs = dedupe_inputs(extraction)
    inputs += unread_files(pair.run.folder, inputs) + (
        unread_files(pair.baseline.folder, inputs) if pair.baseline else []
    )
    inputs = cap_ignored(inputs)
    report = Report(
        advisor_version=__version__,
        run=str(run),
        baseline=str(baseline) if baseline is not None else None,
        summary=Summary(verdict="nothing_found", headline="", certainty=""),
        causes=causes,
        ruled_out=ruled_out,
        smells=smells,
        findings=findings,
        crashes=crashes_of(extraction),
        checks=checks_of(extraction),
        inputs=inputs,
        warnings=[d.format() for d in diags]
        + warnings
        + unknown_options(pair.options)
        + param_warnings
        + threshold_warnings
        + _several_runs(pair.run, "RUN")
        + (_several_runs(pair.baseline, "--baseline") if pair.baseline is not None else [])
        + runs_notes,
        facts_count=len(extraction.facts),
        rules_count=len(rule_list),
        rule_errors=sum(1 for d in diags if d.severity == "error"),
        charts=with_divergence_markers(charts_of(extraction), causes),
        report_threshold=REPORT_THRESHOLD,
    )
    report.summary = summarise(report, sum(1 for i in inputs if i.status == "used"), extraction.facts)
    return report


#: unread files listed one by one in the report's inputs; the rest are counted in one line
