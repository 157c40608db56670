"""Dump trees of multi-card runs: finding and pairing steps and ranks, telling a faulty rank from an operator error,
the same results on a Dask LocalCluster as in-process, and what `advisor compare` / `diagnose` say about them."""

from __future__ import annotations

import argparse
import csv
import functools
import json
import operator
from pathlib import Path

import pytest

from advisor.compare.cli import add_compare_parser
from advisor.compare.tree import Leaf, find_leaves, leaf_of, pair_leaves
from advisor.compare.tree_compare import compare_tree
from advisor.compare.tree_table import tree_dict
from advisor.read.dumps import DumpReadError

from tree_dumps import write_tree


def _compare(argv):
    p = argparse.ArgumentParser()
    add_compare_parser(p.add_subparsers())
    args = p.parse_args(["compare", *argv])
    return args.func(args)


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    root = tmp_path_factory.mktemp("trees")
    out = {"base": write_tree(root / "base")}
    for fault in ("rank", "operator", "data", "compute", "none"):
        out[fault] = write_tree(root / fault, fault=None if fault == "none" else fault)
    out["base1"] = write_tree(root / "base1", rank_dirs=False)
    return out


# -- finding and pairing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel, ms, want",
    [
        ("step0/rank3", False, Leaf("step0/rank3", 0, 3, "")),  # msprobe
        ("dump/step_000002", False, Leaf("dump/step_000002", 2, None, "dump")),  # the capture hook
        ("dump/rank_1/step_000002", False, Leaf("dump/rank_1/step_000002", 2, 1, "dump")),
        ("rank_7/Net/0/4", True, Leaf("rank_7/Net/0/4", 4, 7, "Net/0")),  # MindSpore's iteration folder
        ("rank_7/Net/0/4", False, Leaf("rank_7/Net/0/4", None, 7, "Net/0/4")),
        ("dump", False, Leaf("dump", None, None, "dump")),
    ],
)
def test_leaf_reads_step_and_rank_from_the_path(rel, ms, want):
    assert leaf_of(Path(rel), ms) == want


def test_pairing_same_step_and_rank_and_what_is_left():
    run = [Leaf(f"step{s}/rank{r}", s, r) for s in (0, 1, 2) for r in range(4)]
    base = [Leaf(f"step{s}/rank{r}", s, r) for s in (0, 1) for r in range(4)]
    p = pair_leaves(run, base)
    assert len(p.pairs) == 8 and all(r.step == b.step and r.rank == b.rank for r, b in p.pairs)
    assert [leaf.rel for leaf in p.unpaired_run] == [f"step2/rank{r}" for r in range(4)]
    assert p.unpaired_baseline == [] and p.note == ""


def test_one_rank_baseline_pairs_with_every_run_rank():
    run = [Leaf(f"step{s}/rank{r}", s, r) for s in (0, 1) for r in range(8)]
    base = [Leaf(f"step{s}", s, None) for s in (0, 1)]
    p = pair_leaves(run, base)
    assert len(p.pairs) == 16 and all(r.step == b.step for r, b in p.pairs)
    assert "every run rank" in p.note


def test_ranks_the_baseline_lacks_are_not_guessed():
    run = [Leaf(f"rank{r}", None, r) for r in range(4)]
    base = [Leaf(f"rank{r}", None, r) for r in range(2)]
    p = pair_leaves(run, base)
    assert [(r.rank, b.rank) for r, b in p.pairs] == [(0, 0), (1, 1)]
    assert [leaf.rank for leaf in p.unpaired_run] == [2, 3]


def test_find_leaves_of_a_tree_and_of_one_dump(trees):
    leaves = find_leaves(trees["base"])
    assert len(leaves) == 24 and {leaf.rank for leaf in leaves} == set(range(8))
    assert {leaf.step for leaf in leaves} == {0, 1, 2}
    assert find_leaves(trees["base"] / "step1" / "rank4") == [Leaf(".", None, None, "")]


