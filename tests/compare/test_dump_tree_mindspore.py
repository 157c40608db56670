"""A tree of MindSpore's own synchronous dumps (``rank_N/Net/0/<iteration>``, written by MindSpore 2.10 for
examples/mindspore_port) laid out as a 4-card run: the ranks and the iteration are read from the folders,
a card that computes one MatMul wrongly is singled out, and against the 1-rank PyTorch benchmark every rank
shows the port's GELU."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from advisor.compare.tree import find_leaves
from advisor.compare.tree_compare import compare_tree

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mindspore_port"
RANK0 = EXAMPLE / "run" / "dump" / "rank_0"
pytestmark = pytest.mark.skipif(not RANK0.is_dir(), reason="examples/mindspore_port is not there")


def _tree(root: Path, ranks: int = 4, faulty: int | None = None) -> Path:
    for r in range(ranks):
        shutil.copytree(RANK0, root / f"rank_{r}")
    if faulty is not None:
        (out,) = (root / f"rank_{faulty}" / "Net" / "0" / "0").glob("MatMul.Default_fc2-Dense_MatMul-op0.*.output.0.*.npy")
        np.save(out, np.load(out, allow_pickle=False) * np.float32(1.05), allow_pickle=False)
    return root


def test_ranks_and_iteration_come_from_mindspores_folders(tmp_path):
    leaves = find_leaves(_tree(tmp_path / "run"))
    assert [(leaf.rank, leaf.step, leaf.rest) for leaf in leaves] == [(r, 0, "Net/0") for r in range(4)]


def test_a_card_computing_one_matmul_wrongly_is_singled_out(tmp_path):
    tree = compare_tree(_tree(tmp_path / "run", faulty=2), _tree(tmp_path / "base"))
    d = tree.divergence
    assert d is not None and (d.pattern, d.ranks_deviating, d.first_kind) == ("one_rank", [2], "compute")
    assert "fc2" in (d.first_op or "") and d.ranks_total == 4


def test_every_rank_shows_the_ports_gelu_against_the_one_rank_benchmark(tmp_path):
    tree = compare_tree(_tree(tmp_path / "run"), EXAMPLE / "baseline" / "dump")
    assert "every run rank" in tree.pairing.note and len(tree.pairing.pairs) == 4
    d = tree.divergence
    assert d is not None and d.pattern == "every_rank_same_operator" and d.first_op == "act.forward"
