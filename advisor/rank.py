"""Firings -> ranked causes, each with one combined confidence.

Combination (documented in docs/writing-rules.md, tested in tests/test_rank.py):

- a rule that fired several times counts once, with its own confidence
  (several matching facts are one piece of evidence, not many);
- rules of one cause that matched the same facts read one observation (two
  rules on one loss curve are not two witnesses): they count once, at the
  strongest rule's confidence; a rule whose facts are a subset of another's
  (the learning rate alone, and the learning rate with the curve it explains)
  is absorbed by the larger one;
- supporting groups (c > 0) combine by noisy-OR: P = 1 - Π(1 - c);
- opposing rules (c < 0) the same on |c|: N = 1 - Π(1 - |c|);
- the two merge with the certainty-factor formula CF = (P - N) / (1 - min(P, N)),
  kept as ``raw_confidence``; the reported confidence is CF through the
  calibration map (advisor/calibration.py), 0 where CF <= 0. The map was fitted
  on the built-in rules: a cause only the user's rules support reports CF itself
  (``user_rules_only``), so a rule written at 0.5 reads 50 %.
Why this and not MYCIN's pairwise rule applied in sequence: MYCIN's mixed-sign
step is not associative, so the result would depend on rule order. Pooling
each sign first with noisy-OR is commutative and associative, reaches 1 only
with a certain rule, and two independent 0.6 rules give 0.84, more than
either alone, which is what an expert expects of independent evidence.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable

from advisor.calibration import calibrate
from advisor.causes import CAUSE_BY_ID
from advisor.knowledge.symptom_priors import FIELD_COUNTS
from advisor.rulebase import cache
from advisor.rulebase.infer import Firing
from advisor.rulebase.schema import SEVERITY_RANK, Rule
from advisor.report.model import CauseReport, EvidenceItem


def noisy_or(values: Iterable[float]) -> float:
    prod = 1.0
    for v in values:
        prod *= 1.0 - min(max(v, 0.0), 1.0)
    return 1.0 - prod


def combine(confidences: Iterable[float]) -> float:
    """Support and opposition -> one certainty factor in [-1, 1]."""
    cs = list(confidences)
    p = noisy_or(c for c in cs if c > 0)
    n = noisy_or(-c for c in cs if c < 0)
    denom = 1.0 - min(p, n)
    if denom <= 0:  # certain support and certain opposition: undecided
        return 0.0
    return (p - n) / denom


def pooled_confidences(firings: list[Firing]) -> list[float]:
    """One confidence per distinct observation among firings of one sign.

    Firings that matched the same set of facts read one observation: they count once, at the strongest
    (largest |c|). A firing whose facts are a strict subset of another's is absorbed by it: the larger
    rule saw the same thing and more, so it counts at no less than the smaller one and the smaller one
    not again. What remains is independent evidence, pooled by noisy-OR in ``combine``.
    """
    best: dict[frozenset[int], float] = {}
    for f in firings:
        key = frozenset(id(fact) for fact in f.facts.values())
        c = f.rule.confidence
        best[key] = max(best.get(key, c), c, key=abs)
    keys = list(best)
    out = []
    for k in keys:
        supersets = [o for o in keys if k < o]
        if supersets:
            for o in supersets:
                best[o] = max(best[o], best[k], key=abs)
    for k in keys:
        if not any(k < o for o in keys):
            out.append(best[k])
    return out


_CLAUSE_END = re.compile(r"[.;:!?(,\u2014]| - | (?:until|so that|before|after|if|when|unless|while) ")


def remedy_key(text: str) -> str:
    """A remedy's leading clause, normalised: 'Train longer (more epochs ...)' and 'Train longer until the eval
    loss levels off.' say the same first thing and are shown once."""
    head = _CLAUSE_END.split(text, maxsplit=1)[0]
    words = re.findall(r"[a-z0-9_]+", head.lower())
    return " ".join(words[:6])


def _cite(firing: Firing) -> str | None:
    cites = []
    for fact in firing.facts.values():
        if fact.source is not None:
            c = fact.source.cite()
            cites.append(("baseline: " + c) if fact.side == "baseline" else c)
    return "; ".join(dict.fromkeys(cites)) or None


def _evidence(f: Firing) -> EvidenceItem:
    code = next((fact for fact in f.facts.values() if fact.kind == "code_finding"), None)
    return EvidenceItem(
        rule=f.rule.id,
        text=f.evidence,
        confidence=f.rule.confidence,
        source=_cite(f),
        facts={alias: fact.model_dump(mode="json", exclude_none=True) for alias, fact in f.facts.items()},
        code=getattr(code, "code", None),
        code_line=getattr(code, "line", None),
    )


