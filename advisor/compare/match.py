"""Match the tensors of the run's dump with the baseline's.

First by name (``Functional.gelu.0.forward.output.0`` on both sides). What
stays unmatched is then paired by execution order: walking the run's leftover
tensors in order, each takes the next baseline leftover (after the last one
taken) with the same direction, role, argument index, operator type (when both
know it) and shape. This catches renamed operators (a module renamed, a call
counter shifted by one extra call) and reordered ones. The rest is reported as
unmatched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from advisor.read.dumps import TensorRecord


@dataclass
class Match:
    run: TensorRecord
    base: TensorRecord
    how: Literal["name", "order"]


def _key(r: TensorRecord) -> tuple:
    return (r.direction, r.role, r.index.split(".")[0], (r.op_type or "").lower(), r.shape)


def match_records(run: list[TensorRecord], base: list[TensorRecord]
                  ) -> tuple[list[Match], list[TensorRecord], list[TensorRecord]]:
    """(matches in the run's execution order, unmatched run tensors, unmatched baseline tensors)."""
    by_name: dict[str, TensorRecord] = {}
    for b in base:
        by_name.setdefault(b.name, b)
    matches: list[Match] = []
    taken: set[int] = set()
    left_run: list[TensorRecord] = []
    for r in run:
        b = by_name.get(r.name)
        if b is not None and id(b) not in taken:
            matches.append(Match(r, b, "name"))
            taken.add(id(b))
        else:
            left_run.append(r)
    left_base = sorted((b for b in base if id(b) not in taken), key=lambda x: x.order)
    unmatched_run: list[TensorRecord] = []
    pos = 0
    for r in sorted(left_run, key=lambda x: x.order):
        key = _key(r)
        found = None
        for j in range(pos, len(left_base)):
            if id(left_base[j]) not in taken and _key(left_base[j]) == key:
                found = j
                break
        if found is None:
            unmatched_run.append(r)
            continue
        matches.append(Match(r, left_base[found], "order"))
        taken.add(id(left_base[found]))
        pos = found + 1
    unmatched_base = [b for b in base if id(b) not in taken]
    matches.sort(key=lambda m: (m.run.order, m.run.role != "input", m.run.name))
    return matches, unmatched_run, unmatched_base
