"""read_run: what one run folder holds, read once, on the committed examples and on broken files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder
from advisor.read import run as run_mod
from advisor.read.run import RunRead, read_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_healthy_example_is_read_whole():
    got = read_run(RunFolder.scan(EXAMPLES / "healthy"))
    assert [(f.shown, f.kind, f.extra) for f in got.logs] == [("train.log", "log", False)]
    (log,) = got.logs
    assert log.read.problem is None and "train/loss" in log.read.series
    (hp,) = got.hparams
    assert hp.shown == "hparams.yaml" and hp.problem is None
    assert hp.data is not None and hp.data["lr"] == 0.05 and hp.data["optimizer"] == "sgd" and "lr" in hp.lines
    assert [t.shown for t in got.tensor_files] == ["tensors.jsonl"]
    assert sorted(p.as_posix() for p in got.npz_files) == ["data/eval.npz", "data/train.npz"]
    assert sorted(s.split for s in got.samples().sets) == ["eval", "train"]
    key, y = got.npz_labels(Path("data/train.npz"))
    assert key == "y" and y.ndim == 1 and np.unique(y).size == 10
    assert got.dumps == [] and got.problems == []


def test_mindspore_port_example_holds_its_dump_and_hparams():
    got = read_run(RunFolder.scan(EXAMPLES / "mindspore_port" / "run"))
    assert got.logs == []
    assert [f.shown for f in got.hparams] == ["hparams.yaml"]
    (d,) = got.dumps
    assert d.problem is None and d.dump is not None
    assert d.dump.layout == "mindspore" and len(d.dump.records) > 0


def _counting(monkeypatch, name: str, calls: Counter) -> None:
    real = getattr(run_mod, name)

    def counted(path, *args, **kwargs):
        calls[(name, Path(path.root if isinstance(path, RunFolder) else path).as_posix())] += 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(run_mod, name, counted)


#: files whose arrays or records are streamed on demand (several opens, all by the one reader that owns them)
STREAMED_SUFFIXES = {".npz", ".npy"}
STREAMED_NAMES = {"tensors.jsonl"}
CONFIG_SAMPLES = Path(__file__).resolve().parents[1] / "extract" / "config_samples"
HF_OUTPUT = CONFIG_SAMPLES / "hf_output"
LIGHTNING = CONFIG_SAMPLES / "lightning" / "lightning_logs" / "version_1"


def _opens_per_file(monkeypatch, roots: list[Path]) -> dict[str, list[str]]:
    """Every open of a file below ``roots`` (builtins.open, io.open: pathlib, zipfile and numpy go through them),
    as file -> the advisor module that opened it, for each open."""
    import builtins
    import io
    import sys

    roots = [r.resolve() for r in roots]
    opens: dict[str, list[str]] = {}
    real = builtins.open

    def counted(file, *args, **kwargs):
        if isinstance(file, (str, Path)):
            path = Path(file).resolve()
            if any(r == path or r in path.parents for r in roots):
                frame = sys._getframe(1)
                while frame is not None and not frame.f_globals.get("__name__", "").startswith("advisor."):
                    frame = frame.f_back
                module = frame.f_globals["__name__"] if frame is not None else "?"
                opens.setdefault(path.as_posix(), []).append(module)
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counted)
    monkeypatch.setattr(io, "open", counted)
    return opens


def _reader(module: str) -> str:
    return "advisor.read.logs" if module.startswith("advisor.read.logs.") else module


def test_each_file_is_opened_once_by_all_the_readers_and_extractors(monkeypatch, tmp_path):
    """Across every reader and extractor, each file of a run is opened once; the arrays of data samples, dumps
    and tensor logs are streamed on demand (several opens), but only by the reader that owns them."""
    folders = [(EXAMPLES / n, None) for n in ("healthy", "lr_too_high")]
    folders += [(EXAMPLES / n / "run", EXAMPLES / n / "baseline") for n in ("gelu_port", "mindspore_port")]
    folders.append((HF_OUTPUT / "checkpoint-12", None))  # trainer_state.json and a model's config.json
    folders.append((LIGHTNING, None))  # Lightning's CSVLogger metrics.csv (its header is read too)
    (tmp_path / "metrics.jsonl").write_text(
        "".join(f'{{"step": {s}, "loss": {2.0 / s:.4f}, "lr": 0.01}}\n' for s in range(1, 30))
    )
    folders.append((tmp_path, None))
    opens = _opens_per_file(monkeypatch, [EXAMPLES, HF_OUTPUT, LIGHTNING, tmp_path])
    for run, baseline in folders:
        pair = RunPair(RunFolder.scan(run), RunFolder.scan(baseline, "baseline") if baseline else None)
        ex = extract_facts(pair)
        assert not [i for i in ex.inputs if i.kind == "internal"]
        assert [i for i in ex.inputs if i.status == "used"]
    names = {Path(p).name for p in opens}
    assert {"train.log", "hparams.yaml", "train.npz", "trainer_state.json", "config.json"} <= names, names
    assert {"metrics.csv", "metrics.jsonl", "tensors.jsonl"} <= names, names
    twice = {}
    for path, modules in opens.items():
        p = Path(path)
        streamed = p.suffix in STREAMED_SUFFIXES or p.name in STREAMED_NAMES or "dump" in p.parts
        if (len({_reader(m) for m in modules}) if streamed else len(modules)) > 1:
            twice[path] = modules
    assert not twice, twice


def test_an_unreadable_file_is_named_and_the_rest_is_read(tmp_path):
    (tmp_path / "train.log").write_text("".join(f"step {s} loss {2.0 / s:.4f}\n" for s in range(1, 40)))
    (tmp_path / "hparams.yaml").write_text("lr: [0.1\nbatch_size: 32\n")  # an unclosed flow sequence
    (tmp_path / "config.json").write_bytes(b'{"lr": 0.1, "name": "\xff\xfe"}')  # not UTF-8
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / "dump.json").write_text("{not json")
    got = read_run(RunFolder.scan(tmp_path))
    problems = {f.shown: f.problem for f in got.hparams}
    assert problems["hparams.yaml"] is not None and "not valid YAML" in problems["hparams.yaml"]
    assert problems["config.json"] is not None and "not UTF-8" in problems["config.json"]
    assert [d.shown for d in got.dumps] == ["dump"] and got.dumps[0].problem
    assert got.logs[0].read.problem is None and got.logs[0].read.series["train/loss"]
    ex = extract_facts(RunPair(got))
    bad = {(i.path, i.kind) for i in ex.inputs if i.status == "unreadable"}
    assert {("hparams.yaml", "hparams"), ("config.json", "hparams"), ("dump/dump.json", "dump")} <= bad
    assert ("train.log", "log", "used") in {(i.path, i.kind, i.status) for i in ex.inputs}
    assert any(f.kind == "loss_curve" for f in ex.facts)


def test_standard_input_and_one_file_are_read_as_the_log(tmp_path):
    text = "".join(f"step {s} loss {3.0 / s:.4f}\n" for s in range(1, 30)).encode()
    piped = read_run(RunFolder.open("-", stdin=text))
    assert [(f.shown, f.kind) for f in piped.logs] == [("stdin", "log")]
    assert piped.logs[0].read.series["train/loss"]
    assert piped.hparams == [] and piped.problems == []
    # searched for printed settings and a model as a log file is, from the bytes held in memory
    assert [(t.rel.name, t.text.encode()) for t in piped.model_texts] == [("stdin", text)]
    assert [(s.shown, s.found) for s in piped.log_settings] == [("stdin", [])]
    (tmp_path / "output").write_bytes(text)  # no suffix: still the log, because it was named
    (tmp_path / "other.log").write_bytes(text)
    single = read_run(RunFolder.open(tmp_path / "output"))
    assert [(f.shown, f.extra) for f in single.logs] == [("output", False)]


def test_a_reader_failing_on_a_bug_is_reported_and_the_others_go_on(tmp_path, monkeypatch):
    (tmp_path / "train.log").write_text("step 1 loss 0.5\nstep 2 loss 0.4\n")
    (tmp_path / "hparams.yaml").write_text("lr: 0.1\n")

    def broken(path, *a, **k):
        raise KeyError("boom")

    monkeypatch.setattr(run_mod, "load_mapping", broken)
    got = read_run(RunFolder.scan(tmp_path))
    assert [p.path for p in got.problems] == ["<reader hparams>"]
    assert "KeyError" in (got.problems[0].why or "")
    assert got.logs and got.logs[0].read.series
    assert got.problems[0] in RunPair(got).run.skipped


def test_run_pair_reads_a_folder_given_to_it(tmp_path):
    (tmp_path / "train.log").write_text("step 1 loss 0.5\n")
    pair = RunPair(RunFolder.scan(tmp_path), RunFolder.scan(tmp_path, "baseline"))
    assert isinstance(pair.run, RunRead) and isinstance(pair.baseline, RunRead)
    assert [r.side for r in pair.sides()] == ["run", "baseline"]


@pytest.mark.parametrize("name", ["samples", "dumps"])
def test_lazy_parts_are_read_at_most_once(tmp_path, monkeypatch, name):
    calls: Counter = Counter()
    _counting(monkeypatch, "find_samples" if name == "samples" else "read_dump", calls)
    (tmp_path / "data").mkdir()
    np.savez(tmp_path / "data" / "train.npz", x=np.zeros((8, 2)), y=np.arange(8) % 2)
    (tmp_path / "dump").mkdir()
    np.save(tmp_path / "dump" / "0000_fc.forward.output.0.npy", np.ones(3, np.float32))
    got = read_run(RunFolder.scan(tmp_path))
    assert not calls  # nothing read before it is asked for
    for _ in range(3):
        got.samples() if name == "samples" else got.dumps
    assert sum(calls.values()) == 1
