"""Values no real run writes but a hostile or broken one can (issue #29, classes 4 and 5): names that are not
valid Unicode, integers beyond float range, folders nested thousands deep, curves at +-1e308, lines that
never end. Each gets an answer (the diagnosis goes on, exit 0), never a traceback or a memory blow-up."""

from __future__ import annotations

import io
import json
import os
import re
import warnings
from pathlib import Path

import pytest

from advisor.read.bounded import bounded_lines
from tests.hostile.conftest import diagnose_in_child, diagnose_json, inputs_by_path


ENGINES = ("durable", "python")


def _engine_available(name: str) -> bool:
    from advisor.rulebase import backends

    try:
        backends.choose(name)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("engine", ENGINES)
def test_lone_surrogates_in_config_reach_the_rules(engine, run_dir, cli):
    if not _engine_available(engine):
        pytest.skip(f"engine {engine} not available here")
    # JSON may spell a lone surrogate; Python reads it into a str that UTF-8 cannot encode
    (run_dir / "config.json").write_text('{"\\ud800name": "\\udc00value", "learning_rate": 5.0}')
    report = diagnose_json(cli, run_dir, "--engine", engine)
    assert inputs_by_path(report)["config.json"]["status"] == "used"
    for fmt in ("text", "md", "html"):
        code, out, err = cli("diagnose", run_dir, "--engine", engine, "-f", fmt)
        assert code == 0, err
        assert "Traceback" not in out + err


def test_integer_beyond_float_range_leaves_the_other_settings(run_dir, cli):
    text = (run_dir / "hparams.yaml").read_text()
    (run_dir / "hparams.yaml").write_text(text + "max_steps: " + "9" * 400 + "\n")
    report = diagnose_json(cli, run_dir)
    assert inputs_by_path(report)["hparams.yaml"]["status"] == "used"
    code, out, err = cli("facts", run_dir, "-f", "json")
    assert code == 0, err
    hp = {f["name"]: f["value"] for f in json.loads(out)["facts"] if f["kind"] == "hyperparameter"}
    assert hp.get("learning_rate") == pytest.approx(0.05), "the hparams extractor gave up over one huge integer"
    assert hp.get("batch_size") == 32


def test_folder_nested_thousands_deep(run_dir, cli, tmp_path):
    deep = run_dir / "extra"
    path = str(deep)
    for _ in range(3000):
        path = os.path.join(path, "d")
    # paths longer than PATH_MAX cannot be made in one call: descend relative to each level
    os.makedirs(deep)
    cwd = os.getcwd()
    try:
        os.chdir(deep)
        for _ in range(3000):
            os.mkdir("d")
            os.chdir("d")
        Path("note.txt").write_text("deep")
    finally:
        os.chdir(cwd)
    try:
        report = diagnose_json(cli, run_dir)
        assert "loss" in [c["id"] for c in report["charts"]]
        out = tmp_path / "out"
        out.mkdir()
        code, _, err = cli("diagnose", run_dir, "-o", out / "report.html")
        assert code == 0, err
    finally:
        _remove_deep(deep, 3000)


def _remove_deep(top: Path, depth: int) -> None:
    """shutil.rmtree recurses per level too: climb back up, removing one level at a time."""
    cwd = os.getcwd()
    try:
        os.chdir(top)
        for _ in range(depth):
            os.chdir("d")
        os.remove("note.txt")
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(cwd)
    top.rmdir()


def test_curve_at_the_edge_of_float_range_draws_without_nan(run_dir, cli):
    log = run_dir / "train.log"
    lines = log.read_text().splitlines()
    lines.insert(3, "epoch 1 step 7 loss 1e308 lr 0.05")
    lines.insert(4, "epoch 1 step 8 loss -1e308 lr 0.05")
    lines.insert(5, "epoch 1 step 9 loss inf lr 0.05")
    log.write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow warnings would reach the terminal
        code, html, err = cli("diagnose", run_dir, "-f", "html")
    assert code == 0, err
    assert "RuntimeWarning" not in err
    svgs = html.split("<svg")[1:]
    assert svgs, "no chart drawn"
    for svg in svgs:
        body = svg.split("</svg>")[0]
        coords = re.findall(r'\b(?:x|y|x1|x2|y1|y2|cx|cy|width|height|points|d)="([^"]*)"', body)
        assert coords
        assert not [c for c in coords if re.search(r"nan|inf", c, re.I)], "a coordinate is not a number"
    assert "drawn at that edge" in html


def test_metrics_csv_line_that_never_ends(run_dir, cli):
    logs = run_dir / "lightning_logs" / "version_0"
    logs.mkdir(parents=True)
    rows = ["epoch,step,train_loss"] + [f"0,{i},{2.3 - i * 0.01:.3f}" for i in range(50)]
    with open(logs / "metrics.csv", "w") as fh:
        fh.write("\n".join(rows[:20]) + "\n")
        fh.write("0,20," + "1" * (3 << 20) + "\n")  # one 3 MiB field: skipped, the rows after it kept
        fh.write("\n".join(rows[21:]) + "\n")
    (run_dir / "train.log").unlink()  # the metrics file is the run's only curve
    report = diagnose_json(cli, run_dir)
    record = inputs_by_path(report)["lightning_logs/version_0/metrics.csv"]
    assert record["status"] == "used"
    assert "line 21: line longer than" in record["why"]
    code, out, err = cli("facts", run_dir, "-f", "json")
    curves = [f for f in json.loads(out)["facts"] if f["kind"] == "loss_curve"]
    assert [(c["source"]["path"], c["points"], c["last_step"]) for c in curves] == [
        ("lightning_logs/version_0/metrics.csv", 49, 49)
    ], "the rows after the long line were lost"


