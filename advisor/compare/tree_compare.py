"""Compare two dump trees: every paired step and rank on one runner, then the step x rank view.

``compare_tree`` finds and pairs the leaves (``tree.py``), indexes each dump
once (a 1-rank baseline shared by every run rank is read once), sends the
work of all pairs to the runner together (``engine.compare_many``), localises
each pair and reads the cells (``ranks.py``). A leaf that cannot be read
becomes a cell with its problem; the rest of the tree is compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from advisor.compare.engine import Comparison, compare_many
from advisor.compare.localise import Localisation, localise
from advisor.compare.ranks import Cell, Divergence, cell_of, divergence
from advisor.compare.runner import Runner
from advisor.compare.tree import Leaf, Pairing, find_leaves, pair_leaves
from advisor.read.dumps import Dump, DumpReadError, read_dump


@dataclass
class PairResult:
    run: Leaf
    baseline: Leaf
    comparison: Comparison
    localisation: Localisation
    cell: Cell


@dataclass
class TreeResult:
    run_root: str
    baseline_root: str
    pairing: Pairing
    results: list[PairResult] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    divergence: Divergence | None = None

    def shown_pair(self) -> PairResult | None:
        """The pair a detail table shows (``shown_pair``)."""
        return shown_pair(self.results, self.divergence)


def shown_pair(results: list[PairResult], div: Divergence | None) -> PairResult | None:
    """The first deviating pair (first step, lowest deviating rank), else the first pair."""
    for res in results:
        if div and res.cell.deviates and res.cell.step == div.first_step:
            if not div.ranks_deviating or res.cell.rank == div.ranks_deviating[0]:
                return res
    return results[0] if results else None


def compare_leaf_pairs(
    pairs: list[tuple[Leaf, Dump | str, Leaf, Dump | str]],
    options: dict[str, Any] | None = None,
    workers: int | None = None,
    runner: Runner | None = None,
    progress: Callable[[int, int], None] | None = None,
    run_label: str = "",
    baseline_label: str = "",
) -> tuple[list[PairResult], list[Cell]]:
    """Pairs of (leaf, dump or why it cannot be read) -> the compared pairs and a cell for every pair."""
    readable = [(r, rd, b, bd) for r, rd, b, bd in pairs if isinstance(rd, Dump) and isinstance(bd, Dump)]
    comps = compare_many([(rd, bd) for _, rd, _, bd in readable], options, workers, progress, runner)  # type: ignore[misc]
    results: dict[tuple[Leaf, Leaf], PairResult] = {}
    for (r, _, b, _), comp in zip(readable, comps):
        loc = localise(comp.rows, has_baseline=True)
        cell = cell_of(r.step, r.rank, _join(run_label, r.rel), _join(baseline_label, b.rel), comp, loc)
        results[(r, b)] = PairResult(r, b, comp, loc, cell)
    cells: list[Cell] = []
    for r, rd, b, bd in pairs:
        got = results.get((r, b))
        if got is not None:
            cells.append(got.cell)
            continue
        why = rd if isinstance(rd, str) else bd
        side = "run" if isinstance(rd, str) else "baseline"
        cell = Cell(step=r.step, rank=r.rank, run=_join(run_label, r.rel), baseline=_join(baseline_label, b.rel))
        cell.problem = f"{side}: {why}"
        cells.append(cell)
    return list(results.values()), cells


def _join(root: str, rel: str) -> str:
    if not root:
        return rel
    return root if rel == "." else f"{root.rstrip('/')}/{rel}"


def compare_tree(
    run_root: Path,
    base_root: Path,
    options: dict[str, Any] | None = None,
    workers: int | None = None,
    runner: Runner | None = None,
    progress: Callable[[int, int], None] | None = None,
    leaves: tuple[list[Leaf], list[Leaf]] | None = None,
) -> TreeResult:
    """``leaves``: the run's and the baseline's, when the caller has found them already."""
    run_root, base_root = run_root.absolute(), base_root.absolute()  # cluster workers may start elsewhere
    run_leaves, base_leaves = leaves or (find_leaves(run_root), find_leaves(base_root))
    pairing = pair_leaves(run_leaves, base_leaves)
    read: dict[tuple[str, str], Dump | str] = {}

    def index(root: Path, side: str, leaf: Leaf) -> Dump | str:
        key = (side, leaf.rel)
        if key not in read:
            try:
                read[key] = read_dump(root / leaf.rel)
            except DumpReadError as exc:
                read[key] = str(exc)
        return read[key]

    pairs = [(r, index(run_root, "run", r), b, index(base_root, "baseline", b)) for r, b in pairing.pairs]
    results, cells = compare_leaf_pairs(pairs, options, workers, runner, progress)
    out = TreeResult(str(run_root), str(base_root), pairing, results, cells)
    out.divergence = divergence(cells)
    return out


__all__ = ["PairResult", "TreeResult", "compare_tree", "compare_leaf_pairs", "shown_pair"]