#: confidence from which a pre-check cause is listed before every other cause
PRE_CHECK_FIRST_FROM = 0.5

#: fact kinds that show what the run did (its curves, scores, tensors, dumps, crashes, its gap to the baseline):
#: a rule that reads one of them observes the run; a rule that reads none finds a setting, a structure or a
#: property of the data that often causes trouble (a smell), whatever the run went on to do
OBSERVED_KINDS = frozenset(
    {
        "loss_curve",
        "generalization_gap",
        "chance_level",
        "grad_norm_trend",
        "baseline_deviation",
        "benchmark_gap",
        "loss_scale_trend",
        "overflow_events",
        "training_crash",
        "eval_score",
        "train_score",
        "final_evaluation",
        "accuracy_loss_bound",
        "tensor_dynamics",
        "param_dynamics",
        "activation_stats",
        "tied_params",
        "op_comparison",
        "op_comparison_summary",
        "op_anomaly",
        "rank_divergence",
        "log_message",
        "finding",
        "symptom",
        "symptom_summary",
        "baseline_comparability",  # the pair itself: a baseline of another problem voids the comparison
    }
)


def observes(rule: Rule) -> bool:
    """Whether the rule reads something the run did (a curve, score, tensor, dump ...), not only its settings."""
    return any(p.kind in OBSERVED_KINDS for p in rule.patterns())


def builtin(rule: Rule) -> bool:
    """Whether ``rule`` is one of the shipped rules (loaded from the built-in rule base), not the user's."""
    return cache.origin(rule) is not None


def sort_key(c: CauseReport) -> tuple:
    """Best first: a found pre-check cause (the benchmark itself is not a valid reference) comes first, since
    nothing compared against that baseline can be trusted (routine.md, pre-tuning check); then confidence."""
    return (
        not (c.stage == "pre_check" and c.confidence >= PRE_CHECK_FIRST_FROM),
        -c.confidence,
        -c.raw_confidence,
        -SEVERITY_RANK[c.severity],
        -FIELD_COUNTS.get(c.id, 0.0),  # (level so far: the cause more often found in real faults first)
        c.id,
    )


def rank(firings: list[Firing]) -> tuple[list[CauseReport], list[CauseReport]]:
    """(causes with confidence > 0 sorted best first, causes argued away to <= 0)."""
    by_cause: dict[str, list[Firing]] = defaultdict(list)
    for f in firings:
        if f.rule.cause:
            by_cause[f.rule.cause].append(f)
    ranked: list[CauseReport] = []
    for cause_id, fs in by_cause.items():
        per_rule: dict[str, Firing] = {}
        for f in fs:  # firings arrive sorted; keep each rule's first
            per_rule.setdefault(f.rule.id, f)
        support = [f for f in per_rule.values() if f.rule.confidence > 0]
        oppose = [f for f in per_rule.values() if f.rule.confidence < 0]
        conf = combine(pooled_confidences(support) + pooled_confidences(oppose))
        support.sort(key=lambda f: (-f.rule.confidence, f.rule.id))
        oppose.sort(key=lambda f: (f.rule.confidence, f.rule.id))
        severity = max((f.rule.severity for f in support), key=lambda s: SEVERITY_RANK[s], default="low")
        remedies: list[str] = []
        seen: set[str] = set()
        for f in support:  # strongest rule first: its wording of a shared remedy is kept
            for r in f.rule.remedies:
                key = remedy_key(r) or r
                if key not in seen:
                    seen.add(key)
                    remedies.append(r)
        known = CAUSE_BY_ID.get(cause_id)
        first = (support or oppose)[0].rule
        title = known.title if known else first.cause_title or first.title
        # the calibration map was fitted on the built-in rules' outputs: a user's rules say what they mean
        users_only = not any(builtin(f.rule) for f in per_rule.values())
        ranked.append(
            CauseReport(
                id=cause_id,
                title=title,
                stage=known.stage if known else None,
                confidence=round(max(conf, 0.0) if users_only else calibrate(conf), 4),
                raw_confidence=round(conf, 4),
                severity=severity,
                evidence=[_evidence(f) for f in support],
                opposing=[_evidence(f) for f in oppose],
                remedies=remedies,
                rules=sorted(per_rule),
                is_smell=bool(support) and not any(observes(f.rule) for f in support),
                user_rules_only=users_only,
            )
        )
    ranked.sort(key=sort_key)
    return [c for c in ranked if c.raw_confidence > 0], [c for c in ranked if c.raw_confidence <= 0]
