"""Fit and check the symptom model of advisor/explain.py: the rules' base rate, and the calibration per symptom.

advisor/explain.py weighs each candidate cause of a run's symptom as prior x likelihood ratio, the rules'
calibrated confidence p read as (odds(p) / odds(RULE_BASE_RATE)) ** LIKELIHOOD_EXPONENT. This script diagnoses
every labelled run once, keeps what the posterior is computed from (the symptoms shown, each cause's rule
confidence, the causes argued away or warned about), then recomputes the posterior offline for a grid of base
rates and exponents and prints, for each:

- top-1 / top-3 over the faulty runs and the false-alarm rate (a cause at 50 % or more on a healthy run);
- the expected calibration error (ECE, 10 bins; Guo et al. 2017) of every reported cause, overall and by the
  run's primary symptom, on runs left out of the choice (5-fold cross-validation by run: base rate and exponent
  are chosen on four folds by the log loss of each run's top cause, the ECE measured on the fifth).

Usage::

    python examples/generate.py -j 2 && python benchmarks/mutations/generate.py -j 2
    python benchmarks/symptom_model.py --labels ../shared/eval-dev/corpus/labels.json \\
        --labels benchmarks/mutations/generated/labels.json --labels examples/generated/labels.json \\
        --real ../shared/eval-real-dev/cases.json -j 2 [--cache records.json]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GRID = (0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3)
#: likelihood exponents tried (advisor/explain.py LIKELIHOOD_EXPONENT)
EXPONENTS = (1.0, 1.25, 1.5, 2.0)
FOLDS = 5
THRESHOLD = 0.5


def _labelled(labels: list[str], real: list[str]) -> list[dict]:
    out = []
    for path in map(Path, labels):
        data = json.loads(path.read_text())
        items = data.items() if isinstance(data, dict) else ((d["run"], d) for d in data)
        for name, lab in items:
            base = path.parent if (path.parent / lab["run"]).exists() else path.parent.parent
            out.append(
                {
                    "set": path.parent.name,
                    "name": str(name),
                    "run": str(base / lab["run"]),
                    "baseline": str(base / lab["baseline"]) if lab.get("baseline") else None,
                    "truth": lab.get("cause"),
                    "also_ok": list(lab.get("also_ok") or []),
                }
            )
    for path in map(Path, real):
        for case in json.loads(path.read_text()):
            known = [c for c in case["causes_confirmed"] if not c.startswith("other:")]
            out.append(
                {
                    "set": "real",
                    "name": case["case"],
                    "run": str(path.parent / "cases" / case["case"] / "run"),
                    "baseline": None,
                    "truth": known[0] if known else case["causes_confirmed"][0],
                    "also_ok": known[1:],
                }
            )
    return out


def _record(item: dict) -> dict:
    import advisor

    try:
        r = advisor.diagnose(item["run"], baseline=item["baseline"])
    except Exception as exc:  # a failure is a result too
        return {**item, "error": f"{type(exc).__name__}: {exc}"}
    return {
        **item,
        "shown": [s.id for s in r.summary.symptoms],
        "status": r.summary.symptom_status,
        "kept": [[c.id, c.rule_confidence] for c in r.causes if c.rule_confidence is not None],
        # without a symptom there is no prior to recompute: the confidences as reported (advisor/explain.py step 4)
        "reported": [[c.id, c.confidence] for c in r.causes if c.rule_confidence is not None],
        "derived": [c.id for c in r.causes if c.derived_from is not None],
        "excluded": [c.id for c in r.smells] + [c.id for c in r.ruled_out],
    }


def posterior_of(rec: dict, base_rate: float, exponent: float | None = None) -> list[tuple[str, float]]:
    """The run's ranked causes at ``base_rate`` and likelihood ``exponent`` (default: the shipped one), as
    advisor/explain.py computes them."""
    from advisor import explain

    kept = dict(rec["kept"])
    prior = explain.combined_prior(rec["shown"])
    if not prior:
        return sorted(dict(rec.get("reported", rec["kept"])).items(), key=lambda kv: -kv[1])
    extra = [c for c in prior if c != "other" and c not in kept and c not in rec["excluded"]]
    k = explain.LIKELIHOOD_EXPONENT if exponent is None else exponent
    derived = [c for c in rec.get("derived", []) if c in kept]  # weighed by their prior alone (cause_chains.py)
    rules = {c: p for c, p in kept.items() if c not in derived}
    probs = explain.posterior(rules, prior, set(rec["shown"]), extra + derived, base_rate, k)
    extras = sorted((c for c in extra if probs[c] >= explain.MIN_PRIOR_ONLY), key=lambda c: -probs[c])
    keep = set(kept) | set(extras[: explain.MAX_PRIOR_ONLY])
    return sorted(((c, p) for c, p in probs.items() if c in keep), key=lambda kv: -kv[1])


def _right(rec: dict, cause: str) -> bool:
    return rec["truth"] is not None and (cause == rec["truth"] or cause in rec["also_ok"])


def _group(rec: dict) -> str:
    return rec["shown"][0] if rec["shown"] else (rec["status"] or "none")


def predictions(
    recs: list[dict], base_rate: float, top_only: bool = False, exponent: float | None = None
) -> list[tuple[float, bool, str]]:
    """(confidence, right, primary symptom) of every reported cause, or of each run's top cause only."""
    out = []
    for rec in recs:
        ranked = posterior_of(rec, base_rate, exponent)
        out += [(p, _right(rec, c), _group(rec)) for c, p in (ranked[:1] if top_only else ranked)]
    return out