def test_csv_line_of_a_gigabyte_is_read_in_bounded_memory(run_dir):
    """A CSV in data/ of 1 GiB of zeros with no newline (a sparse file: nothing on disk) is one line; the
    sniff for a sample header reads it a piece at a time (the whole line as one string took 2 GB)."""
    rel = "data/extra.csv"
    with open(run_dir / rel, "wb") as fh:
        fh.truncate(1 << 30)
    result = diagnose_in_child(run_dir)
    assert result["rss_kb"] < 600_000, result["rss_kb"]
    paths = {i["path"] for i in result["inputs"]}
    assert rel in paths and "train.log" in paths  # the rest of the run still read


def test_bounded_lines_skips_long_lines_and_keeps_the_rest():
    text = "a,b\n" + "x" * 100 + "\n1,2\n" + "y" * 50
    told: list[int] = []
    got = list(bounded_lines(io.StringIO(text), limit=40, on_long=told.append))
    assert got == ["a,b\n", "1,2\n"]
    assert told == [2, 4]
    assert list(bounded_lines(io.BytesIO(b"r1\r\nr2"), limit=40)) == [b"r1\r\n", b"r2"]
    # a line exactly at the limit, with its newline, is kept
    assert list(bounded_lines(io.StringIO("z" * 39 + "\n"), limit=40)) == ["z" * 39 + "\n"]


