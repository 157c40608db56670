"""Causes as explanations of what the run shows: smells that explain nothing become warnings, and the causes of
a symptom are weighed against how often each causes it in the field.

rank.py scores each cause by the rules that fired for it. An expert asks a second question: does this cause
explain what the run shows? Here:

1. A cause whose every supporting rule reads only settings, structure or data (``is_smell``) is a *warning*,
   not a cause, when the run plainly trains well, or when it shows symptoms the cause's mechanism cannot
   produce (advisor/knowledge/symptom_causes.py). With a symptom it explains, the same smell is evidence. A
   run whose held-out accuracy is at its ceiling has nothing to gain from training longer: the causes of a
   training stopped short (SHORT_OF_CONVERGENCE) are warnings there too.
2. With a symptom, every candidate cause gets a probability from the field's base rate for that symptom (the
   prior, advisor/knowledge/symptom_priors.py) and the rules' evidence (a likelihood ratio): the causes of one
   symptom compete for it, so a strong explanation takes probability from the others (Bayes' rule over
   mutually exclusive causes, with the prior's "other" share for causes no table names). A cause the prior
   names and no rule fired for is still listed, at its prior: the differential an expert would start from.
3. Every cause gets the one cheapest check that confirms or rules it out (advisor/knowledge/cause_checks.py).

Without a symptom the chance that anything is wrong is small (step 4):

4. A run that shows no symptom and is not plainly healthy (too little to judge) keeps its causes, each at its rules'
   confidence times NO_SYMPTOM_FAULT_SHARE, when the evidence is a smell or reads only the curves and scores that
   the symptom table found nothing in: such a cause stays below the report threshold, a weak signal to look at
   with what to record to decide. Evidence that observes the model itself (operator dumps, tensor statistics,
   weights, a crash) is not the curve's and keeps its confidence. A run that is not worse than its baseline is
   healthy for every smell (a setting or structure that differs from the benchmark): a warning, "differs from the
   benchmark; the run is not worse".

A cause only the user's rules support (``user_rules_only``) is left as its rules say: a team's rule is its policy
(a setting it forbids), and its author wrote the confidence.
docs/calibration.md describes the model and how it was fitted.
"""

from __future__ import annotations

from collections.abc import Sequence

from advisor.causes import CAUSE_BY_ID
from advisor.facts.base import Fact
from advisor.facts.benchmark import BenchmarkGap
from advisor.facts.recipe import ModelFamily
from advisor.facts.symptom import Symptom, SymptomSummary
from advisor.knowledge.cause_chains import root_of
from advisor.knowledge.family_remedies import fit_remedies
from advisor.knowledge.cause_checks import CHECKS
from advisor.knowledge.symptom_causes import EXPLAINS, explains
from advisor.knowledge.symptom_priors import PRIORS
from advisor.rank import OBSERVED_KINDS, sort_key
from advisor.report.model import CauseReport

#: a rule's calibrated confidence p is read as the likelihood ratio odds(p) / odds(RULE_BASE_RATE): the chance
#: that a cause is right when no rule spoke for it (fitted on the labelled runs: benchmarks/symptom_model.py)
RULE_BASE_RATE = 0.05
#: the likelihood ratio is raised to this power (a tempered likelihood): several rules of one run read the same
#: observations, so their calibrated confidences, each fitted alone, understate how far the strongest stands above
#: the rest; fitted by cross-validation on the labelled runs (benchmarks/symptom_model.py), it brings the top
#: cause's calibration error to 0.10 or less in every symptom family
LIKELIHOOD_EXPONENT = 1.5
#: the share of the smallest prior a cause gets whose mechanism produces none of the run's symptoms
UNEXPLAINED_SHARE = 0.25
#: causes listed from the prior alone: at most this many, each at this probability or more
MAX_PRIOR_ONLY = 3
MIN_PRIOR_ONLY = 0.03
#: causes whose harm is a training stopped short of what it could reach (too few epochs, too small a rate): in a run
#: whose held-out accuracy is at its ceiling (SymptomSummary.at_ceiling) they explain nothing and become warnings,
#: whatever their evidence (a loss still falling at the end is true and harmless there)
SHORT_OF_CONVERGENCE = frozenset({"insufficient_epochs", "lr_too_low"})
#: the chance that a run showing no symptom (and not plainly healthy) has the problem a smell or a curve-only rule
#: names: the rules' confidences were fitted on runs that show what the cause produces; a run that shows nothing
#: of it is mostly a run that trains (docs/calibration.md, "no symptom"). Below the report threshold on purpose: a
#: cause is not confident when the run shows nothing it would cause
NO_SYMPTOM_FAULT_SHARE = 0.45
#: fact kinds that a symptom detector reads (curves, scores, the gap to the baseline): a rule on them only, in a run
#: whose detectors found nothing, re-reads what showed no symptom
CURVE_KINDS = frozenset(
    {
        "loss_curve",
        "generalization_gap",
        "chance_level",
        "eval_score",
        "train_score",
        "final_evaluation",
        "accuracy_loss_bound",
        "benchmark_gap",
        "baseline_deviation",
        "symptom_summary",
        "grad_norm_trend",
    }
)


