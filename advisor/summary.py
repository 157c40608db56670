"""The report's summary: what the run shows first, then the cause that explains it, or the candidates.

Built from the report's causes, checks and findings and the run's ``symptom`` facts; it computes nothing
about the run itself. The verdicts (docs/report-json.md):

- ``cause_found``: a cause reached the report threshold;
- ``differential``: the run shows a symptom, no cause reached the threshold: the candidate causes in order,
  each with the one cheapest check that confirms or rules it out;
- ``weak_signals``: no symptom, some causes below the threshold;
- ``nothing_found``: no symptom and no cause;
- ``no_input``: nothing advisor can read.
"""

from __future__ import annotations

from collections.abc import Sequence

from advisor.facts.base import Fact
from advisor.facts.symptom import SYMPTOM_TITLES, Symptom, SymptomSummary
from advisor.report.model import DifferentialItem, Report, Summary, SymptomReport

#: confidence from which a cause counts as found
REPORT_THRESHOLD = 0.5

#: the routine's next step when the run is worse than its baseline and no stage found why
NEXT_STEP_DUMP = (
    "collect per-operator dumps of both runs at step 0 (in each training script: `from advisor.capture "
    "import attach; attach(model, optimizer, 'run/', dump_steps=[0])`) and diagnose again with --baseline"
)
NEXT_STEP_LATER = (
    "the step-0 dumps match: dump both runs again at a step after the curves part (dump_steps=[N]), "
    "backward included, and diagnose again with --baseline"
)

#: at most this many "what to collect next" lines when nothing was found
MAX_NEXT_STEPS = 3
#: candidate causes in a differential
MAX_CANDIDATES = 3


def _next_steps(report: Report) -> list[str]:
    """What to collect so that skipped checks can run: the routine's order, a few lines."""
    return [
        f"{c.title}: {c.enable}" for c in report.checks if c.status == "skipped" and c.enable and c.stage != "pre_check"
    ][:MAX_NEXT_STEPS]  # the hyper-parameter check's line asks for --baseline


def symptom_reports(facts: Sequence[Fact]) -> list[SymptomReport]:
    """The run's symptoms as the report shows them, most specific first."""
    shown = sorted((f for f in facts if isinstance(f, Symptom) and f.side == "run"), key=lambda s: s.rank)
    return [
        SymptomReport(
            id=s.name,
            title=SYMPTOM_TITLES.get(s.name, s.name),
            text=s.text,
            step=s.step,
            updates_before=s.updates_before,
            source=s.source.cite() if s.source is not None else None,
        )
        for s in shown
    ]


def summarise(report: Report, n_inputs: int, facts: Sequence[Fact]) -> Summary:
    """The summary of a report whose causes, checks and findings are final."""
    state = next((f for f in facts if isinstance(f, SymptomSummary) and f.side == "run"), None)
    summary = _core(report, n_inputs, symptom_reports(facts), state)
    gap = next((f for f in report.findings if f.id == "run_worse_than_baseline"), None)
    if gap is None:
        par = next((f for f in report.findings if f.id == "run_not_worse_than_baseline"), None)
        if par is not None:
            summary.benchmark_gap = (par.text or "").removeprefix("the run is not worse than its baseline: ")
        return summary
    summary.benchmark_gap = (gap.text or "").removeprefix("the run is worse than its baseline: ")
    if summary.verdict == "cause_found":
        return summary
    dumped = any(c.stage == "network_wide_comparison" and c.status == "ran" for c in report.checks)
    summary.next_step = NEXT_STEP_LATER if dumped else NEXT_STEP_DUMP
    if summary.verdict == "nothing_found":
        summary.headline = "The run is worse than its baseline, and no check that could run explains why."
        summary.certainty = "the gap is certain; its cause is not found yet"
    summary.next_steps = [summary.next_step] + [s for s in summary.next_steps if s != summary.next_step][
        : MAX_NEXT_STEPS - 1
    ]
    return summary


def _core(report: Report, n_inputs: int, symptoms: list[SymptomReport], state: SymptomSummary | None) -> Summary:
    status = state.status if state is not None else None
    health = state.health if state is not None and state.health else None
    common = {"symptoms": symptoms, "symptom_status": status, "health": health}
    found = report.found()
    if n_inputs == 0:
        bad = [i.path for i in report.inputs if i.side == "run" and i.status == "unreadable" and i.kind != "internal"]
        shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        return Summary(
            verdict="no_input",
            headline=(
                f"Nothing in the run could be read: {shown} {'is' if len(bad) == 1 else 'are'} unreadable "
                "(the reasons are below)."
                if bad
                else "No artifact the advisor can read was found in the run."
            ),
            certainty="nothing to go on: add logs, metrics, hyper-parameters, data samples or dumps",
            next_steps=_next_steps(report),
            **common,
        )
    if found:
        top = found[0]
        second = found[1].confidence if len(found) > 1 else 0.0
        margin = top.confidence - second
        certainty = (
            "confident: one cause stands out"
            if top.confidence >= 0.8 and margin >= 0.2
            else "fairly sure, but check the runner-up causes too"
            if top.confidence >= 0.65
            else "tentative: the evidence is moderate"
        )
        return Summary(
            verdict="cause_found",
            headline=f"Most likely cause: {top.title} ({top.id})",
            top_cause=top.id,
            top_confidence=top.confidence,
            first_remedies=top.remedies[:3],
            certainty=certainty,
            **common,
        )
    if symptoms:
        candidates = report.causes[:MAX_CANDIDATES]
        shows = symptoms[0].title
        if candidates:
            top = candidates[0]
            return Summary(
                verdict="differential",
                headline=f"{shows}: no cause reached {REPORT_THRESHOLD:.0%} confidence. The candidates, most "
                "likely first, each with the cheapest check that decides it:",
                top_cause=top.id,
                top_confidence=top.confidence,
                certainty="unsure: the symptom is certain, its cause is not; run the checks in order",
                differential=[
                    DifferentialItem(id=c.id, title=c.title, confidence=c.confidence, check=c.check) for c in candidates
                ],
                next_steps=_next_steps(report),
                **common,
            )
        return Summary(
            verdict="differential",
            headline=f"{shows}: no rule found a cause of it.",
            certainty="the symptom is certain; nothing in what was checked explains it yet",
            next_steps=_next_steps(report),
            **common,
        )
    ran = sum(1 for c in report.checks if c.status == "ran")
    opening = (
        f"The run trains well ({health}) and shows no symptom:"
        if status == "trains_well" and health
        else f"Nothing is clearly wrong in the {ran} check(s) that could run:"
    )
    warned = f" {len(report.smells)} warning(s) below are worth fixing." if report.smells else ""
    if report.causes:
        top = report.causes[0]
        return Summary(
            verdict="weak_signals",
            headline=f"{opening} no cause reached {REPORT_THRESHOLD:.0%} confidence (the strongest "
            f"signal: {top.title}, {top.confidence:.0%}).{warned}",
            top_cause=top.id,
            top_confidence=top.confidence,
            certainty="unsure: only weak signals, listed below for a look, not to act on",
            next_steps=_next_steps(report),
            **common,
        )
    return Summary(
        verdict="nothing_found",
        headline=f"{opening} no rule found a cause.{warned}",
        certainty="nothing found in what was checked; skipped checks may still hide a cause",
        next_steps=_next_steps(report),
        **common,
    )
