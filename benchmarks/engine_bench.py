"""Engine speed: 200 rules over 10,000 facts, one diagnosis's engine time on
each back-end (durable-rules where it imports, the built-in matcher), as a
ratio against a plain Python loop evaluating the same conditions
(advisor/rulebase/matcher.py: plain_evaluate), measured in the same run.

    OMP_NUM_THREADS=1 python benchmarks/engine_bench.py [--rules 200] [--facts 10000] [--repeat 3]

Prints the times, the ratios, and whether every back-end gave the loop's firings.
Numbers on shared machines are noisy: compare ratios, not seconds.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.facts.hparams import Hyperparameter  # noqa: E402
from advisor.facts.loss_curve import LossCurve  # noqa: E402
from advisor.rulebase import backends, matcher  # noqa: E402
from advisor.rulebase.infer import RuleBase  # noqa: E402
from advisor.rulebase.load import parse_rules_text  # noqa: E402

SHAPES = [
    "    all:\n      - loss_curve: {{split: train, points: {{gt: {a}}}, min_value: {{lt: {b}}}}}",
    "    all:\n      - loss_curve: {{split: eval, last_value: {{between: [{f}, {c}]}}}}\n"
    "      - hyperparameter: {{name: learning_rate, value: {{ge: {d}}}}}",
    "    all:\n      - hyperparameter: {{name: p{a}, value: {{gt: {b}}}}}",
    "    all:\n      - loss_curve: {{split: train, last_value: {{gt: {c}}}}}\n"
    "      - loss_curve: {{split: eval, last_value: {{lt: {{ref: loss_curve.last_value}}}}, points: {{gt: {e}}}}}\n"
    "        as: ev",
    "    all:\n      - loss_curve: {{points: {{ge: {a}}}, diverged: true}}\n"
    "      - not: {{hyperparameter: {{name: learning_rate, value: {{lt: {d}}}}}}}",
]


def make_rules(n: int, rng: random.Random):
    parts = []
    for i in range(n):
        # thresholds as selective as real rules: most facts are healthy, few rules fire
        when = rng.choice(SHAPES).format(a=rng.randint(2900, 3000), b=round(rng.uniform(0, 0.02), 4),
                                         c=round(rng.uniform(2.9, 3), 3), d=round(rng.uniform(0.0001, 0.1), 5),
                                         e=rng.randint(2950, 3000), f=round(rng.uniform(2.9, 2.95), 3))
        parts.append(f"- id: bench-{i:03d}\n  cause: custom\n  title: t\n  severity: low\n  confidence: 0.3\n"
                     f"  when:\n{when}\n  evidence: x\n  remedies: [x]\n  doc: {{what: a, why: b, fix: c}}\n"
                     f"  tests: {{fires: [{{name: a, facts: []}}], quiet: [{{name: b, facts: []}}]}}\n")
    rules, diags = parse_rules_text("".join(parts), "bench.yaml")
    assert len(rules) == n, [d.format() for d in diags if d.severity == "error"][:3]
    return rules


def make_facts(n: int, rng: random.Random):
    facts = []
    for i in range(n):
        if i % 2:
            facts.append(LossCurve(split=rng.choice(["train", "eval"]), points=rng.randint(1, 3000),
                                   min_value=rng.uniform(0, 2), last_value=rng.uniform(0, 3),
                                   diverged=rng.random() < 0.1))
        else:
            # a run has one value per hyper-parameter name; many names, as in a big config
            facts.append(Hyperparameter(name=f"p{i // 2}", value=rng.uniform(0, 1)))
    facts.append(Hyperparameter(name="learning_rate", value=0.05))
    return facts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=int, default=200)
    ap.add_argument("--facts", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = random.Random(5)
    rules = make_rules(args.rules, rng)
    facts = make_facts(args.facts, rng)
    dicts = [f.model_dump(exclude={"source"}) for f in facts]
    ids = {id(f): i for i, f in enumerate(facts)}
    engines = ["python"] + ([] if backends.durable_problem() else ["durable"])
    rbs = {name: RuleBase(rules, engine=name) for name in engines}
    for rb in rbs.values():
        rb.infer(facts[:10])  # durable: register the rulesets once (a per-process cost)
    times: dict[str, list[float]] = {name: [] for name in engines + ["loop"]}
    found: dict[str, list] = {}
    for _ in range(args.repeat):
        for name, rb in rbs.items():
            t0 = time.perf_counter()
            firings, _ = rb.infer(facts)
            times[name].append(time.perf_counter() - t0)
            found[name] = sorted((f.rule.id, tuple(sorted((a, ids[id(x)]) for a, x in f.facts.items())))
                                 for f in firings)
        t0 = time.perf_counter()
        ref = [(r.id, b) for r in rules for b in matcher.plain_evaluate(r, dicts)]
        times["loop"].append(time.perf_counter() - t0)
    ref_set = sorted((rid, tuple(sorted(b.items()))) for rid, b in ref)
    tr = min(times["loop"])
    print(f"python {sys.version.split()[0]}  rules={args.rules} facts={len(facts)} firings={len(ref_set)}")
    print(f"plain Python loop over the same conditions:        {tr:.3f} s")
    for name in engines:
        te = min(times[name])
        label = {"durable": "durable-rules", "python": "built-in matcher"}[name]
        print(f"{label:17s} (incl. conversion and evidence): {te:.3f} s  ratio to the loop {te / tr:.2f}"
              f"  same firings: {found[name] == ref_set}")
    if backends.durable_problem():
        print(f"durable-rules not measured: {backends.durable_problem()}")


if __name__ == "__main__":
    main()