def _odds(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return p / (1 - p)


def combined_prior(shown: Sequence[str]) -> dict[str, float]:
    """One prior over causes for the symptoms shown: each cause at its largest share among them, renormalised
    with the primary symptom's "other" share (the first symptom is the most specific)."""
    tables = [PRIORS[s] for s in shown if s in PRIORS]
    if not tables:
        return {}
    best: dict[str, float] = {}
    for table in tables:
        for cause, p in table.items():
            if cause != "other":
                best[cause] = max(best.get(cause, 0.0), p)
    other = tables[0].get("other", 0.0)
    total = sum(best.values()) + other
    return {c: p / total for c, p in best.items()} | {"other": other / total}


def reads_curves_only(c: CauseReport) -> bool:
    """Whether every supporting rule of ``c`` reads settings, structure, data or the curves and scores alone (no
    dump, tensor, crash or overflow record: nothing that observes the model itself). False without evidence."""
    if not c.evidence:
        return False
    model_kinds = OBSERVED_KINDS - CURVE_KINDS
    return not any(str(f.get("kind")) in model_kinds for e in c.evidence for f in e.facts.values())


def not_worse_than_baseline(facts: Sequence[Fact]) -> bool:
    """A baseline was compared and the run keeps up with it (within its noise band, or better)."""
    gaps = [f for f in facts if isinstance(f, BenchmarkGap) and f.side == "run"]
    return bool(gaps) and not any(g.is_worse for g in gaps)


def _candidate(cause: str, prior: float, shown: set[str]) -> CauseReport:
    known = CAUSE_BY_ID.get(cause)
    return CauseReport(
        id=cause,
        title=known.title if known else cause,
        stage=known.stage if known else None,
        confidence=0.0,
        raw_confidence=0.0,
        severity="medium",
        prior=round(prior, 4),
        explains=sorted(shown & EXPLAINS.get(cause, frozenset())),
        check=CHECKS.get(cause),
    )


def explain(
    causes: list[CauseReport], ruled_out: list[CauseReport], facts: Sequence[Fact]
) -> tuple[list[CauseReport], list[CauseReport]]:
    """(causes best first, warnings): the causes that explain the run's symptoms, weighed by their priors."""
    summary = next((f for f in facts if isinstance(f, SymptomSummary) and f.side == "run"), None)
    symptoms = [f for f in facts if isinstance(f, Symptom) and f.side == "run"]
    shown_order: list[str] = [s.name for s in sorted(symptoms, key=lambda s: s.rank)]
    shown: set[str] = set(shown_order)
    kept: list[CauseReport] = []
    smells: list[CauseReport] = []
    healthy = summary is not None and summary.status == "trains_well"
    at_ceiling = summary is not None and summary.at_ceiling
    keeps_up = not shown and not_worse_than_baseline(facts)
    for c in causes:
        c.check = CHECKS.get(c.id)
        c.rule_confidence = c.confidence
        c.explains = sorted(shown & EXPLAINS.get(c.id, frozenset(shown)))
        if c.user_rules_only:  # the user's own rules: a team's policy, reported as its author wrote it
            kept.append(c)
        elif (healthy or keeps_up) and (c.is_smell or (at_ceiling and c.id in SHORT_OF_CONVERGENCE)):
            c.warning_note = (
                "Differs from the benchmark; the run is not worse."
                if keeps_up or summary is None
                else f"The run trains well ({summary.health}): nothing it shows comes from this."
            )
            smells.append(c)
        elif shown and c.is_smell and not explains(c.id, shown):
            c.warning_note = f"This run shows {', '.join(shown_order)}: not what this produces."
            smells.append(c)
        else:
            if not shown and (c.is_smell or reads_curves_only(c)):
                c.confidence = round(c.confidence * NO_SYMPTOM_FAULT_SHARE, 4)
            kept.append(c)
    _mark_derived([c for c in kept if not c.user_rules_only])
    family = next((f.family for f in facts if isinstance(f, ModelFamily) and f.side == "run"), None)
    for c in kept + smells:
        if not c.user_rules_only:
            c.remedies = fit_remedies(c.id, c.remedies, family)
    prior = combined_prior(shown_order)
    if not prior:
        found = {c.id: c.confidence for c in kept}  # as the rules gave them, whatever the order below
        for c in kept:  # no symptom to share: the chance that its evidence is not the root's doing
            if c.derived_from is not None:
                c.confidence = round(c.confidence * (1 - found[c.derived_from]), 4)
        return sorted(kept, key=sort_key), smells
    excluded = {c.id for c in kept} | {c.id for c in smells} | {c.id for c in ruled_out}
    extra = [_candidate(cause, p, shown) for cause, p in prior.items() if cause != "other" and cause not in excluded]
    weighed = [c for c in kept if not c.user_rules_only]  # a user's rules say what they mean: no prior over them
    for c in weighed:
        c.prior = round(prior_of(c.id, prior, shown), 4)
    probs = posterior(
        {c.id: c.confidence for c in weighed if c.derived_from is None},
        prior,
        shown,
        [c.id for c in extra] + [c.id for c in weighed if c.derived_from is not None],
    )
    # the user's causes hold the share their rules give them; the prior's differential shares what is left
    left = max(0.0, 1.0 - sum(c.confidence for c in kept if c.user_rules_only))
    for c in weighed:
        c.confidence = round(probs[c.id], 4)
    for c in extra:
        c.confidence = round(probs[c.id] * left, 4)
    extra = sorted((c for c in extra if c.confidence >= MIN_PRIOR_ONLY), key=sort_key)[:MAX_PRIOR_ONLY]
    return sorted(kept + extra, key=sort_key), smells


def _mark_derived(causes: list[CauseReport]) -> None:
    """Mark each cause whose evidence another found cause produces (advisor/knowledge/cause_chains.py)."""
    found = {c.id: c.confidence for c in causes}
    by_id = {c.id: c for c in causes}
    for c in causes:
        root = root_of(c.id, found)
        if root is not None:
            c.derived_from = root
            c.derived_note = f"Likely a consequence of {by_id[root].title} [{root}], which produces what it found"


def prior_of(cause: str, prior: dict[str, float], shown: set[str]) -> float:
    """The prior of one cause: its share in the table; for a cause the table does not list, the smallest listed
    share if its mechanism produces a shown symptom (the tables rest on a handful of counted bugs, so a cause they
    did not meet is not known to be rarer than the rarest they did), a quarter of that if it produces none (its
    rules saw something, a second problem perhaps, but not a mechanism of what the run shows)."""
    if cause in prior:
        return prior[cause]
    least = min((p for c, p in prior.items() if c != "other"), default=0.0)
    return least if explains(cause, shown) else least * UNEXPLAINED_SHARE


def posterior(
    rule_confidence: dict[str, float],
    prior: dict[str, float],
    shown: set[str],
    prior_only: Sequence[str] = (),
    base_rate: float = RULE_BASE_RATE,
    exponent: float = LIKELIHOOD_EXPONENT,
) -> dict[str, float]:
    """P(cause | symptoms, evidence) for the causes rules found (their calibrated confidence) and the causes
    listed from the prior alone: prior x likelihood ratio, normalised over the candidates and the prior's
    "other" share. Supporting evidence never lowers a cause below what it would be without it (ratio >= 1)."""
    weights = {
        cause: prior_of(cause, prior, shown) * max(1.0, _odds(p) / _odds(base_rate)) ** exponent
        for cause, p in rule_confidence.items()
    }
    for cause in prior_only:
        weights[cause] = prior_of(cause, prior, shown)
    total = sum(weights.values()) + prior.get("other", 0.0)
    return {cause: w / total for cause, w in weights.items()}
