"""One rank under several spellings (issue #50): ``rank1``, ``rank_1``, ``RANK-1`` and ``rank001`` beside one
another name one rank. ``advisor compare`` refuses the tree naming the folders; a diagnosis reads them as one
rank and says so; no count is ever negative ("the other -1 match")."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from advisor.compare.ranks import Cell, divergence
from tests.compare.tree_dumps import write_tree

SPELLINGS = ("rank_1", "RANK-1", "rank001")


@pytest.fixture
def spelt_tree(tmp_path):
    """A 2-rank tree whose rank 1 (faulty) is also dumped as rank_1, RANK-1 and rank001, and its baseline."""
    write_tree(tmp_path / "run" / "dump", ranks=2, steps=1, fault="compute", fault_rank=1, fault_step=0)
    write_tree(tmp_path / "base" / "dump", ranks=2, steps=1)
    for name in SPELLINGS:
        shutil.copytree(tmp_path / "run" / "dump" / "step0" / "rank1", tmp_path / "run" / "dump" / "step0" / name)
    return tmp_path / "run", tmp_path / "base"


def _no_negative_count(text: str) -> None:
    assert not re.search(r"other -\d", text), text


def test_compare_refuses_one_rank_in_several_folders(spelt_tree, cli):
    run, base = spelt_tree
    code, out, err = cli("compare", run, base)
    assert code == 2, out + err
    assert err.count("\n") == 1 and "step 0, rank 1 in 4 folders" in err and "RANK-1" in err, err
    _no_negative_count(out + err)


def test_diagnose_reads_them_as_one_rank(spelt_tree, cli):
    run, base = spelt_tree
    fact = next(f for f in _facts(cli, run, base) if f["kind"] == "rank_divergence")
    _no_negative_count(fact["text"])
    assert fact["ranks_deviating"] == 1 and fact["deviating_ranks"] == "1" and fact["ranks_total"] == 2
    assert "the other 1 ranks match" in fact["text"] and "named by 4 folders" in fact["text"]


def _facts(cli, run, base) -> list[dict]:
    code, out, err = cli("facts", run, "-b", base, "-f", "json")
    assert code == 0, err
    return json.loads(out)["facts"]


def _cell(rank: int, run: str, deviates: bool) -> Cell:
    c = Cell(step=0, rank=rank, run=run, baseline=f"b/rank{rank}", compared=3)
    if deviates:
        c.first_op, c.first_kind, c.first_order, c.errors = "fc2.forward", "compute", 4, 1
    return c


def test_the_reading_counts_ranks_not_folders():
    cells = [_cell(0, "rank0", False)] + [_cell(1, name, True) for name in ("rank1", *SPELLINGS)]
    div = divergence(cells)
    assert div.pattern == "one_rank" and div.ranks_deviating == [1] and div.ranks_total == 2
    assert "rank 1 alone deviates" in div.sentence and "the other 1 ranks match" in div.sentence
    assert "rank 1 at step 0 is named by 4 folders" in div.sentence
    # every spelling deviating on both ranks: every rank, never "the other -N"
    both = [_cell(r, f"{name}{r}", True) for r in (0, 1) for name in ("rank", "rank_", "RANK-")]
    div = divergence(both)
    assert div.pattern == "every_rank_same_operator" and "every rank (2)" in div.sentence
    _no_negative_count(div.sentence)
