"""`advisor compare`: text summary, CSV/JSON/HTML outputs, exit codes, bad usage."""

from __future__ import annotations

import argparse
import csv
import json

import pytest

pytest.importorskip("torch")

from advisor.compare.cli import add_compare_parser, run_compare

from torch_models import MLP


def _run(argv):
    p = argparse.ArgumentParser()
    add_compare_parser(p.add_subparsers())
    args = p.parse_args(["compare", *argv])
    return args.func(args)


@pytest.fixture
def tanh_pair(dumps, mlp_input):
    return dumps(MLP, {"gelu": "tanh"}, {"gelu": "none"}, mlp_input)


def test_text_summary_names_the_source_and_exits_1(tanh_pair, capsys):
    run, base = tanh_pair
    assert _run([str(run), str(base)]) == 1  # folders above the dump are accepted
    out = capsys.readouterr().out
    assert "source operator: act.forward" in out
    assert out.index("act.forward.output.0") < out.index("fc2.forward.output.0")


def test_identical_dumps_exit_0(tanh_pair, tmp_path, capsys):
    import shutil

    run, _ = tanh_pair
    shutil.copytree(run / "dump", tmp_path / "copy")
    assert _run([str(run / "dump"), str(tmp_path / "copy")]) == 0
    assert "no operator deviates" in capsys.readouterr().out


def test_csv_json_html_outputs(tanh_pair, tmp_path):
    run, base = tanh_pair
    assert run_compare is not None
    _run([str(run), str(base), "-o", str(tmp_path / "t.csv")])
    rows = list(csv.DictReader((tmp_path / "t.csv").open()))
    assert rows[0]["name"] == "act.forward.output.0" and rows[0]["position"] == "source"
    assert rows[1]["name"] == "act.forward.input.0" and rows[2]["name"] == "std.forward.input.0"
    assert {"cosine", "kl_div", "rel_err_over_5e3_ratio", "std_diff", "accum_rel_err"} <= set(rows[0])
    _run([str(run), str(base), "-o", str(tmp_path / "t.json")])
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["source"] == "act.forward" and "fc3.forward" in data["propagated"]
    _run([str(run), str(base), "-o", str(tmp_path / "t.html")])
    html = (tmp_path / "t.html").read_text()
    assert "<code>act.forward</code>" in html and html.count("<tr") == len(rows) + 1


def test_html_escapes_hostile_names(tanh_pair, tmp_path):
    run, base = tanh_pair
    manifest = json.loads((run / "dump" / "manifest.json").read_text())
    manifest[0]["op_type"] = "<script>alert(1)</script>"
    (run / "dump" / "manifest.json").write_text(json.dumps(manifest))
    _run([str(run), str(base), "-o", str(tmp_path / "t.html")])
    html = (tmp_path / "t.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_bad_usage_exits_2(tanh_pair, tmp_path, capsys):
    run, base = tanh_pair
    assert _run([str(tmp_path / "nope"), str(base)]) == 2
    assert _run([str(run / "dump"), str(run / "dump")]) == 2  # the same dump twice: a slip, not a comparison
    assert _run([str(run), str(base), "-o", str(tmp_path / "t.xlsx")]) == 2
    assert _run([str(run), str(base), "-o", str(run / "dump" / "t.csv")]) == 2
    assert not (run / "dump" / "t.csv").exists()
    assert "advisor: error:" in capsys.readouterr().err
