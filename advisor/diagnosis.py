"""``diagnose(run, baseline=None, rules=...) -> Report``: the one way in, for the CLI and Python users.

The pipeline: pick the latest run of a folder (read.runs.pick_latest) -> read it once (read.run.read_run,
run and baseline) -> extract facts (extract.extract_facts) -> infer (rulebase) -> rank -> assemble the
``Report`` (rendered by advisor.report).
"""

from __future__ import annotations

import math
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from advisor import __version__
from advisor.errors import Diagnostic, UsageError
from advisor.extract import extract_facts
from advisor.extract.base import Extraction, RunPair
from advisor.inventory import InputRecord, RunFolder
from advisor.explain import explain
from advisor.rank import rank
from advisor.read.run import RunRead, read_run
from advisor.report.model import Chart, CheckReport, CrashReport, FindingReport, Report, Summary
from advisor.facts.recipe import TrainingTool
from advisor.knowledge import capture_hints
from advisor.rulebase import builtin_rules_dir
from advisor.rulebase.infer import RuleBase
from advisor.rulebase.load import load_rules, merge_rule_sets, rule_files
from advisor.rulebase.schema import Rule
from advisor.stages import STAGES
from advisor.summary import REPORT_THRESHOLD, summarise


CHART_TITLES = {
    "loss": "Loss",
    "lr": "Learning rate",
    "loss_scale": "Loss scale",
    "grad_norm": "Gradient norm",
    "weight_std": "Weights per layer (std over steps)",
    "metric": "Evaluation metrics",
    "op_error": "Per-operator error along execution order",
    "class_hist": "Class counts",
    "feature_range": "Feature ranges",
}


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
    loaded = [] if only_rules else [_load_builtin(str(builtin_rules_dir()))]  # parsed once per process
    for p in rules:  # the user's files are read every time (they may have changed)
        loaded.append(load_rules([Path(p)]))
    return merge_rule_sets(loaded)


#: input kinds that feed a stage: a skipped stage names its unreadable inputs instead of "no input"
_STAGE_INPUTS = {
    "loss_curve": ("log", "metrics"),
    "hyperparameters": ("hparams",),
    "input_data": ("data",),
    "training_dynamics": ("tensors",),
    "network_wide_comparison": ("dump",),
    "floating_point_exceptions": ("dump", "log", "tensors"),
}


def _checks(extraction: Extraction) -> list[CheckReport]:
    tool = next((f.tool for f in extraction.facts if isinstance(f, TrainingTool) and f.side == "run"), None)
    ran: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    for c in extraction.checks:
        ran.setdefault(c.stage, [])
        if c.note and c.note not in notes.setdefault(c.stage, []):
            notes[c.stage].append(c.note)
        for i in c.inputs:
            if i not in ran[c.stage]:
                ran[c.stage].append(i)
    out = []
    for s in STAGES:
        if s.id in ran:
            out.append(
                CheckReport(stage=s.id, title=s.title, status="ran", inputs=ran[s.id], notes=notes.get(s.id, []))
            )
        else:
            bad = [i for i in extraction.inputs if i.status == "unreadable" and i.kind in _STAGE_INPUTS.get(s.id, ())]
            if bad:
                listed = "; ".join(f"{i.path} ({i.why})" for i in bad[:3])
                why, enable = f"found but could not be read: {listed}", f"fix or re-export {listed}; or {s.enable}"
            else:
                why, enable = "no input for this stage in the run", capture_hints.hint(s.id, tool) or s.enable
            out.append(CheckReport(stage=s.id, title=s.title, status="skipped", why=why, enable=enable))
    return out


def _crashes(extraction: Extraction) -> list[CrashReport]:
    out: list[CrashReport] = []
    seen: set[tuple[str, str, int | None]] = set()
    for f in extraction.facts:
        if f.kind == "training_crash" and (f.side, f.exception, f.step) not in seen:  # traceback + message: once
            seen.add((f.side, f.exception, f.step))
            cite = f.source.cite() if f.source is not None else None
            out.append(
                CrashReport(
                    exception=f.exception,
                    step=f.step,
                    is_nonfinite=f.is_nonfinite,
                    source=("baseline: " + cite) if cite and f.side == "baseline" else cite,
                )
            )
    return out


def _charts(extraction: Extraction) -> list[Chart]:
    charts: dict[str, Chart] = {}
    for s in extraction.series:
        charts.setdefault(
            s.chart, Chart(id=s.chart, title=CHART_TITLES.get(s.chart, s.chart.replace("_", " ").title()))
        )
        charts[s.chart].series.append(s)
    for m in extraction.markers:
        if m.chart in charts:
            charts[m.chart].markers.append(m)
    return list(charts.values())


