"""How often does the advisor name the true cause? Diagnoses every labelled example run.

Reads a labels file (run name -> true cause id or null for a healthy control,
run folder, baseline folder) written by examples/generate.py, calls
``advisor.diagnose(run, baseline=...)`` on each run and prints:

- top-1: share of faulty runs whose true cause is ranked first;
- top-3: share whose true cause is among the first three;
- false-alarm rate: share of healthy runs with any cause at confidence >= 0.5;
- calibration: every reported cause of every run is one prediction, right when
  it is the run's true cause (or one of the label's ``also_ok`` ids), wrong
  otherwise (every cause of a healthy run is wrong). The reliability table
  bins the predictions by confidence and sets each bin's mean confidence
  against its observed hit rate; the expected calibration error is
  ECE = sum over bins of (n_bin / n) * |hit rate - mean confidence|
  (Guo et al. 2017, https://arxiv.org/abs/1706.04599).

overall and per cause, then every miss with what was ranked instead, so the
rule owners can see which rule to look at.

Usage::

    python examples/generate.py -j 2                    # once: writes examples/generated/
    python benchmarks/accuracy.py [--runs examples/generated] [--json out.json] [-v]
    python benchmarks/accuracy.py --labels OTHER/labels.json ...  # any other labelled set

The mutation corpus (benchmarks/mutations/generate.py) is scored per fault operator with
``--runs benchmarks/mutations/generated --no-committed --by operator``; a label's ``also_ok``
causes count as right, as in ../shared/eval-dev.

The small runs committed under examples/ (examples/labels.json) are diagnosed
too unless ``--no-committed`` is given. ``--labels`` takes more labelled sets:
a JSON object (run name -> {"run", "baseline", "cause", "also_ok"}) as
examples/generate.py writes, or a JSON list of such entries; paths are
relative to the labels file's folder, or to its parent when they start there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

THRESHOLD = 0.5  # a cause at or above this confidence counts as found (report-json.md)


@dataclass
class Outcome:
    name: str
    truth: str | None
    ranked: list[tuple[str, float]] = field(default_factory=list)  # (cause id, confidence), best first
    error: str | None = None
    seconds: float = 0.0
    also_ok: tuple[str, ...] = ()  # ids an expert accepts as equally right
    raw: list[float] = field(default_factory=list)  # each ranked cause's combined confidence before calibration
    group: str | None = None  # what --by groups on (the label's operator, ...); None: the true cause
    warned: list[str] = field(default_factory=list)  # the report's warnings (smells of a run with no symptom)

    def is_right(self, cause: str) -> bool:
        return self.truth is not None and (cause == self.truth or cause in self.also_ok)

    @property
    def top1(self) -> bool:
        return bool(self.ranked) and self.is_right(self.ranked[0][0])

    @property
    def top3(self) -> bool:
        return any(self.is_right(c) for c, _ in self.ranked[:3])

    @property
    def named(self) -> bool:
        """The true cause is in the top three causes, or, with no cause at the report threshold, among the
        warnings (a smell the run shows no symptom of: what the report is meant to say of such a run)."""
        if self.top3:
            return True
        return not any(p >= THRESHOLD for _, p in self.ranked) and any(self.is_right(c) for c in self.warned)

    @property
    def alarms(self) -> list[tuple[str, float]]:
        return [(c, p) for c, p in self.ranked if p >= THRESHOLD]


def load_labels(path: Path, prefix: str = "") -> list[tuple[str, dict, Path]]:
    """(name, label, folder the label's paths are relative to) for each entry of a labels file:
    a JSON object of name -> label, or a JSON list of labels (named by their run folder)."""
    labels = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(labels, list):  # named by the run's path (runs/x/run and runs/y/run are two runs)
        labels = {Path(lab["run"]).as_posix().removeprefix("runs/"): lab for lab in labels}
    out = []
    for name, lab in sorted(labels.items()):
        base = path.parent
        if not (base / lab["run"]).exists() and (base.parent / lab["run"]).exists():
            base = base.parent
        out.append((prefix + name, lab, base))
    return out


def _diagnose_here(run: Path, baseline: Path | None) -> dict:
    """Diagnose in this process; the ranked causes as JSON-able data."""
    import advisor

    t0 = time.perf_counter()
    try:
        report = advisor.diagnose(run, baseline=baseline)
        return {"ranked": [[c.id, float(c.confidence)] for c in report.causes],
                "warned": [c.id for c in report.smells],
                "raw": [float(c.raw_confidence) for c in report.causes],
                "seconds": time.perf_counter() - t0}
    except Exception as exc:  # an exception is a result of the benchmark too
        return {"error": f"{type(exc).__name__}: {exc}", "seconds": time.perf_counter() - t0}


def diagnose_one(name: str, label: dict, base: Path, isolate: bool = True, tries: int = 2) -> Outcome:
    """Diagnose one labelled run, by default in a child process so that a crash of the
    engine's native code is recorded as that run's result instead of ending the benchmark."""
    out = Outcome(name, label.get("cause"), also_ok=tuple(label.get("also_ok") or ()))
    run = base / label["run"]
    baseline = base / label["baseline"] if label.get("baseline") else None
    if not isolate:
        res = _diagnose_here(run, baseline)
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--one", str(run)]
        if baseline is not None:
            cmd += ["--baseline", str(baseline)]
        res = {}
        for attempt in range(tries):
            proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            if proc.returncode == 0 and proc.stdout.strip():
                res = json.loads(proc.stdout.strip().splitlines()[-1])
                break
            tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            res = {"error": f"diagnosis process died with exit status {proc.returncode} "
                            f"after {attempt + 1} tries: {tail}", "seconds": 0.0}
    out.ranked = [(c, p) for c, p in res.get("ranked", [])]
    out.raw = list(res.get("raw", []))
    out.warned = list(res.get("warned", []))
    out.error = res.get("error")
    out.seconds = res.get("seconds", 0.0)
    return out


def _ranked_text(o: Outcome, k: int = 3) -> str:
    if o.error:
        return f"ERROR {o.error}"
    return ", ".join(f"{c} {p:.2f}" for c, p in o.ranked[:k]) or "(no cause)"


def summarise(outcomes: list[Outcome]) -> dict:
    faulty = [o for o in outcomes if o.truth is not None]
    healthy = [o for o in outcomes if o.truth is None]
    per: dict[str, dict] = {}
    for o in faulty:
        d = per.setdefault(o.group or o.truth, {"runs": 0, "top1": 0, "top3": 0, "misses": []})
        d["runs"] += 1
        d["top1"] += o.top1
        d["top3"] += o.top3
        if not o.top1:
            d["misses"].append({"run": o.name, "ranked": _ranked_text(o)})
    return {
        "runs": len(outcomes), "faulty": len(faulty), "healthy": len(healthy),
        "top1": sum(o.top1 for o in faulty) / len(faulty) if faulty else None,
        "top3": sum(o.top3 for o in faulty) / len(faulty) if faulty else None,
        "named": sum(o.named for o in faulty) / len(faulty) if faulty else None,
        "named_as_warning": [o.name for o in faulty if o.named and not o.top3],
        "false_alarm_rate": sum(bool(o.alarms) for o in healthy) / len(healthy) if healthy else None,
        "false_alarms_by_group": {g: sum(bool(o.alarms) for o in healthy if (o.group or "healthy") == g)
                                  for g in sorted({o.group or "healthy" for o in healthy})},
        "false_alarms": [{"run": o.name, "alarms": [f"{c} {p:.2f}" for c, p in o.alarms]} for o in healthy if o.alarms],
        "errors": [{"run": o.name, "error": o.error} for o in outcomes if o.error],
        "per_cause": dict(sorted(per.items())),
        "seconds_per_run": sum(o.seconds for o in outcomes) / len(outcomes) if outcomes else None,
        "calibration": reliability(outcomes),
    }


BINS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)


def ece(preds: list[tuple[float, bool]]) -> float:
    """Expected calibration error of (confidence, right) predictions over BINS (nan without predictions)."""
    return reliability_of(preds)["ece"] if preds else float("nan")


def reliability(outcomes: list[Outcome]) -> dict:
    """Every reported cause is a prediction: confidence bins vs observed hit rate, and the ECE."""
    return reliability_of([(p, o.is_right(c)) for o in outcomes if not o.error for c, p in o.ranked])


def reliability_of(preds: list[tuple[float, bool]]) -> dict:
    """Confidence bins vs observed hit rate, and the ECE = sum of n_bin / n * |hit rate - mean confidence|."""
    rows = []
    total = 0.0
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        inside = [(p, hit) for p, hit in preds if lo <= p < hi]
        if not inside:
            continue
        conf = sum(p for p, _ in inside) / len(inside)
        rate = sum(hit for _, hit in inside) / len(inside)
        total += len(inside) / len(preds) * abs(rate - conf)
        rows.append({"bin": f"{lo:.1f}-{min(hi, 1.0):.1f}", "n": len(inside), "mean_confidence": round(conf, 3),
                     "hit_rate": round(rate, 3)})
    return {"predictions": len(preds), "ece": round(total, 4) if preds else None, "bins": rows}


def _pct(v: float | None) -> str:
    return "  n/a" if v is None else f"{v:5.2f}"


def print_summary(s: dict) -> None:
    print(f"\n{'cause':24s} {'runs':>4s} {'top-1':>6s} {'top-3':>6s}")
    for cause, d in s["per_cause"].items():
        print(f"{cause:24s} {d['runs']:4d} {_pct(d['top1'] / d['runs']):>6s} {_pct(d['top3'] / d['runs']):>6s}")
    print(f"\nfaulty runs {s['faulty']}: top-1 {_pct(s['top1'])}  top-3 {_pct(s['top3'])}   (aim >= 0.90 / 0.98)")
    print(f"faulty runs named in the top three causes or, with none at 50 %, as a warning: {_pct(s['named'])} "
          f"({len(s['named_as_warning'])} as a warning)")
    print(f"healthy runs {s['healthy']}: false-alarm rate {_pct(s['false_alarm_rate'])}   (aim <= 0.05)")
    cal = s["calibration"]
    if cal["predictions"]:
        print(f"\ncalibration over {cal['predictions']} reported causes: ECE {cal['ece']:.3f}   (aim <= 0.10)")
        print(f"  {'confidence':12s} {'n':>5s} {'mean':>6s} {'right':>6s}")
        for b in cal["bins"]:
            print(f"  {b['bin']:12s} {b['n']:5d} {b['mean_confidence']:6.2f} {b['hit_rate']:6.2f}")
    if s["seconds_per_run"] is not None:
        print(f"diagnosis time: {s['seconds_per_run']:.2f} s per run on average")
    misses = [(c, m) for c, d in s["per_cause"].items() for m in d["misses"]]
    if misses:
        print("\nmisses (true cause not ranked first):")
        for cause, m in misses:
            print(f"  {cause:22s} {m['run']:50s} -> {m['ranked']}")
    if s["false_alarms"]:
        print("\nfalse alarms (healthy runs with a cause at confidence >= 0.5):")
        for fa in s["false_alarms"]:
            print(f"  {fa['run']:50s} -> {', '.join(fa['alarms'])}")
    if s["errors"]:
        print("\nerrors:")
        for e in s["errors"]:
            print(f"  {e['run']}: {e['error']}")


def _progress(verbose: bool, name: str, o: Outcome) -> None:
    if verbose:
        mark = "ok  " if (o.top1 if o.truth else not o.alarms) else "MISS"
        print(f"{mark} {name:55s} truth={o.truth or 'healthy':22s} -> {_ranked_text(o)}", flush=True)


def markdown(s: dict) -> str:
    """The figures as Markdown, for README or a results file."""
    lines = ["| cause | runs | top-1 | top-3 |", "|---|---:|---:|---:|"]
    for cause, d in s["per_cause"].items():
        lines.append(f"| `{cause}` | {d['runs']} | {d['top1'] / d['runs']:.2f} | {d['top3'] / d['runs']:.2f} |")
    lines += ["", f"Faulty runs: {s['faulty']}, top-1 **{_pct(s['top1']).strip()}**, top-3 **{_pct(s['top3']).strip()}**"
              f" (aim >= 0.90 / 0.98). Healthy runs: {s['healthy']}, false-alarm rate"
              f" **{_pct(s['false_alarm_rate']).strip()}** (aim <= 0.05)."]
    cal = s["calibration"]
    if cal["predictions"]:
        lines += ["", f"Calibration over {cal['predictions']} reported causes: expected calibration error "
                  f"**{cal['ece']:.3f}** (aim <= 0.10).", "", "| confidence | causes | mean confidence | right |",
                  "|---|---:|---:|---:|"]
        lines += [f"| {b['bin']} | {b['n']} | {b['mean_confidence']:.2f} | {b['hit_rate']:.2f} |" for b in cal["bins"]]
    misses = [(c, m) for c, d in s["per_cause"].items() for m in d["misses"]]
    if misses:
        lines += ["", "Misses (true cause not ranked first):", ""]
        lines += [f"- `{m['run']}` ({c}): {m['ranked']}" for c, m in misses]
    if s["false_alarms"]:
        lines += ["", "False alarms:", ""]
        lines += [f"- `{fa['run']}`: {', '.join(fa['alarms'])}" for fa in s["false_alarms"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default=str(ROOT / "examples" / "generated"),
                    help="folder holding labels.json of generated runs (default examples/generated)")
    ap.add_argument("--no-committed", action="store_true", help="skip the runs committed under examples/")
    ap.add_argument("--no-generated", action="store_true", help="skip examples/generated (the --runs folder)")
    ap.add_argument("--labels", action="append", default=[], metavar="FILE",
                    help="another labelled set (labels.json; repeatable), e.g. ../shared/eval-dev/corpus/labels.json")
    ap.add_argument("--only", nargs="+", default=[], metavar="CAUSE", help="cause ids (or 'healthy') to benchmark")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--markdown", metavar="FILE", help="also write the figures as a Markdown table")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each run's top causes")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="diagnoses in parallel (default 1)")
    ap.add_argument("--by", metavar="KEY", help="group the table by this label key (e.g. operator) instead of the "
                    "true cause; healthy runs are counted under their own group")
    ap.add_argument("--in-process", action="store_true", help="diagnose in this process (faster; a crash ends it)")
    ap.add_argument("--one", metavar="RUN", help=argparse.SUPPRESS)  # child mode: one diagnosis as JSON
    ap.add_argument("--baseline", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(_diagnose_here(Path(args.one), Path(args.baseline) if args.baseline else None)))
        return 0

    entries: list[tuple[str, dict, Path]] = []
    gen_labels = Path(args.runs) / "labels.json"
    if args.no_generated:
        pass
    elif gen_labels.is_file():
        entries += load_labels(gen_labels)
    else:
        print(f"accuracy.py: no {gen_labels}; generate the runs first: python examples/generate.py -j 2",
              file=sys.stderr)
    committed = ROOT / "examples" / "labels.json"
    if not args.no_committed and committed.is_file():
        entries += [(f"examples/{n}", lab, base) for n, lab, base in load_labels(committed)]
    for extra in args.labels:
        path = Path(extra)
        if not path.is_file():
            print(f"accuracy.py: error: {path}: no such labels file", file=sys.stderr)
            return 2
        entries += load_labels(path, prefix=f"{path.parent.parent.name}/")
    if args.only:
        entries = [e for e in entries if (e[1].get("cause") or "healthy") in args.only]
    if not entries:
        print("accuracy.py: error: no labelled runs to diagnose", file=sys.stderr)
        return 2
    outcomes = []
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, args.jobs if not args.in_process else 1)) as pool:
        results = pool.map(lambda e: diagnose_one(*e, isolate=not args.in_process), entries)
        for (name, label, _), o in zip(entries, results):
            if args.by:
                o.group = str(label.get(args.by) or "healthy")
            outcomes.append(o)
            _progress(args.verbose, name, o)
    s = summarise(outcomes)
    print_summary(s)
    if args.json:
        Path(args.json).write_text(json.dumps(s, indent=1), encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(markdown(s), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
