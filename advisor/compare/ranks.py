"""Which rank and which step first diverged: the step x rank view of a compared dump tree.

Each compared pair becomes a ``Cell``: its step and rank, its counts, and the
first operator that deviates there (the localised source, else the first
deviating operator) with what kind of operator it is: a collective
communication (all-reduce, all-gather, broadcast, HCCL/NCCL), the data the
rank was fed (the first operator's inputs already differ), or computation.

``divergence`` reads the cells at the first step where anything deviates:
- every rank deviates at the same operator: the operator (or its kernel) is
  wrong on this platform, the same on every card;
- one rank (or a few) deviates while the others match: that rank's hardware,
  its communication, or its data shard;
- every rank deviates, at different operators: nothing rank-specific is
  singled out.
A faulty rank's gradients reach every rank through the all-reduce of the next
update, so later steps are described (``spread``) but never decide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from advisor.compare.engine import Comparison, Row
from advisor.compare.localise import Localisation

#: collective communication operators (torch.distributed / msprobe ``Distributed.*``, MindSpore, HCCL, NCCL)
COMMUNICATION = re.compile(
    r"all[_-]?reduce|all[_-]?gather|reduce[_-]?scatter|all[_-]?to[_-]?all|alltoall|broadcast(?![_-]?(?:to|tensors))"
    r"|\bhcom|hccl|nccl|c10d|distributed\.|\bi?send\b|\bi?recv\b|\bbarrier\b",
    re.I,
)

OpKind = Literal["communication", "data", "compute"]
Pattern = Literal[
    "none", "single_rank", "one_rank", "some_ranks", "every_rank_same_operator", "every_rank_different_operators"
]


@dataclass
class Cell:
    step: int | None
    rank: int | None
    run: str
    baseline: str
    compared: int = 0
    errors: int = 0
    warnings: int = 0
    first_op: str | None = None
    first_op_type: str | None = None
    first_tensor: str | None = None
    first_kind: OpKind | None = None
    #: the first deviating operator's place in the execution order
    first_order: int | None = None
    cosine: float | None = None
    max_abs_err: float | None = None
    euclid_rel_dist: float | None = None
    #: why the pair could not be compared (a dump that could not be read), else None
    problem: str | None = None

    @property
    def deviates(self) -> bool:
        return self.first_op is not None


def op_kind(op: str, op_type: str | None) -> OpKind:
    return "communication" if COMMUNICATION.search(f"{op} {op_type or ''}") else "compute"


def _first_deviating(rows: list[Row]) -> Row | None:
    deviating = [r for r in rows if r.verdict in ("warning", "error")]
    return min(deviating, key=lambda r: (r.order, r.role != "input")) if deviating else None


def cell_of(step: int | None, rank: int | None, run: str, base: str, comp: Comparison, loc: Localisation) -> Cell:
    cell = Cell(step=step, rank=rank, run=run, baseline=base)
    cell.compared = sum(r.verdict != "skipped" for r in comp.rows)
    cell.errors = sum(r.verdict == "error" for r in comp.rows)
    cell.warnings = sum(r.verdict == "warning" for r in comp.rows)
    first = _first_deviating(comp.rows)
    if first is None:
        return cell
    first_order = min(r.order for r in comp.rows)
    if loc.source is not None and not (first.role == "input" and first.order == first_order):
        view = loc.source
        worst = view.worst_output()
        cell.first_op, cell.first_op_type = view.op, view.op_type
        cell.first_tensor = worst.name if worst else None
        row = worst
    else:
        cell.first_op, cell.first_op_type, cell.first_tensor, row = first.op, first.op_type, first.name, first
    cell.first_order = row.order if row is not None else first.order
    if first.role == "input" and first.order == first_order:
        cell.first_kind = "data"  # the model's first operator already gets other inputs: the rank's data
    else:
        cell.first_kind = op_kind(cell.first_op or "", cell.first_op_type)
    if row is not None and row.metrics is not None:
        cell.cosine, cell.max_abs_err = row.metrics.cosine, row.metrics.max_abs_err
        cell.euclid_rel_dist = row.metrics.euclid_rel_dist
    return cell


@dataclass
class Divergence:
    pattern: Pattern
    ranks_total: int
    steps: list[int | None]
    first_step: int | None = None
    #: the ranks that deviate at the first step (all of them when every rank does)
    ranks_deviating: list[int] = field(default_factory=list)
    first_op: str | None = None
    first_kind: OpKind | None = None
    #: what later steps show ("every rank deviates from step 4"), or ""
    spread: str = ""
    sentence: str = ""
    pairs_not_compared: int = 0


def _ranks(ranks: list[int]) -> str:
    return ", ".join(str(r) for r in ranks[:8]) + (f" and {len(ranks) - 8} more" if len(ranks) > 8 else "")


def _step(step: int | None) -> str:
    return f" from step {step}" if step is not None else ""


def _origin(dev: list[Cell]) -> list[Cell]:
    """Of cells that all deviate, those that deviate before the first collective where the rest first deviate
    (a proper subset), in rank order; else []."""
    comm = [c for c in dev if c.first_kind == "communication" and c.first_order is not None]
    if not comm:
        return []
    at = min(c.first_order or 0 for c in comm)
    early = [c for c in dev if c.first_kind != "communication" and c.first_order is not None and c.first_order < at]
    late = [c for c in dev if c.first_kind == "communication"]
    if not early or len(early) + len(late) != len(dev):
        return []
    return sorted(early, key=lambda c: c.rank if c.rank is not None else -1)


def _with_spread(out: Divergence, ok: list[Cell]) -> Divergence:
    """Add what the steps after the first say: the first later step where every rank deviates."""
    for s in out.steps:
        if s is None or out.first_step is None or s <= out.first_step:
            continue
        cells_s = [c for c in ok if c.step == s]
        if cells_s and all(c.deviates for c in cells_s):
            out.spread = f"every rank deviates from step {s}"
            out.sentence += f"; {out.spread}"
            break
    return out


def _one_per_rank(cells: list[Cell]) -> tuple[list[Cell], str]:
    """One cell per step and rank, and a sentence naming the ranks that several folders name (``rank1``,
    ``rank_1``, ``RANK-1`` and ``rank001`` are one rank): the rank keeps its cell that deviates first, so it
    deviates when one of its folders does, and is counted once."""
    by_key: dict[tuple[int | None, int | None], list[Cell]] = {}
    for c in cells:
        by_key.setdefault((c.step, c.rank), []).append(c)
    kept: list[Cell] = []
    twice: list[str] = []
    for (step, rank), group in by_key.items():
        kept.append(min(group, key=lambda c: (not c.deviates, c.first_order if c.first_order is not None else 0)))
        if rank is not None and len(group) > 1:
            names = ", ".join(c.run for c in group[:4]) + (f" and {len(group) - 4} more" if len(group) > 4 else "")
            twice.append(f"rank {rank}{_at_step(step)} is named by {len(group)} folders ({names})")
    note = f"; {'; '.join(twice[:3])}: each read as one rank" if twice else ""
    return kept, note


def _at_step(step: int | None) -> str:
    return f" at step {step}" if step is not None else ""


def divergence(cells: list[Cell]) -> Divergence:
    """What the cells say: which rank and step first diverged, and how (see the module's docstring)."""
    compared = [c for c in cells if c.problem is None]
    ok, note = _one_per_rank(compared)
    out = _divergence(ok, len(cells) - len(compared))
    out.sentence += note
    return out


def _divergence(ok: list[Cell], not_compared: int) -> Divergence:
    """The reading of compared cells, one per step and rank."""
    ranks = sorted({c.rank for c in ok if c.rank is not None})
    steps = sorted({c.step for c in ok}, key=lambda s: -1 if s is None else s)
    out = Divergence(pattern="none", ranks_total=len(ranks), steps=steps, pairs_not_compared=not_compared)
    bad = [c for c in ok if c.deviates]
    if not bad:
        out.sentence = f"no rank deviates from the baseline ({len(ok)} step x rank pairs compared)"
        return out
    first_step = min((c.step for c in bad), key=lambda s: -1 if s is None else s)
    at = [c for c in ok if c.step == first_step]
    dev = sorted((c for c in at if c.deviates), key=lambda c: c.rank if c.rank is not None else -1)
    out.first_step = first_step
    out.ranks_deviating = [c.rank for c in dev if c.rank is not None]
    at_ranks = {c.rank for c in at if c.rank is not None}
    ops = {c.first_op for c in dev}
    first = dev[0]
    out.first_op, out.first_kind = first.first_op, first.first_kind
    if len(at_ranks) <= 1:
        out.pattern = "single_rank"
        out.sentence = f"the run deviates{_step(first_step)} at {first.first_op}"
        return out
    if len(dev) == len(at) and len(ops) > 1:
        origin = _origin(dev)
        if origin:  # the others deviate only from a collective on, which carried the origin's error to them
            carried = dev[len(origin)] if len(origin) < len(dev) else None
            out.ranks_deviating = [c.rank for c in origin if c.rank is not None]
            first = origin[0]
            out.first_op, out.first_kind = first.first_op, first.first_kind
            who = f"rank {first.rank}" if len(origin) == 1 else f"ranks {_ranks(out.ranks_deviating)}"
            out.pattern = "one_rank" if len(origin) == 1 else "some_ranks"
            out.sentence = (
                f"{who} deviate{'s' if len(origin) == 1 else ''}{_step(first_step)} at {first.first_op} "
                f"({first.first_kind}); the other {len(dev) - len(origin)} ranks deviate only from the collective "
                f"{carried.first_op if carried else ''} on, which carries the error to them"
            )
            return out  # (every rank deviates already: later steps add nothing)
    if len(dev) == len(at):
        if len(ops) == 1:
            out.pattern = "every_rank_same_operator"
            out.sentence = f"every rank ({len(at_ranks)}) deviates at {first.first_op}{_step(first_step)}"
        else:
            out.pattern = "every_rank_different_operators"
            out.sentence = (
                f"every rank ({len(at_ranks)}) deviates{_step(first_step)}, at {len(ops)} different operators "
                f"(first {first.first_op} on rank {first.rank})"
            )
        return out
    others = len(at_ranks) - len(dev)
    where = f" at {first.first_op}" if len(ops) == 1 else f" (first at {first.first_op} on rank {first.rank})"
    if len(dev) == 1:
        out.pattern = "one_rank"
        out.sentence = f"rank {first.rank} alone deviates{_step(first_step)}{where}; the other {others} ranks match"
    else:
        out.pattern = "some_ranks"
        out.sentence = (
            f"ranks {_ranks(out.ranks_deviating)} deviate{_step(first_step)}{where}; the other {others} match"
        )
    return _with_spread(out, ok)


__all__ = ["Cell", "Divergence", "cell_of", "divergence", "op_kind", "COMMUNICATION"]