# -- what the tree shows ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault, pattern, kind, ranks, words",
    [
        ("rank", "one_rank", "communication", [5], "rank 5 alone deviates from step 1 at allreduce.forward"),
        ("compute", "one_rank", "compute", [5], "rank 5 alone deviates from step 1 at fc2.forward"),
        ("data", "one_rank", "data", [5], "only from the collective allreduce.forward on"),
        ("operator", "every_rank_same_operator", "compute", list(range(8)), "every rank (8) deviates at act.forward"),
        ("none", "none", None, [], "no rank deviates"),
    ],
)
def test_a_faulty_rank_and_an_operator_error_everywhere_are_told_apart(trees, fault, pattern, kind, ranks, words):
    d = compare_tree(trees[fault], trees["base"], workers=2).divergence
    assert d is not None
    assert (d.pattern, d.first_kind, d.ranks_deviating) == (pattern, kind, ranks)
    assert words in d.sentence
    if fault == "rank":  # the corrupted collective reaches every rank's weights at the next update
        assert d.spread == "every rank deviates from step 2"


def test_an_unreadable_rank_is_named_and_the_rest_compared(trees, tmp_path):
    import shutil

    run = shutil.copytree(trees["compute"], tmp_path / "run")
    (run / "step1" / "rank2" / "dump.json").write_text("{not json", encoding="utf-8")  # read as msprobe: broken
    tree = compare_tree(run, trees["base"], workers=2)
    bad = [c for c in tree.cells if c.problem]
    assert [(c.step, c.rank) for c in bad] == [(1, 2)] and "dump.json" in (bad[0].problem or "")
    assert tree.divergence is not None and tree.divergence.pairs_not_compared == 1
    assert tree.divergence.pattern == "one_rank" and tree.divergence.ranks_deviating == [5]


# -- Dask -------------------------------------------------------------------------------------------------


def _rows(tree):
    return [
        (res.cell.step, res.cell.rank, r.name, r.verdict, r.metrics.as_dict() if r.metrics else None)
        for res in tree.results
        for r in res.comparison.rows
    ]


def test_local_cluster_gives_the_in_process_results(trees):
    pytest.importorskip("distributed")
    from advisor.compare.dask_runner import DaskRunner

    here = compare_tree(trees["rank"], trees["base"], workers=2)
    with DaskRunner("local", workers=2) as runner:
        there = compare_tree(trees["rank"], trees["base"], workers=2, runner=runner)
        assert runner.failed_tasks == 0
    assert _rows(there) == _rows(here)
    assert tree_dict(there) == tree_dict(here)


def test_a_task_that_fails_on_the_cluster_becomes_a_named_not_compared(trees):
    pytest.importorskip("distributed")
    from advisor.compare.dask_runner import DaskRunner

    with DaskRunner("local", workers=1) as runner:
        got = runner.run([functools.partial(operator.truediv, 1, 0), functools.partial(operator.add, 1, 2)], [1, 1])
    assert isinstance(got[0], DumpReadError) and "failed on the Dask cluster" in str(got[0])
    assert "ZeroDivisionError" in str(got[0])


def test_batches_keep_small_items_together_and_big_ones_alone():
    from advisor.compare.dask_runner import batches

    assert batches([10] * 5, task_bytes=25) == [[0, 1], [2, 3], [4]]
    assert batches([100, 1, 1, 100], task_bytes=50) == [[0], [1, 2], [3]]
    assert batches([1] * 7, task_items=3) == [[0, 1, 2], [3, 4, 5], [6]]