def ece(preds: list[tuple[float, bool, str]]) -> float:
    bins: dict[int, list[tuple[float, bool]]] = {}
    for p, hit, _ in preds:
        bins.setdefault(min(int(p * 10), 9), []).append((p, hit))
    n = len(preds)
    return (
        sum(len(b) / n * abs(sum(h for _, h in b) / len(b) - sum(p for p, _ in b) / len(b)) for b in bins.values())
        if n
        else 0.0
    )


def log_loss(preds: list[tuple[float, bool, str]]) -> float:
    eps = 1e-4
    return -sum(math.log(min(max(p if h else 1 - p, eps), 1)) for p, h, _ in preds) / max(len(preds), 1)


def scores(recs: list[dict], base_rate: float, exponent: float | None = None) -> dict:
    faulty = [r for r in recs if r["truth"] is not None]
    healthy = [r for r in recs if r["truth"] is None]
    ranked = {id(r): posterior_of(r, base_rate, exponent) for r in recs}
    top1 = sum(bool(ranked[id(r)]) and _right(r, ranked[id(r)][0][0]) for r in faulty) / max(len(faulty), 1)
    top3 = sum(any(_right(r, c) for c, _ in ranked[id(r)][:3]) for r in faulty) / max(len(faulty), 1)
    alarms = sum(any(p >= THRESHOLD for _, p in ranked[id(r)]) for r in healthy) / max(len(healthy), 1)
    return {"top1": top1, "top3": top3, "false_alarm": alarms}