def _unknown_options(options: dict[str, Any]) -> list[str]:
    """Warnings for extractor thresholds no extractor reads (a typo would otherwise pass silently)."""
    if not options:
        return []  # nothing to check (and the comparison's tolerance module stays unimported)
    from dataclasses import fields

    from advisor.extract.curves import CurveThresholds

    curve = {f"loss_curve.{f.name}" for f in fields(CurveThresholds)}
    exact = (
        curve
        | {"benchmark.score_band"}
        | {
            "training_dynamics.max_records",
            "op_compare.same_config",
            "op_compare.workers",
            "op_compare.scheduler",
            "compare.kl",
            "compare.kernel",
        }
    )
    from advisor.compare.tolerances import option_problems

    out = [f"advisor: warning: threshold {problem}; ignored" for problem in option_problems(options)]
    for key in options:
        if key in exact or key.startswith("compare."):
            continue
        import difflib

        close = difflib.get_close_matches(key, sorted(exact), n=1)
        out.append(
            f"advisor: warning: threshold '{key}' is not read by any extractor"
            + (f" (did you mean '{close[0]}'?)" if close else "")
        )
    return out


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


def _param_problems(rules: list[Rule], params: dict[str, Any]) -> list[str]:
    """Warnings for --param overrides that no rule reads or that have the wrong type (did-you-mean).

    Overrides of the wrong type are removed from ``params`` (the rule keeps its default).
    """
    import difflib

    by_id = {r.id: r for r in rules}
    out = []
    for key, value in list(params.items()):
        rid, _, name = key.rpartition(".")
        if rid and rid not in by_id:
            close = difflib.get_close_matches(rid, sorted(by_id), n=1)
            out.append(
                f"advisor: warning: --param '{key}': no rule '{rid}'"
                + (f" (did you mean '{close[0]}'?)" if close else "")
            )
            continue
        owners = [by_id[rid]] if rid else [r for r in rules if name in r.params]
        if not owners or name not in owners[0].params:
            known = sorted(by_id[rid].params) if rid else sorted({p for r in rules for p in r.params})
            close = difflib.get_close_matches(name, known, n=1)
            where = f"rule '{rid}' has no param '{name}'" if rid else f"no rule has a param '{name}'"
            hint = (
                f" (did you mean '{close[0]}'?)"
                if close
                else f" (its params: {', '.join(known) or 'none'})"
                if rid
                else " (advisor rules show ID lists a rule's params)"
            )
            out.append(f"advisor: warning: --param '{key}': {where}{hint}")
            continue
        default = owners[0].params[name]
        numeric = isinstance(default, (int, float)) and not isinstance(default, bool)
        if numeric and not (isinstance(value, (int, float)) and not isinstance(value, bool)):
            out.append(f"advisor: warning: --param '{key}' needs a number (default {default}), got {value!r}; ignored")
            del params[key]
        elif numeric and not math.isfinite(value):  # NaN/1e999/-Infinity: no comparison with them means anything
            out.append(
                f"advisor: warning: --param '{key}' needs a finite number (default {default}), got {value}; ignored"
            )
            del params[key]
    return out


def threshold_problems(options: dict[str, Any]) -> list[str]:
    """Warnings for numeric extractor thresholds given a value that is not a finite number; those
    overrides are removed from ``options`` (the documented default stays)."""
    from dataclasses import fields

    from advisor.extract.curves import CurveThresholds

    numeric = {f"loss_curve.{f.name}" for f in fields(CurveThresholds)} | {"training_dynamics.max_records"}
    out = []
    for key in [k for k in options if k in numeric]:
        value = options[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            out.append(f"advisor: warning: threshold '{key}' needs a finite number, got {value!r}; ignored")
            del options[key]
    return out


def read_pair(
    run: str | os.PathLike, baseline: str | os.PathLike | None, options: dict[str, Any] | None = None
) -> tuple[RunPair, list[str]]:
    """The run (a folder, one log file or ``-``: standard input) and the optional baseline, read once, and the
    warnings about what was picked (a folder of several runs: the latest). Raises UsageError for a RUN or a
    baseline that is not there, or standard input beyond its limit. Shared by ``diagnose`` and ``advisor
    facts``: what the rules see is what ``facts`` prints."""
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
    )
    return pair, notes


