"""Property-based fuzzing of the whole diagnosis (issue 29): a run folder holding one generated file of each
kind advisor reads, in several encodings and sizes, is diagnosed in-process. Whatever the file holds:

- ``diagnose`` returns a report (no exception escapes);
- no step of advisor fails on it (no input of kind ``internal``: those are advisor's bugs, named so that the
  rest of the diagnosis goes on; a reader's own refusal is ``unreadable`` with a reason);
- nothing is written into the run folder;
- no file outside the run folder is opened (an audit hook records every ``open``; advisor's own package and
  the interpreter's libraries are the only other places allowed).

The reader-level fuzzing of each parser is tests/hostile/test_fuzz.py; this one adds the extractors and the
rules on top, which is where a reader's odd-but-accepted output turns into a failure (a CSV cell beyond the
csv module's limit once failed the data and model extractors here).
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
import sysconfig
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.hostile.test_fuzz import HOSTILE_TEXT, csvs, json_docs, jsonls, logs, numbers, texts, yamls  # noqa: E402

FEW, MANY = 20, int(os.environ.get("ADVISOR_FUZZ_EXAMPLES", "300"))
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "latin-1", "cp1252"]

# -- what advisor may open besides the run folder -----------------------------------------------------------
_ALLOWED = tuple(
    str(Path(p).resolve())
    for p in {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        *sysconfig.get_paths().values(),
        str(Path(__file__).resolve().parents[2] / "advisor"),
        str(Path(__file__).resolve().parents[2] / "rules"),
        str(Path(__file__).resolve().parents[2] / "templates"),
    }
)
_opened: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # cannot be removed; it records only while a test sets _opened


def _outside(paths: list[str], folder: Path) -> list[str]:
    from advisor.rulebase.cache import cache_dir

    inside = str(folder.resolve())
    cache = cache_dir()
    allowed = _ALLOWED + ((str(cache.resolve()),) if cache is not None else ())  # the rule and template caches
    bad = []
    for p in paths:
        real = os.path.realpath(p)
        if real == inside or real.startswith(inside + os.sep) or real.startswith(allowed):
            continue
        if real.startswith(("/dev/null", "/proc/self/", "/sys/devices/system/cpu")):  # os.cpu_count, memory probes
            continue
        bad.append(p)
    return bad


# -- generated files ------------------------------------------------------------------------------------------
def _encoded(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="replace")


encoded_logs = st.builds(_encoded, logs, st.sampled_from(ENCODINGS))
wide_csvs = st.builds(lambda head, n, tail: head + "x" * n + ",1\n" + tail, csvs, st.integers(60_000, 300_000), csvs)
sample_csvs = st.one_of(
    st.builds(lambda rows: "x1,x2,label\n" + rows, csvs),
    st.builds(lambda n, rows: "x1,x2,label\n" + "y" * n + ",1,0\n" + rows, st.integers(100_000, 300_000), csvs),
)
DESCRS = ["<f4", "<f8", "<f2", "<V2", "|V1", "|O", "<c16", "|b1", "<U5", ">f8", "<i8", "|u1", "<M8[s]", "[('a', '<f4')]"]
SHAPES = ["(4,)", "(2, 2)", "()", "(0,)", "(-1,)", "(99999999999, 99999999999)", "(3,", "(2, 'x')", "(1e3,)"]


def _npy(descr: str, shape: str, fortran: str, payload: bytes, version: int) -> bytes:
    header = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr if descr.startswith("[") else repr(descr),
        fortran,
        shape,
    )
    header += " " * (-(len(header) + 11) % 64) + "\n"
    size = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + size + header.encode("latin-1", "replace") + payload


npys = st.one_of(
    st.builds(_npy, st.one_of(st.sampled_from(DESCRS), texts), st.one_of(st.sampled_from(SHAPES), texts),
              st.sampled_from(["False", "True", "1", "'x'"]), st.binary(max_size=64), st.sampled_from([1, 2])),
    st.binary(max_size=200),
)
LAYERS = ["Linear(in_features={a}, out_features={b}, bias=True)", "Conv2d({a}, {b}, kernel_size=(3, 3), stride=(1, 1))",
          "ReLU()", "Softmax(dim=-1)", "Dropout(p={f}, inplace=False)", "BatchNorm2d({a}, eps=1e-05, momentum={f})",
          "Sigmoid()", "LayerNorm(({a},), eps={f}, elementwise_affine=True)", "Embedding({a}, {b})"]


def _module_repr(lines: list[tuple[int, str, str, object, object, object]]) -> str:
    out = ["Net("]
    for depth, name, layer, a, b, f in lines:
        out.append("  " * (1 + depth % 6) + f"({name}): " + layer.format(a=a, b=b, f=f))
    return "\n".join(out + [")"])


model_texts = st.one_of(
    st.builds(_module_repr, st.lists(st.tuples(st.integers(0, 40), st.one_of(st.sampled_from(["fc", "0", "conv1"]), texts),
                                               st.sampled_from(LAYERS), numbers, numbers, numbers), max_size=30)),
    st.text(max_size=300),
    st.sampled_from(HOSTILE_TEXT),
)

#: (file name inside the run, strategy)
FILES = {
    "train.log": st.one_of(logs, encoded_logs, st.binary(max_size=400)),
    "metrics.csv": st.one_of(csvs, wide_csvs),
    "metrics.jsonl": jsonls,
    "trainer_state.json": json_docs.map(lambda t: '{"log_history": [' + t + "]}"),
    "tensors.jsonl": jsonls,
    "hparams.yaml": yamls,
    "config.json": json_docs,
    "model.txt": model_texts,
    "data/train.csv": sample_csvs,
    "data/train.npy": npys,
}


def _diagnose_one(folder: Path, files: dict[str, str | bytes]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    _diagnose_one_in(folder, files)


def _diagnose_one_in(folder: Path, files: dict[str, str | bytes]) -> None:
    """Write ``files`` into ``folder`` (which may hold other entries already), diagnose it, check the report."""
    global _opened
    import advisor

    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    before = sorted((p.relative_to(folder).as_posix(), p.stat().st_size) for p in folder.rglob("*"))
    _opened = []
    try:
        report = advisor.diagnose(folder)
    finally:
        opened, _opened = _opened, None
    assert report.summary.headline
    internal = [f"{i.path}: {i.why}" for i in report.inputs if i.kind == "internal"]
    assert not internal, internal
    assert sorted((p.relative_to(folder).as_posix(), p.stat().st_size) for p in folder.rglob("*")) == before
    assert not _outside(opened, folder), _outside(opened, folder)


@pytest.mark.parametrize("n", [pytest.param(FEW, id="few"), pytest.param(MANY, id="many", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", sorted(FILES))
def test_diagnosis_of_a_generated_file_never_fails_writes_or_wanders(name, n, tmp_path):
    @settings(max_examples=n, deadline=None, database=None, derandomize=n == FEW,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(FILES[name])
    def run(content):
        _diagnose_one(tmp_path / "run", {name: content})

    run()


@pytest.mark.parametrize("n", [pytest.param(FEW, id="few"), pytest.param(MANY, id="many", marks=pytest.mark.slow)])
def test_diagnosis_of_generated_files_together(n, tmp_path):
    """Several generated files at once: the extractors that combine them (settings with curves, a model with
    data) meet odd values from more than one side."""

    @settings(max_examples=3 * n, deadline=None, database=None, derandomize=n == FEW,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(st.fixed_dictionaries({}, optional=FILES))
    def run(files):
        _diagnose_one(tmp_path / "run", files)

    run()


LINKS = {"metrics.csv": "/etc/passwd", "data": "/etc", "dump": "/usr/lib", "hparams.yaml": "../outside.yaml"}


def test_generated_run_with_links_out_of_it_opens_nothing_outside(tmp_path):
    """Links out of the run (a file, folders) beside a generated log: none is followed, whatever the log holds."""
    (tmp_path / "outside.yaml").write_text("lr: 0.1\n")

    @settings(max_examples=FEW, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(FILES["train.log"])
    def run(log):
        folder = tmp_path / "run"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for name, target in LINKS.items():
            (folder / name).symlink_to(target)
        _diagnose_one_in(folder, {"train.log": log})

    run()