#: symptom -> family: symptoms whose causes compete alike, pooled so that each family holds enough runs
FAMILY: dict[str, str] = {
    "nonfinite_loss_at_start": "nonfinite",
    "nonfinite_loss": "nonfinite",
    "nonfinite_eval_loss": "nonfinite",
    "nonfinite_gradients": "nonfinite",
    "loss_scale_collapses": "nonfinite",
    "loss_explodes": "nonfinite",
    "crash": "nonfinite",
    "loss_stuck": "no_learning",
    "loss_at_chance": "no_learning",
    "score_at_chance": "no_learning",
    "score_near_zero": "no_learning",
    "slow_or_unfinished": "no_learning",
    "predictions_saturated": "no_learning",
    "loss_at_floor": "floor",
    "metric_inconsistent": "floor",
    "loss_oscillates": "floor",
    "eval_worse_than_train": "generalisation",
    "baseline_gap": "reference_gap",
    "target_gap": "reference_gap",
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labels", action="append", default=[])
    ap.add_argument("--real", action="append", default=[])
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--cache", help="JSON file of the records: read if it exists, else written")
    args = ap.parse_args(argv)
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.is_file():
        recs = json.loads(cache.read_text())
    else:
        items = _labelled(args.labels, args.real)
        with ProcessPoolExecutor(args.jobs) as pool:
            recs = list(pool.map(_record, items, chunksize=4))
        if cache is not None:
            cache.write_text(json.dumps(recs))
    bad = [r for r in recs if "error" in r]
    recs = [r for r in recs if "error" not in r]
    print(f"{len(recs)} runs ({len(bad)} failed)")
    for k in EXPONENTS:
        for b in GRID:
            preds = predictions(recs, b, exponent=k)
            tops = predictions(recs, b, top_only=True, exponent=k)
            by_set = {s: scores([r for r in recs if r["set"] == s], b, k) for s in sorted({r["set"] for r in recs})}
            sets = "  ".join(f"{s}: {v['top1']:.2f}/{v['top3']:.2f}/{v['false_alarm']:.2f}" for s, v in by_set.items())
            print(
                f"exponent {k:<4} base rate {b:<5} ECE {ece(preds):.3f} top-cause ECE {ece(tops):.3f} "
                f"log loss {log_loss(tops):.3f}  {sets}"
            )
    order = list(range(len(recs)))
    random.Random(0).shuffle(order)
    every: list[tuple[float, bool, str]] = []
    top: list[tuple[float, bool, str]] = []
    chosen = []
    pairs = [(b, k) for k in EXPONENTS for b in GRID]
    for fold in range(FOLDS):
        fit = [recs[i] for j, i in enumerate(order) if j % FOLDS != fold]
        held = [recs[i] for j, i in enumerate(order) if j % FOLDS == fold]
        # chosen by the log loss of each run's top cause: the confidence a report leads with
        b, k = min(pairs, key=lambda bk: log_loss(predictions(fit, bk[0], top_only=True, exponent=bk[1])))
        chosen.append((b, k))
        every += predictions(held, b, exponent=k)
        top += predictions(held, b, top_only=True, exponent=k)
    print(f"cross-validated ((base rate, exponent) chosen by top-cause log loss on four folds: {chosen}):")
    print(
        f"every cause: ECE {ece(every):.3f} over {len(every)} causes; top cause of each run: ECE {ece(top):.3f} "
        f"over {len(top)} runs"
    )
    print(f"  {'symptom family':<16} {'causes':>6} {'ECE':>6} {'runs':>5} {'top-cause ECE':>14}")
    for fam in sorted(set(FAMILY.values())) + ["(no symptom)"]:
        part = [x for x in every if FAMILY.get(x[2], "(no symptom)") == fam]
        tops = [x for x in top if FAMILY.get(x[2], "(no symptom)") == fam]
        print(f"  {fam:<16} {len(part):>6} {ece(part):6.3f} {len(tops):>5} {ece(tops):14.3f}")
    # the shipped base rate involves no fit on these runs: its figures need no cross-validation
    from advisor.explain import LIKELIHOOD_EXPONENT, RULE_BASE_RATE

    shipped = predictions(recs, RULE_BASE_RATE, top_only=True)
    print(
        f"at the shipped base rate {RULE_BASE_RATE} and exponent {LIKELIHOOD_EXPONENT} (advisor/explain.py): "
        f"top cause of each run, ECE {ece(shipped):.3f}"
    )
    print(f"  {'symptom family':<16} {'runs':>5} {'ECE':>6} {'confidence':>10} {'right':>6}")
    for fam in sorted(set(FAMILY.values())) + ["(no symptom)"]:
        tops = [x for x in shipped if FAMILY.get(x[2], "(no symptom)") == fam]
        if tops:
            conf, hit = sum(p for p, _, _ in tops) / len(tops), sum(h for _, h, _ in tops) / len(tops)
            print(f"  {fam:<16} {len(tops):>5} {ece(tops):6.3f} {conf:10.2f} {hit:6.2f}")
    for name in sorted({r["set"] for r in recs}):
        tops = predictions([r for r in recs if r["set"] == name], RULE_BASE_RATE, top_only=True)
        if tops:
            conf, hit = sum(p for p, _, _ in tops) / len(tops), sum(h for _, h, _ in tops) / len(tops)
            print(f"  set {name:<12} {len(tops):>5} {ece(tops):6.3f} {conf:10.2f} {hit:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