def test_log_read_stops_at_the_byte_cap(run_dir, cli, monkeypatch):
    import advisor.read.logs as logs

    size = (run_dir / "train.log").stat().st_size
    monkeypatch.setattr(logs, "MAX_LOG_BYTES", size // 2)
    report = diagnose_json(cli, run_dir)
    why = inputs_by_path(report)["train.log"]["why"] or ""
    assert "read the first" in why and "the rest was not read" in why
    code, out, err = cli("facts", run_dir, "-f", "json")
    (train,) = [f for f in json.loads(out)["facts"] if f["kind"] == "loss_curve" and f["split"] == "train"]
    lines = (run_dir / "train.log").read_bytes()[: size // 2].count(b"\n")
    assert train["source"]["line_end"] <= lines + 1


def test_sparse_log_is_read_up_to_the_cap(run_dir, cli, monkeypatch):
    import advisor.read.logs as logs

    monkeypatch.setattr(logs, "MAX_LOG_BYTES", 64 << 20)
    (run_dir / "train.log").unlink()
    with open(run_dir / "stdout.log", "wb") as fh:
        fh.write(b"".join(b"epoch 1 step %d loss %.3f\n" % (i, 2.3 - i * 0.01) for i in range(1, 60)))
        fh.truncate(1 << 40)  # a terabyte announced, nothing on disk
    report = diagnose_json(cli, run_dir)
    record = inputs_by_path(report)["stdout.log"]
    assert record["status"] == "used" and "read the first" in record["why"]
    assert "loss" in [c["id"] for c in report["charts"]]


def test_log_padded_with_nuls_is_still_text(run_dir, cli):
    """A crash can leave a log's tail as NUL bytes (a file-system hole): many NULs in the first 64 KiB made it
    look like UTF-16, and the whole log one unreadable line."""
    log = run_dir / "train.log"
    with open(log, "ab") as fh:
        fh.write(bytes(50_000))
    report = diagnose_json(cli, run_dir)
    assert inputs_by_path(report)["train.log"]["status"] == "used"
    code, out, err = cli("facts", run_dir, "-f", "json")
    (train,) = [f for f in json.loads(out)["facts"] if f["kind"] == "loss_curve" and f["split"] == "train"]
    assert train["points"] > 20


def test_bfloat16_npy_dumps_are_compared_and_float8_named(cli, tmp_path):
    """ml_dtypes (JAX, TensorFlow, Keras) saves bfloat16 as '<V2' and float8 as '|V1' records: the first is read as
    bfloat16 and compared (a real error found), the second is named as not compared, and the summary says so."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    run, base = tmp_path / "run", tmp_path / "base"
    run.mkdir()
    base.mkdir()
    x = np.random.default_rng(0).standard_normal(2000).astype(np.float32)
    spoiled = x.copy()
    spoiled[:200] *= 3
    np.save(run / "conv1.output.0.npy", x.astype(ml_dtypes.bfloat16))
    np.save(base / "conv1.output.0.npy", x.astype(ml_dtypes.bfloat16))
    np.save(run / "fc.output.0.npy", spoiled.astype(ml_dtypes.bfloat16))
    np.save(base / "fc.output.0.npy", x)  # a float32 baseline against a bfloat16 run
    np.save(run / "head.output.0.npy", x.astype(ml_dtypes.float8_e4m3fn))
    np.save(base / "head.output.0.npy", x.astype(ml_dtypes.float8_e4m3fn))
    assert b"'descr': '<V2'" in (run / "fc.output.0.npy").read_bytes()[:128]
    code, out, err = cli("compare", run, base)
    assert code in (0, 1), err
    assert "1 error" in out and "1 pass" in out and "1 skipped" in out, out
    assert "source operator: fc" in out
    assert "head.output.0.npy" in out and "float8" in out
    assert "Traceback" not in err


def test_float8_pt_tensor_is_read_exactly(tmp_path):
    """torch has float8 tensors that numpy cannot hold: they are read as their exact float32 values."""
    torch = pytest.importorskip("torch")
    from advisor.read.dumps import TensorRecord, load_tensor

    x = torch.randn(2000, generator=torch.Generator().manual_seed(0)).to(torch.float8_e4m3fn)
    torch.save(x, tmp_path / "head.output.0.pt")
    rec = TensorRecord(
        name="head.output.0", op="head", role="output", index="0", order=0, file=tmp_path / "head.output.0.pt"
    )
    arr = load_tensor(rec)
    assert arr.dtype.name == "float32" and arr.shape == (2000,)
    assert (torch.from_numpy(arr) == x.float()).all()


def test_run_of_nul_files_names_them_unreadable(cli, tmp_path):
    """A crash that left only NUL-filled files: the headline names them as unreadable, not 'no artifact found'."""
    run = tmp_path / "run"
    run.mkdir()
    for name in ("train.log", "metrics.csv"):
        with open(run / name, "wb") as fh:
            fh.truncate(200_000)
    report = diagnose_json(cli, run)
    assert report["summary"]["verdict"] == "no_input"
    assert "metrics.csv, train.log are unreadable" in report["summary"]["headline"]
    assert {i["path"]: i["status"] for i in report["inputs"]} == {"metrics.csv": "unreadable", "train.log": "unreadable"}
    code, out, _ = cli("diagnose", run / "train.log")
    assert code == 0 and "train.log is unreadable" in out and "run folder" not in out.splitlines()[2]


def test_sample_csv_with_a_field_beyond_csv_limit_is_named(cli, run_dir):
    """A cell of 200,000 characters (beyond the csv module's 131,072): that file is unreadable with the reason;
    no extractor fails on it, and the log is still read."""
    import csv

    old = csv.field_size_limit(131_072)  # the default: importing MindSpore (another test) raises it process-wide
    try:
        _field_beyond_csv_limit(cli, run_dir)
    finally:
        csv.field_size_limit(old)


def _field_beyond_csv_limit(cli, run_dir):
    (run_dir / "data").mkdir(exist_ok=True)
    (run_dir / "data" / "odd.csv").write_text("x,label\n" + "1,0\n" * 5 + "A" * 200_000 + ",1\n")
    report = diagnose_json(cli, run_dir)
    inputs = inputs_by_path(report)
    assert inputs["data/odd.csv"]["status"] == "unreadable"
    assert "field larger than field limit" in inputs["data/odd.csv"]["why"]
    assert not [p for p in inputs if p.startswith("<")], inputs
    assert inputs["train.log"]["status"] == "used"


def test_dump_above_the_tensor_limit_is_refused_with_the_way_out(cli, tmp_path, monkeypatch):
    """A dump index beyond MAX_DUMP_TENSORS is refused before anything is compared, naming the limit and how to
    split the dump; the comparison of a dump at the limit runs."""
    import numpy as np

    import advisor.read.dump_files as dumps

    run, base = tmp_path / "run", tmp_path / "base"
    for side in (run, base):
        side.mkdir()
        for i in range(6):
            np.save(side / f"op{i}.output.0.npy", np.ones(4, np.float32))
    monkeypatch.setattr(dumps, "MAX_DUMP_TENSORS", 5)
    code, out, err = cli("compare", run, base)
    assert code == 2 and "6 tensors, above advisor's limit of 5 per dump" in err and "one step or rank" in err
    monkeypatch.setattr(dumps, "MAX_DUMP_TENSORS", 6)
    code, out, err = cli("compare", run, base)
    assert code == 0 and "6 pass" in out, out + err


def test_npy_cut_short_after_indexing_is_named_truncated(tmp_path):
    """A tensor file that got shorter between indexing and comparing (a writer still at work) is named truncated,
    as one that was short from the start."""
    import numpy as np

    from advisor.read.dumps import DumpReadError, load_tensor, read_npy_dump

    np.save(tmp_path / "a.output.0.npy", np.arange(64, dtype=np.float32))
    (rec,) = read_npy_dump(tmp_path).records
    data = (tmp_path / "a.output.0.npy").read_bytes()
    (tmp_path / "a.output.0.npy").write_bytes(data[:-16])
    with pytest.raises(DumpReadError) as err:
        load_tensor(rec)
    assert str(err.value) == "truncated .npy file (fewer bytes than its header announces)"