def test_an_unreachable_scheduler_is_a_clear_error():
    pytest.importorskip("distributed")
    from advisor.compare.dask_runner import DaskRunner, DaskUnavailable

    with pytest.raises(DaskUnavailable, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"):
        DaskRunner("tcp://127.0.0.1:9", timeout=1)


# -- advisor compare ----------------------------------------------------------------------------------------


def test_compare_cli_on_trees_text_and_exit_status(trees, capsys):
    assert _compare([str(trees["rank"]), str(trees["base"])]) == 1
    out = capsys.readouterr().out
    assert "24 step x rank pairs" in out and "rank 5 alone deviates from step 1 at allreduce.forward" in out
    assert "all 8 ranks match" in out and "detail of step 1, rank 5:" in out
    assert _compare([str(trees["none"]), str(trees["base"])]) == 0
    assert "no rank deviates" in capsys.readouterr().out


def test_compare_cli_tree_outputs(trees, tmp_path):
    csv_path, json_path, html_path = tmp_path / "t.csv", tmp_path / "t.json", tmp_path / "t.html"
    for path in (csv_path, json_path, html_path):
        assert _compare([str(trees["operator"]), str(trees["base"]), "-o", str(path)]) == 1
    rows = list(csv.DictReader(csv_path.open(encoding="utf-8")))
    assert len(rows) == 24 and {r["first_op"] for r in rows} == {"act.forward"}
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    assert doc["divergence"]["pattern"] == "every_rank_same_operator" and len(doc["cells"]) == 24
    assert doc["pair"]["source"] == "act.forward" and doc["shown_pair"] == {"step": 0, "rank": 0}
    html = html_path.read_text(encoding="utf-8")
    assert "Steps and ranks" in html and "every rank (8) deviates at act.forward" in html


def test_compare_cli_local_scheduler(trees, capsys):
    pytest.importorskip("distributed")
    assert _compare([str(trees["compute"]), str(trees["base"]), "--scheduler", "local", "--workers", "2"]) == 1
    assert "rank 5 alone deviates from step 1 at fc2.forward" in capsys.readouterr().out


def test_folders_of_many_dumps_without_steps_or_ranks_are_refused(tmp_path, capsys):
    for name in ("a", "b"):
        write_tree(tmp_path / "run" / "dump" / name, ranks=1, steps=1, rank_dirs=False)
    (tmp_path / "run" / "dump" / "a" / "step0").rename(tmp_path / "run" / "dump" / "a" / "first")
    (tmp_path / "run" / "dump" / "b" / "step0").rename(tmp_path / "run" / "dump" / "b" / "second")
    assert _compare([str(tmp_path / "run"), str(tmp_path / "run" / "dump" / "a" / "first")]) == 2
    assert "name no step or rank" in capsys.readouterr().err


# -- advisor diagnose ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault, cause",
    [
        ("rank", "communication_error"),
        ("compute", "hardware_fault"),
        ("data", "data_sharding_error"),
        ("operator", "operator_accuracy"),
    ],
)
def test_diagnose_names_the_rank_specific_cause(trees, tmp_path, fault, cause):
    import shutil

    from advisor.diagnosis import diagnose

    run = tmp_path / "run"
    base = tmp_path / "base"
    shutil.copytree(trees[fault], run / "dump")
    shutil.copytree(trees["base"], base / "dump")
    report = diagnose(str(run), str(base))
    top = report.causes[0]
    assert top.id == cause and top.confidence >= 0.5
    assert any("rank_divergence" in e.facts for e in top.evidence) or cause == "operator_accuracy"
    notes = [n for c in report.checks for n in c.notes]
    assert any("24 step x rank pairs" in n for n in notes), notes
    if cause != "operator_accuracy":  # the same operators match on the other ranks
        assert all(c.id != "operator_accuracy" or c.confidence < top.confidence for c in report.causes)


def test_diagnose_on_a_local_cluster(trees, tmp_path, capsys):
    pytest.importorskip("distributed")
    import shutil

    from advisor.cli import main

    shutil.copytree(trees["compute"], tmp_path / "run" / "dump")
    shutil.copytree(trees["base"], tmp_path / "base" / "dump")
    argv = ["diagnose", str(tmp_path / "run"), "--baseline", str(tmp_path / "base"), "--format", "json", "-q"]
    main([*argv, "--scheduler", "local"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["causes"][0]["id"] == "hardware_fault"


def test_many_ranks_at_one_operator_are_one_line(trees, capsys):
    from advisor.compare.tree_table import rank_span

    assert rank_span([0, 1, 2, 3, 5, 7, 8]) == "0-3, 5, 7-8" and rank_span([4]) == "4"
    assert _compare([str(trees["operator"]), str(trees["base"])]) == 1
    out = capsys.readouterr().out
    assert "act.forward (compute) on 8 ranks: 0-7" in out and out.count("act.forward (compute)") == 3  # one per step


def test_a_sweep_on_one_local_cluster(trees, tmp_path, capsys):
    pytest.importorskip("distributed")
    import shutil

    from advisor.cli import main

    for fault in ("compute", "rank"):
        shutil.copytree(trees[fault], tmp_path / fault / "dump")
    shutil.copytree(trees["base"], tmp_path / "base" / "dump")
    runs = [str(tmp_path / "compute"), str(tmp_path / "rank")]
    main(["diagnose", *runs, "--baseline", str(tmp_path / "base"), "--format", "json", "-q", "--scheduler", "local"])
    rows = json.loads(capsys.readouterr().out)["runs"]
    assert [r["top_cause"] for r in rows] == ["hardware_fault", "communication_error"]