def diagnose(
    run: str | os.PathLike,
    baseline: str | os.PathLike | None = None,
    rules: Iterable[str | os.PathLike] = (),
    only_rules: bool = False,
    params: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    engine: str | None = None,
) -> Report:
    """Diagnose a run folder, one log file or ``-`` (standard input), optionally against a baseline.

    ``rules``: extra rule files/folders; ``only_rules``: drop the built-in rules;
    ``params``: rule parameter overrides ``{"rule-id.param": value}``;
    ``options``: extractor threshold overrides; ``engine``: the rule engine back-end
    ('durable', 'python' or 'auto'; see rulebase/backends.py). Nothing in the folders is written.
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
    pair, runs_notes = read_pair(run, baseline, options)
    extraction = extract_facts(pair)
    params = dict(params or {})
    param_warnings = _param_problems(rule_list, params)
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
    inputs = _dedupe_inputs(extraction)
    inputs += _unread_files(pair.run.folder, inputs) + (
        _unread_files(pair.baseline.folder, inputs) if pair.baseline else []
    )
    inputs = _cap_ignored(inputs)
    report = Report(
        advisor_version=__version__,
        run=str(run),
        baseline=str(baseline) if baseline is not None else None,
        summary=Summary(verdict="nothing_found", headline="", certainty=""),
        causes=causes,
        ruled_out=ruled_out,
        smells=smells,
        findings=findings,
        crashes=_crashes(extraction),
        checks=_checks(extraction),
        inputs=inputs,
        warnings=[d.format() for d in diags]
        + warnings
        + _unknown_options(pair.options)
        + param_warnings
        + threshold_warnings
        + _several_runs(pair.run, "RUN")
        + (_several_runs(pair.baseline, "--baseline") if pair.baseline is not None else [])
        + runs_notes,
        facts_count=len(extraction.facts),
        rules_count=len(rule_list),
        rule_errors=sum(1 for d in diags if d.severity == "error"),
        charts=_charts(extraction),
        report_threshold=REPORT_THRESHOLD,
    )
    report.summary = summarise(report, sum(1 for i in inputs if i.status == "used"), extraction.facts)
    return report


#: unread files listed one by one in the report's inputs; the rest are counted in one line
MAX_UNREAD_LISTED = 10


def _unread_files(folder: RunFolder, inputs: list[InputRecord]) -> list[InputRecord]:
    """Files of the folder no extractor took (so a user sees why a file did not count), capped."""
    prefixes, exact = [], set()
    for i in inputs:
        if i.side != folder.side:
            continue
        exact.add(i.path)
        if i.kind == "dump":  # a dump folder, or the folder of its dump.json: its tensor files are covered
            prefixes.append((i.path.rsplit("/", 1)[0] if i.path.endswith(".json") else i.path).rstrip("/") + "/")
    unread = [
        p.as_posix()
        for p in folder.files
        if p.as_posix() not in exact and not any(p.as_posix().startswith(x) for x in prefixes)
    ]
    out = [
        InputRecord(
            path=p,
            kind="other",
            status="ignored",
            side=folder.side,
            why="not a file advisor reads (see run-layout: logs, metrics, hparams, data, tensors, dumps)",
        )
        for p in unread[:MAX_UNREAD_LISTED]
    ]
    if len(unread) > MAX_UNREAD_LISTED:
        out.append(
            InputRecord(
                path=f"(and {len(unread) - MAX_UNREAD_LISTED} more files)",
                kind="other",
                status="ignored",
                side=folder.side,
                why="not files advisor reads",
            )
        )
    return out


def _cap_ignored(inputs: list[InputRecord]) -> list[InputRecord]:
    """At most MAX_UNREAD_LISTED ignored inputs by name per side, the rest counted in one line
    (50,000 stray files must not make a 10 MB report)."""
    out: list[InputRecord] = []
    listed: dict[str, int] = {}
    hidden: dict[str, int] = {}
    same_why: dict[tuple[str, str, str | None], int] = {}  # unreadable files: 10 per reason, the rest counted
    for i in inputs:
        if i.status == "unreadable":
            key = (i.side, i.kind, i.why)
            same_why[key] = same_why.get(key, 0) + 1
            if same_why[key] <= MAX_UNREAD_LISTED:
                out.append(i)
            continue
        if i.status != "ignored":
            out.append(i)
            continue
        more = re.fullmatch(r"\(and (\d+) more files\)", i.path)
        if more:
            hidden[i.side] = hidden.get(i.side, 0) + int(more.group(1))
        elif listed.get(i.side, 0) < MAX_UNREAD_LISTED:
            listed[i.side] = listed.get(i.side, 0) + 1
            out.append(i)
        else:
            hidden[i.side] = hidden.get(i.side, 0) + 1
    for side, n in hidden.items():
        out.append(
            InputRecord(
                path=f"(and {n} more files)",
                kind="other",
                status="ignored",
                side=side,  # type: ignore[arg-type]
                why="not files advisor reads, or not read as what their names suggest",
            )
        )
    for (side, kind, why), n in same_why.items():
        if n > MAX_UNREAD_LISTED:
            out.append(
                InputRecord(
                    path=f"(and {n - MAX_UNREAD_LISTED} more files)", kind=kind, status="unreadable", side=side, why=why
                )
            )  # type: ignore[arg-type]
    return out


def _dedupe_inputs(extraction: Extraction):
    """Each input once per (side, path, status, kind); a file one stage used is not also listed as ignored by
    another (model.txt is a model description, not a log without losses)."""
    seen = {}
    for rec in extraction.inputs:
        key = (rec.side, rec.path, rec.status, rec.kind)
        if key not in seen:
            seen[key] = rec
    used = {(r.side, r.path) for r in seen.values() if r.status == "used"}
    kept = [r for r in seen.values() if r.status != "ignored" or (r.side, r.path) not in used]
    return sorted(kept, key=lambda r: (r.side != "run", r.path, r.kind))
