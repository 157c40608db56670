"""From an extraction to the parts of a Report: the checks each stage ran, the crashes, the charts and the
input list (unread files named, ignored ones capped, duplicates merged). Used by ``diagnosis.diagnose``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from advisor.chart_data import Marker
from advisor.extract.base import Extraction
from advisor.inventory import InputRecord, RunFolder
from advisor.report.model import Chart, CheckReport, CrashReport
from advisor.facts.recipe import TrainingTool
from advisor.knowledge import capture_hints
from advisor.stages import STAGES


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


_STAGE_INPUTS = {
    "loss_curve": ("log", "metrics"),
    "hyperparameters": ("hparams",),
    "input_data": ("data",),
    "training_dynamics": ("tensors",),
    "network_wide_comparison": ("dump",),
    "floating_point_exceptions": ("dump", "log", "tensors"),
}


def checks_of(extraction: Extraction) -> list[CheckReport]:
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


def crashes_of(extraction: Extraction) -> list[CrashReport]:
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


def _chart_title(chart: str) -> str:
    if chart.startswith("weight_dist:"):
        return f"Weights of {chart.split(':', 1)[1]} over the steps (min to max, mean +- std, mean)"
    return CHART_TITLES.get(chart, chart.replace("_", " ").title())


def divergence_markers(causes: Iterable[Any]) -> list[Marker]:
    """Where a loss the causes cite starts to rise (its divergence step, when that is not its first NaN, which the
    extractor marks itself): a marker on the loss chart, once per split and step."""
    out: dict[tuple[str, float], Marker] = {}
    for c in causes:
        for e in list(getattr(c, "evidence", [])):
            for f in e.facts.values():
                if not isinstance(f, dict) or f.get("kind") != "loss_curve" or f.get("side", "run") != "run":
                    continue
                step, split = f.get("divergence_step"), f.get("split", "train")
                if f.get("diverged") and isinstance(step, (int, float)) and step != f.get("first_nonfinite_step"):
                    out[(split, float(step))] = Marker(
                        chart="loss", x=float(step), kind="divergence", label=f"{split} loss starts to rise"
                    )
    return list(out.values())


def with_divergence_markers(charts: list[Chart], causes: Iterable[Any]) -> list[Chart]:
    """The charts with the divergence starts of the causes' loss curves added to the loss chart (not where a
    marker of that kind already stands at that step)."""
    extra = divergence_markers(causes)
    out = []
    for c in charts:
        if c.id == "loss" and extra:
            have = {(m.kind, m.x) for m in c.markers}
            c = c.model_copy(update={"markers": c.markers + [m for m in extra if ("divergence", m.x) not in have]})
        out.append(c)
    return out


def charts_of(extraction: Extraction) -> list[Chart]:
    charts: dict[str, Chart] = {}
    for s in extraction.series:
        charts.setdefault(s.chart, Chart(id=s.chart, title=_chart_title(s.chart)))
        charts[s.chart].series.append(s)
    for m in extraction.markers:
        if m.chart in charts:
            charts[m.chart].markers.append(m)
    return list(charts.values())


MAX_UNREAD_LISTED = 10


def unread_files(folder: RunFolder, inputs: list[InputRecord]) -> list[InputRecord]:
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


def cap_ignored(inputs: list[InputRecord]) -> list[InputRecord]:
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


def dedupe_inputs(extraction: Extraction):
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
