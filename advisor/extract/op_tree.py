"""The dumps of a multi-card run (a tree of ranks, and steps) -> one ``rank_divergence`` fact.

Used by the op_compare extractor when the run's dumps name more than one rank
(``dump/step0/rank3``, ``rank_3/.../iteration``): every step and rank is paired
with the baseline's (``compare/tree.py``) and compared on one runner, the step
x rank cells are read (``compare/ranks.py``), and the pair where the run first
deviates (the first step, the first deviating rank) is handed back so its
operator facts are made as for a single pair: one pair's facts, not 64 copies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from advisor.compare.engine import Comparison
from advisor.compare.localise import Localisation
from advisor.compare.ranks import divergence
from advisor.compare.tree import Leaf, leaf_of, pair_leaves
from advisor.compare.tree_compare import compare_leaf_pairs, shown_pair
from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.facts.base import Source
from advisor.facts.ops import RankDivergence
from advisor.read.dumps import Dump


def _leaves(dumps: list[tuple[str, Dump]]) -> dict[Leaf, tuple[str, Dump]]:
    return {leaf_of(Path(shown), d.layout == "mindspore"): (shown, d) for shown, d in dumps}


def is_rank_tree(run_dumps: list[tuple[str, Dump]]) -> bool:
    """The run's dumps name more than one rank."""
    return len({leaf.rank for leaf in _leaves(run_dumps) if leaf.rank is not None}) > 1


def tree_facts(
    pair: RunPair,
    run_dumps: list[tuple[str, Dump]],
    base_dumps: list[tuple[str, Dump]],
    workers: Any,
    out: Extraction,
    runner: Any = None,
) -> Iterator[tuple[str, Dump, Dump, Comparison, Localisation]]:
    """Add the ``rank_divergence`` fact and its check to ``out``; yield the pair whose operator facts are made."""
    run, base = _leaves(run_dumps), _leaves(base_dumps)
    pairing = pair_leaves(list(run), list(base))
    pairs: list[tuple[Leaf, Dump | str, Leaf, Dump | str]] = [(r, run[r][1], b, base[b][1]) for r, b in pairing.pairs]
    results, cells = compare_leaf_pairs(pairs, pair.options, workers, runner)
    div = divergence(cells)
    unpaired = len(pairing.unpaired_run) + len(pairing.unpaired_baseline)
    shown_res = shown_pair(results, div)
    where = run[shown_res.run][0] if shown_res else run_dumps[0][0]
    out.facts.append(
        RankDivergence(
            source=Source(path=where),
            pattern=div.pattern,
            ranks_total=div.ranks_total,
            steps_compared=len(div.steps),
            pairs_compared=len(cells) - div.pairs_not_compared,
            pairs_not_compared=div.pairs_not_compared,
            first_step=div.first_step,
            ranks_deviating=len(div.ranks_deviating),
            deviating_ranks=", ".join(str(r) for r in div.ranks_deviating[:16]),
            first_op=div.first_op,
            first_op_kind=div.first_kind,
            spread=div.spread,
            text=div.sentence,
        )
    )
    note = f"{len(cells)} step x rank pairs: {div.sentence}"
    if pairing.note:
        note += f" ({pairing.note})"
    if unpaired:
        note += f"; {unpaired} dumps with no counterpart on the other side"
    out.checks.append(CheckRun(stage="network_wide_comparison", inputs=[d for d, _ in run_dumps][:16], note=note))
    if shown_res is not None:
        yield where, run[shown_res.run][1], base[shown_res.baseline][1], shown_res.comparison, shown_res.localisation


__all__ = ["is_rank_tree", "tree_facts"]
