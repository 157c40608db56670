"""Match the tensors of the run's dump with the baseline's.

First by name (``Functional.gelu.0.forward.output.0`` on both sides). What
stays unmatched is then paired by execution order: walking the run's leftover
tensors in order, each takes the next baseline leftover (after the last one
taken) with the same direction, role, argument index and shape, and the same
operator type (when both sides know it; else the same name up to call
counters). This catches renamed operators (a module renamed, a call
counter shifted by one extra call) and reordered ones.

Last, *spans*: a run operator left alone between two matched operators
(a fused kernel such as ``FusedMatMulBiasAddGeLU`` standing for
``fc1`` + ``act1`` of an unfused baseline) is matched input-to-input with the
first baseline operator of the same gap and output-to-output with the last,
when the shapes agree. The rest is reported as unmatched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from advisor.read.dumps import TensorRecord


@dataclass
class Match:
    run: TensorRecord
    base: TensorRecord
    how: Literal["name", "order", "span"]


def _key(r: TensorRecord) -> tuple:
    return (r.direction, r.role, r.index.split(".")[0], r.shape)


def _same_kind(a: TensorRecord, b: TensorRecord) -> bool:
    """Operator types equal when both are known; else names equal but for call counters."""
    if a.op_type and b.op_type:
        return a.op_type.lower() == b.op_type.lower()
    return re.sub(r"\d+", "#", a.op) == re.sub(r"\d+", "#", b.op)


def match_records(
    run: list[TensorRecord], base: list[TensorRecord]
) -> tuple[list[Match], list[TensorRecord], list[TensorRecord]]:
    """(matches in the run's execution order, unmatched run tensors, unmatched baseline tensors)."""
    by_name: dict[str, TensorRecord] = {}
    for b in base:
        by_name.setdefault(b.name, b)
    matches: list[Match] = []
    taken: set[int] = set()
    left_run: list[TensorRecord] = []
    for r in run:
        named = by_name.get(r.name)
        if named is not None and id(named) not in taken:
            matches.append(Match(r, named, "name"))
            taken.add(id(named))
        else:
            left_run.append(r)
    left_base = sorted((b for b in base if id(b) not in taken), key=lambda x: x.order)
    unmatched_run: list[TensorRecord] = []
    pos = 0
    for r in sorted(left_run, key=lambda x: x.order):
        key = _key(r)
        found = None
        for j in range(pos, len(left_base)):
            if id(left_base[j]) not in taken and _key(left_base[j]) == key and _same_kind(r, left_base[j]):
                found = j
                break
        if found is None:
            unmatched_run.append(r)
            continue
        matches.append(Match(r, left_base[found], "order"))
        taken.add(id(left_base[found]))
        pos = found + 1
    unmatched_run = _match_spans(unmatched_run, base, matches, taken)
    unmatched_base = [b for b in base if id(b) not in taken]
    matches.sort(key=lambda m: (m.run.order, m.run.role != "input", m.run.name))
    return matches, unmatched_run, unmatched_base


def _ops(records: list[TensorRecord]) -> dict[str, list[TensorRecord]]:
    out: dict[str, list[TensorRecord]] = {}
    for r in sorted(records, key=lambda x: x.order):
        out.setdefault(r.op, []).append(r)
    return out


def _match_spans(
    left_run: list[TensorRecord], base: list[TensorRecord], matches: list[Match], taken: set[int]
) -> list[TensorRecord]:
    """Match leftover run operators with the gap of leftover baseline operators between the same anchors.

    Several run operators in one gap (two fused kernels in a row) share it out in order: each takes the
    baseline operators from where the previous one stopped, up to the first whose output shape is its own
    and after which the next run operator's inputs fit (the last one takes the rest of the gap).
    """
    if not left_run:
        return left_run
    anchors = sorted({(m.run.order, m.base.order) for m in matches})
    left_base_ops = _ops([b for b in base if id(b) not in taken])
    still: list[TensorRecord] = []
    groups: dict[tuple[int, int], list[list[TensorRecord]]] = {}
    for _op, recs in _ops(left_run).items():
        order = recs[0].order
        before = max((b for r, b in anchors if r < order), default=-1)
        after = min((b for r, b in anchors if r > order), default=1 << 62)
        groups.setdefault((before, after), []).append(recs)
    for (before, after), run_ops in groups.items():
        gap = [
            ops
            for ops in left_base_ops.values()
            if before < ops[0].order < after and all(id(x) not in taken for x in ops)
        ]
        pos = 0
        for k, recs in enumerate(run_ops):
            ins = [r for r in recs if r.role == "input"]
            outs = [r for r in recs if r.role == "output"]
            nxt = [r for r in run_ops[k + 1] if r.role == "input"] if k + 1 < len(run_ops) else None
            end = _span_end(gap, pos, ins, outs, nxt, f"{recs[0].op} {recs[0].op_type or ''}".lower())
            if end is None:
                still.extend(recs)
                continue
            first_in = [x for x in gap[pos] if x.role == "input"]
            last_out = [x for x in gap[end] if x.role == "output"]
            for r, b in list(zip(ins, first_in)) + list(zip(outs, last_out)):
                matches.append(Match(r, b, "span"))
                taken.add(id(b))
            pos = end + 1
    return still  # the baseline's intermediate tensors inside a span stay unmatched (reported)


def _shapes(recs: list[TensorRecord], role: str) -> list:
    return [x.shape for x in recs if x.role == role]


def _leaf(op: str) -> str:
    """``fc1.forward`` -> fc1; ``Functional.linear.3.forward`` -> linear: the operator's own name."""
    parts = [p for p in op.split(".") if p not in ("forward", "backward") and not p.isdigit()]
    return parts[-1].lower() if parts else op.lower()


def _mention(run_text: str, ops: list[TensorRecord]) -> int:
    """+1 when the fused run operator's name holds this baseline operator's name, 0 when only its type, else -1."""
    if _leaf(ops[0].op) in run_text:
        return 1
    return 0 if ops[0].op_type and ops[0].op_type.lower() in run_text else -1


def _span_end(
    gap: list[list[TensorRecord]],
    pos: int,
    ins: list[TensorRecord],
    outs: list[TensorRecord],
    next_ins: list[TensorRecord] | None,
    run_text: str = "",
) -> int | None:
    """Index of the last baseline operator of the span starting at ``pos`` (None: no span fits).

    Among the ends where the shapes fit (and the next run operator's inputs fit the operator after), the
    one whose baseline operators the run operator's name mentions most (``fc1_act1`` names fc1 and act1),
    the shortest on ties; the last run operator of the gap takes the longest span that fits.
    """
    if pos >= len(gap) or not outs:
        return None
    if [r.shape for r in ins] != _shapes(gap[pos], "input")[: len(ins)]:
        return None
    want = [r.shape for r in outs]
    best, best_score, score = None, None, 0
    for j in range(pos, len(gap)):
        score += _mention(run_text, gap[j])
        if _shapes(gap[j], "output")[: len(want)] != want:
            continue
        if next_ins is not None and not (
            j + 1 < len(gap) and _shapes(gap[j + 1], "input")[: len(next_ins)] == [r.shape for r in next_ins]
        ):
            continue
        if next_ins is None:  # the last run operator of the gap spans the rest of it
            best = j
        elif best_score is None or score > best_score:
            best, best_score = j, score
    return best
