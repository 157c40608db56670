"""Dump trees: the steps and ranks of a distributed run, found in the folders and paired with the baseline's.

A tree is any folder whose dumps lie in sub-folders that name a step or a rank:
msprobe's ``step0/rank0`` (and ``rank`` for one card), MindSpore's
``rank_0/{net}/{graph}/{iteration}``, the capture hook's ``dump/step_000003``
with a ``rank_1`` level above or below it. Each dump of the tree is a
``Leaf``: its folder, step, rank and the rest of its path (a graph id).

Pairing (``pair_leaves``): the same step and rank on both sides; a side
without steps (one dump per rank) pairs with every step of the other; a
baseline with one rank (a 1-GPU benchmark against an 8-NPU port) pairs every
run rank with it; several candidates left are told apart by the rest of the
path. Whatever cannot be paired is listed, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from advisor.read.dumps import MS_DUMP_FILE, find_dump_roots, natural_key

#: a path part naming a rank: msprobe ``rank0``, MindSpore ``rank_0``, ``rank-3``
RANK_PART = re.compile(r"^rank[_-]?(\d{1,6})$", re.I)
#: a path part naming a step: msprobe ``step0``, the capture hook's ``step_000003``, ``iter_5``, ``iteration-2``
STEP_PART = re.compile(r"^(?:step|iter|iteration)[_-]?(\d{1,9})$", re.I)
#: dumps one tree may hold (64 ranks x 16 steps; each leaf is indexed before any tensor is read)
MAX_LEAVES = 4096


@dataclass(frozen=True)
class Leaf:
    """One dump of a tree: ``rel`` is its folder relative to the tree root ("." for the root itself)."""

    rel: str
    step: int | None = None
    rank: int | None = None
    rest: str = ""

    @property
    def label(self) -> str:
        parts = [
            f"step {self.step}" if self.step is not None else "",
            f"rank {self.rank}" if self.rank is not None else "",
        ]
        return ", ".join(p for p in parts if p) or self.rel


@dataclass
class Pairing:
    pairs: list[tuple[Leaf, Leaf]] = field(default_factory=list)
    unpaired_run: list[Leaf] = field(default_factory=list)
    unpaired_baseline: list[Leaf] = field(default_factory=list)
    #: how the baseline's ranks were used ("every run rank against the baseline's one rank"), or ""
    note: str = ""


class TreeError(ValueError):
    pass


def leaf_of(rel: Path, is_mindspore: bool = False) -> Leaf:
    """Step, rank and the rest of one dump folder's path."""
    step = rank = None
    rest: list[str] = []
    parts = [p for p in rel.parts if p not in ("", ".")]
    for i, part in enumerate(parts):
        if (m := RANK_PART.match(part)) and rank is None:
            rank = int(m.group(1))
        elif (m := STEP_PART.match(part)) and step is None:
            step = int(m.group(1))
        elif is_mindspore and i == len(parts) - 1 and part.isdigit() and step is None:
            step = int(part)  # MindSpore's iteration folder
        else:
            rest.append(part)
    return Leaf(rel=rel.as_posix() if parts else ".", step=step, rank=rank, rest="/".join(rest))


def _npy_tree_dirs(files: list[Path]) -> set[Path]:
    """Folders of .npy files whose path names a step or a rank (a tree need not say "dump")."""
    out = set()
    for p in files:
        if p.suffix.lower() == ".npy" and any(RANK_PART.match(x) or STEP_PART.match(x) for x in p.parent.parts):
            out.add(p.parent)
    return out


def find_leaves(root: Path) -> list[Leaf]:
    """The dumps under ``root`` as leaves, in natural order; ``root`` itself when it is one dump."""
    from advisor.inventory import RunFolder

    if (root / "dump.json").is_file() or (root / "manifest.json").is_file() or any(root.glob("*.npy")):
        return [leaf_of(Path("."), any(MS_DUMP_FILE.match(p.name) for p in root.glob("*.npy")))]
    files = RunFolder.scan(root).files
    roots = set(find_dump_roots(files))
    for d in _npy_tree_dirs(files):  # below a dump root found already (a manifest's sub-folders): not a leaf
        if not any(d.is_relative_to(r) for r in roots):
            roots.add(d)
    ms = {p.parent for p in files if MS_DUMP_FILE.match(p.name)}
    # a dump root above other dump roots (a manifest over steps) is a leaf only if nothing below it is
    leaves = [leaf_of(r, r in ms) for r in roots if not any(o != r and o.is_relative_to(r) for o in roots)]
    if len(leaves) > MAX_LEAVES:
        raise TreeError(f"{len(leaves):,} dumps, above advisor's limit of {MAX_LEAVES:,} per tree: compare a sub-tree")
    return sorted(
        leaves,
        key=lambda x: (x.step if x.step is not None else -1, x.rank if x.rank is not None else -1, natural_key(x.rel)),
    )


def _candidates(r: Leaf, base: list[Leaf]) -> list[Leaf]:
    steps = {b.step for b in base}
    if r.step is not None and r.step in steps:
        cands = [b for b in base if b.step == r.step]
    elif r.step is None or steps == {None}:
        cands = list(base)
    else:
        return []
    ranks = {b.rank for b in cands}
    if r.rank is not None and r.rank in ranks:
        cands = [b for b in cands if b.rank == r.rank]
    elif len(ranks) == 1 or r.rank is None:
        pass  # the baseline's one rank stands for every run rank
    else:
        return []
    if len(cands) > 1:
        cands = [b for b in cands if b.rest == r.rest]
    if len(cands) > 1:  # one step or one rank on one side: the other side's steps/ranks tell them apart
        cands = [b for b in cands if b.step == r.step and b.rank == r.rank]
    return cands


def pair_leaves(run: list[Leaf], base: list[Leaf]) -> Pairing:
    if len(run) == 1 and len(base) == 1:
        return Pairing(pairs=[(run[0], base[0])])
    out = Pairing()
    used: set[Leaf] = set()
    for r in run:
        cands = _candidates(r, base)
        if len(cands) == 1:
            out.pairs.append((r, cands[0]))
            used.add(cands[0])
        else:
            out.unpaired_run.append(r)
    out.unpaired_baseline = [b for b in base if b not in used]
    run_ranks = {r.rank for r, _ in out.pairs if r.rank is not None}
    base_ranks = {b.rank for _, b in out.pairs}
    if len(run_ranks) > 1 and len(base_ranks) == 1:
        only = next(iter(base_ranks))
        out.note = f"every run rank against the baseline's one rank{'' if only is None else f' ({only})'}"
    return out


__all__ = ["Leaf", "Pairing", "TreeError", "find_leaves", "leaf_of", "pair_leaves", "MAX_LEAVES"]
