"""``read_run(folder) -> RunRead``: everything the extractors use from one run (or baseline) folder, read once.

The one place where the files of a run are found and opened. ``RunFolder``
(advisor/inventory.py) lists the files; ``read_run`` picks, for each kind of
input, the files that may hold it and reads them with the format modules of
``advisor/read/`` (no judgement: a file that cannot be read keeps the reason
in ``problem``). The extractors (advisor/extract/) take a ``RunRead`` and
never open a file themselves.

What is read, in the order the folder lists its files:

- ``logs``: training logs and metrics files (text logs, CSV, JSONL,
  ``trainer_state.json``, TensorBoard events) as ``LogRead`` (read.logs);
- ``log_settings``: settings printed in text logs (mmdetection config dumps,
  argparse ``Namespace(...)``, command lines; read.log_settings), from the same
  read of a log's first bytes as ``model_texts``;
- ``hparams`` and ``trainer_states``: hyper-parameter/config files and
  Hugging Face ``trainer_state.json`` parsed to their top-level mapping (read.hparams);
- ``model_jsons``, ``model_texts``, ``csv_headers``: Keras/Hugging Face model
  configs, texts that may print a model (module reprs, Keras summaries),
  and the header line of CSV files (for the metric names a run logs);
- on first use, then kept: ``samples()`` (data samples, read.samples),
  ``npz_labels(rel)`` (the label array of a ``*train*.npz``), ``dumps()``
  (per-operator dumps, read.dumps) and ``tensor_files`` whose records are
  streamed by ``records()`` (read.tensors), which only the extractor that
  needs them reads (big dumps and tensor logs are not read for nothing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from advisor.facts.base import Side
from advisor.inventory import InputRecord, RunFolder
from advisor.read.dumps import Dump, DumpReadError, find_dump_roots, read_dump
from advisor.read.hparams import HPARAM_FILE_NAMES, HparamReadError, load_mapping
from advisor.read.scripts import ScriptFile, read_scripts, script_candidates
from advisor.read.log_settings import HEAD_BYTES, LogSettings, settings_in_text
from advisor.read.logs import read_file, read_file_head
from advisor.read.logs.hf_trainer import MAX_STATE_BYTES
from advisor.read.logs.merge import MergedRun, merge_reads
from advisor.read.logs.records import LogRead
from advisor.read.safe import file_problem
from advisor.read.samples import ArraySource, Found, find_samples, open_npz
from advisor.read.mindinsight import Histogram, histogram_records, is_lineage, is_summary, read_summary
from advisor.read.tensors import MAX_RECORDS, TensorReadLog, iter_tensor_records

# -- which files hold what ---------------------------------------------------------------------------
#: training logs and metrics files, by name
LOG_PATTERNS = (
    "*.log",
    "*.txt",
    "*.out",
    "*.err",
    "stdout",
    "stderr",
    "*.csv",
    "*.jsonl",
    "*.log.json",
    "scalars.json",
    "trainer_state.json",
    "events.out.tfevents.*",
    "*.summary.*",  # MindSpore SummaryCollector (read.mindinsight); its *_lineage companion is a settings file
)
#: files of other kinds, or that are never logs
LOG_SKIP_NAMES = {"tensors.jsonl", "requirements.txt", "manifest.json", "dump.json", "license.txt", "readme.txt"}
#: folders whose files are dumps or data, never logs or model descriptions
NOT_LOG_DIRS = {"dump", "dump_tensor_data", "data"}
#: suffixes of a file read as a text log (kind "log"); the other log files are "metrics"
TEXT_SUFFIXES = {".log", ".txt", ".out", ".err", ""}
#: other files read only when they turn out to hold metric lines (a console log saved as log_run1.md or
#: R50-FPN_log.py, a file called "output"): named *log* or without a suffix, up to this size
EXTRA_MAX_BYTES = 200_000_000
_NOT_EXTRA_SUFFIXES = (".npz", ".npy", ".pt", ".pth", ".json", ".yaml", ".yml", ".pkl", ".gz")

#: text logs searched for printed settings
SETTINGS_LOG_SUFFIXES = {".log", ".txt", ".out", ".err"}
SETTINGS_LOG_NAMES = {"stdout", "stderr"}
SETTINGS_NOT_LOGS = {"requirements.txt", "license.txt", "readme.txt", "notes.txt"}

#: texts that may print a model (a module repr, a Keras summary) or its compile settings
MODEL_TEXT_PATTERNS = ("*.log", "*.txt", "*.out", "*.err", "stdout", "stderr", "model.txt", "model_summary*")
MODEL_TEXT_SKIP_NAMES = {"requirements.txt", "license.txt", "readme.txt", "tensors.jsonl"}
#: only the start of a text is searched for a model
MAX_TEXT_BYTES = 8_000_000
#: the start of a text log that the settings and model searches read
SEARCH_BYTES = max(HEAD_BYTES, MAX_TEXT_BYTES)
#: a JSON model description (or a .keras file's config.json) larger than this is not read
MAX_JSON_BYTES = 20_000_000
#: the header line of a CSV file: at most this many bytes
MAX_HEADER_BYTES = 10_000
#: label arrays looked for in a training sample (.npz) for the class count
LABEL_KEYS = ("y", "labels", "label", "targets", "target")
#: a label array announcing more bytes than this (in its .npy header, checked against the zip directory's sizes) is
#: not loaded for the class count: ten million int64 labels
MAX_LABEL_BYTES = 80_000_000


# -- what was read -----------------------------------------------------------------------------------
@dataclass
class LogFile:
    """A training log or metrics file and what its reader made of it (``read.problem`` when unreadable)."""

    rel: Path
    shown: str
    kind: str  # "log" (text) | "metrics"
    #: found by its name only (*log*, no suffix): a log only if it holds series, otherwise not mentioned
    extra: bool
    read: LogRead

    @property
    def is_used(self) -> bool:
        """Its series and events count: read without a problem, with something recognised (a file found by
        its name only must hold series)."""
        return self.read.usable and not (self.extra and not self.read.series)


@dataclass
class MappingFile:
    """A hyper-parameter/config file (or trainer_state.json) parsed to its top-level mapping."""

    rel: Path
    shown: str
    data: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)  # what the parser noticed (duplicated keys ...)
    lines: dict[str, int] = field(default_factory=dict)  # dotted key -> line
    problem: str | None = None  # why it could not be read (then data is None)


@dataclass
class SettingsPrint:
    """The settings printed in one text log (its first bytes)."""

    rel: Path
    shown: str
    found: list[LogSettings]


@dataclass
class ModelJson:
    """A .json or .keras file that may describe a model: its parsed JSON, or why it could not be parsed."""

    rel: Path
    obj: Any = None
    problem: str | None = None


@dataclass
class GraphFile:
    """A model graph file (an ONNX model, a MindSpore IR dump): its layers as a description, or why not."""

    rel: Path
    description: Any = None  # advisor.read.model_desc.ModelDescription
    problem: str | None = None
    #: the other files of the same graph dump, not read (a MindSpore compile writes one IR file per pass)
    siblings: list[Path] = field(default_factory=list)


@dataclass
class TextHead:
    """The start of a text file, decoded (undecodable bytes replaced)."""

    rel: Path
    text: str


@dataclass
class DumpRead:
    """A per-operator dump folder: the dump's index (tensors are loaded on demand by read.dumps), or why not."""

    rel: Path
    shown: str
    dump: Dump | None = None
    problem: str | None = None


@dataclass
class TensorsFile:
    """A tensor-statistics log (tensors.jsonl of the capture hook); its records are streamed, never held."""

    rel: Path
    shown: str
    path: Path

    def records(self, log: TensorReadLog, max_records: int = MAX_RECORDS) -> Iterator[dict]:
        """The file's clean records, one by one (OSError when it cannot be opened)."""
        return iter_tensor_records(self.path, log, max_records)


@dataclass
class SummaryTensors(TensorsFile):
    """The weight histograms of a MindSpore summary file, read with its scalars (read.mindinsight), as
    tensor-statistics records."""

    histograms: list[Histogram] = field(default_factory=list)

    def records(self, log: TensorReadLog, max_records: int = MAX_RECORDS) -> Iterator[dict]:
        for rec in histogram_records(self.histograms[:max_records]):
            log.records += 1
            log.lines = rec["line"]
            yield rec


@dataclass
class RunRead:
    """What was read of one folder (run or baseline). Built by ``read_run``."""

    folder: RunFolder
    logs: list[LogFile] = field(default_factory=list)
    log_settings: list[SettingsPrint] = field(default_factory=list)
    hparams: list[MappingFile] = field(default_factory=list)  # in the folder's order
    trainer_states: list[MappingFile] = field(default_factory=list)
    model_jsons: list[ModelJson] = field(default_factory=list)
    model_texts: list[TextHead] = field(default_factory=list)
    model_graphs: list[GraphFile] = field(default_factory=list)
    csv_headers: list[TextHead] = field(default_factory=list)
    tensor_files: list[TensorsFile] = field(default_factory=list)
    npz_files: list[Path] = field(default_factory=list)
    #: Python training scripts of the folder (and those named with --code), parsed, never run
    scripts: list[ScriptFile] = field(default_factory=list)
    #: a reader that failed on a bug of ours (the other readers went on)
    problems: list[InputRecord] = field(default_factory=list)
    _npz_labels: dict[Path, tuple[str, np.ndarray] | None] = field(default_factory=dict, repr=False)
    #: JSON files read (bytes) and parsed (mapping, None when not one) by one reader for the next one
    _json: dict[Path, tuple[bytes, dict[str, Any] | None]] = field(default_factory=dict, repr=False)
    #: trainer_state.json files parsed while the logs were read
    _states: dict[Path, MappingFile] = field(default_factory=dict, repr=False)
    #: the weight histograms of MindSpore summary files, read with their scalars
    _summary_tensors: list[TensorsFile] = field(default_factory=list, repr=False)
    #: the first bytes of text logs, read by the log reader's open (for the settings and model searches)
    _heads: dict[Path, bytes] = field(default_factory=dict, repr=False)
    _samples: Found | Exception | None = field(default=None, repr=False)

    @property
    def side(self) -> Side:
        return self.folder.side

    @property
    def skipped(self) -> list[InputRecord]:
        """Files the listing could not take (links outside the folder, unreadable files), and readers that
        failed."""
        return self.folder.skipped + self.problems

    def shown(self, rel: Path) -> str:
        """The path as the report shows it."""
        return self.folder.rel(self.folder.abs(rel))

    def samples(self) -> Found:
        """The data samples of the folder (read.samples; arrays open lazily), found on first use.

        Raises what discovery raised, every time it is asked (it is not tried again)."""
        if self._samples is None:
            try:
                self._samples = find_samples(self.folder, {h.rel: h.text for h in self.csv_headers})
            except Exception as exc:  # noqa: BLE001 - kept and re-raised to each caller, as find_samples would
                self._samples = exc
        if isinstance(self._samples, Exception):
            raise self._samples
        return self._samples

    def npz_labels(self, rel: Path) -> tuple[str, np.ndarray] | None:
        """(key, array) of the first of LABEL_KEYS in the .npz ``rel``; None when it has none or cannot be read.

        Taken from the data samples already found (``samples()``: the archive is opened once); an .npz that
        sample discovery passes over (in a dump folder) is opened here."""
        if rel not in self._npz_labels:
            self._npz_labels[rel] = self._labels_of(rel)
        return self._npz_labels[rel]

    def _labels_of(self, rel: Path) -> tuple[str, np.ndarray] | None:
        try:
            found = self.samples()
        except Exception:  # noqa: BLE001 - discovery failed on a bug (reported by the data extractor)
            return _npz_labels(self.folder.abs(rel))
        shown = self.shown(rel)
        for sset in found.sets:
            if sset.files == [shown] and sset.key == shown:
                return _labels_in(sset.uncut or sset.arrays)
        if any(path == shown for path, _ in found.unreadable):
            return None  # not a readable .npz, or one without labels
        return _npz_labels(self.folder.abs(rel))

    @cached_property
    def merged_logs(self) -> MergedRun:
        """The used logs' series and events merged into one view (``read.logs.merge``), built once for every
        extractor that reads curves."""
        return merge_reads([log.read for log in self.logs if log.is_used])

    @cached_property
    def dumps(self) -> list[DumpRead]:
        """Every per-operator dump of the folder (its index: names, shapes, files), read on first use."""
        out = []
        for rel in find_dump_roots(self.folder.files):
            shown = rel.as_posix() or "."
            try:
                out.append(DumpRead(rel, shown, dump=read_dump(self.folder.abs(rel))))
            except (DumpReadError, OSError) as exc:
                out.append(DumpRead(rel, shown, problem=str(exc)))
        return out


def read_run(folder: RunFolder) -> RunRead:
    """Read what the extractors need from ``folder`` (a scanned folder, one file, or standard input)."""
    run = RunRead(folder=folder)
    for what, step in (
        ("logs", _read_logs),
        ("hparams", _read_mappings),
        ("log texts", _read_texts),
        ("model descriptions", _read_model_files),
        ("scripts", _read_scripts),
    ):
        try:
            step(run)
        except Exception as exc:  # noqa: BLE001 - a bug of ours in one reader must not stop the others
            run.problems.append(InputRecord.internal(f"<reader {what}>", exc, folder.side))
    run.tensor_files = [TensorsFile(rel, run.shown(rel), folder.abs(rel)) for rel in folder.glob(["tensors.jsonl"])]
    run.tensor_files += run._summary_tensors
    run.npz_files = folder.glob(["*.npz"])
    return run


def _read_logs(run: RunRead) -> None:
    states = set(run.folder.glob(["trainer_state.json"]))
    texts = set(_settings_logs(run.folder)) | set(_model_texts(run.folder))
    csvs = set(_csv_files(run.folder))
    for rel, extra in _log_candidates(run.folder):
        shown = run.shown(rel)
        kind = "log" if rel.suffix.lower() in TEXT_SUFFIXES else "metrics"
        path = run.folder.abs(rel)
        if is_lineage(rel.name):
            continue  # settings (read with the hyper-parameter files)
        if is_summary(rel.name):  # scalars and weight histograms in one read
            summary, hists = read_summary(path, shown)
            run.logs.append(LogFile(rel, shown, kind, extra, summary))
            if hists:
                run._summary_tensors.append(SummaryTensors(rel, shown, path, hists))
            continue
        raw = _whole(path, MAX_STATE_BYTES) if rel in states else None
        if raw is None:
            # a text log searched for settings and models too: its head comes from the same open
            want = SEARCH_BYTES if rel in texts else MAX_HEADER_BYTES if rel in csvs else 0
            want = want if want and _regular(path) else 0
            read, head = read_file_head(path, shown, want)
            if head is not None:
                run._heads[rel] = head
            run.logs.append(LogFile(rel, shown, kind, extra, read))
            continue
        # trainer_state.json: read and parsed once, for its log history and for the settings it records
        state = run._states[rel] = _mapping(run, rel, hparams=False, raw=raw)
        run.logs.append(LogFile(rel, shown, kind, extra, read_file(path, shown, data=raw, parsed=state.data)))


def _read_mappings(run: RunRead) -> None:
    for rel in run.folder.glob(HPARAM_FILE_NAMES):
        raw = _whole(run.folder.abs(rel), MAX_JSON_BYTES) if _is_model_json(rel) else None
        got = _mapping(run, rel, hparams=True, raw=raw)
        if raw is not None:  # config.json & co.: also read as a model description, from the same parse
            run._json[rel] = (raw, got.data)
        run.hparams.append(got)
    run.trainer_states = [
        run._states.get(rel) or _mapping(run, rel, hparams=False) for rel in run.folder.glob(["trainer_state.json"])
    ]


def _read_texts(run: RunRead) -> None:
    """The start of each text log, read once: settings printed in it, and a model it may print."""
    folder = run.folder
    settings, models = set(_settings_logs(folder)), set(_model_texts(folder))
    for rel in folder.files:
        if rel not in settings and rel not in models:
            continue
        head = run._heads.get(rel)
        if head is None:  # text piped in is searched as a file would be (its bytes are held, not opened)
            piped = folder.memory.get(rel.as_posix())
            head = piped[:SEARCH_BYTES] if piped is not None else _head(folder.abs(rel))
        if head is None:
            continue  # the log readers report an unreadable log
        if rel in settings:
            found = settings_in_text(head[:HEAD_BYTES].decode("utf-8", errors="replace"))
            run.log_settings.append(SettingsPrint(rel, run.shown(rel), found))
        if rel in models:
            run.model_texts.append(TextHead(rel, head[:MAX_TEXT_BYTES].decode("utf-8", errors="replace")))


def _read_model_files(run: RunRead) -> None:
    folder = run.folder
    for rel in folder.files:
        if _is_model_json(rel):
            got = _model_json(folder, rel, run._json.get(rel))
            if got is not None:
                run.model_jsons.append(got)
        elif rel.suffix.lower() == ".onnx" and not any(p.lower() in NOT_LOG_DIRS for p in rel.parts[:-1]):
            run.model_graphs.append(_onnx_graph(folder, rel))
    irs = [rel for rel in folder.files if rel.suffix.lower() == ".ir" and _regular(folder.abs(rel))]
    if irs:
        run.model_graphs.append(_mindspore_ir(folder, irs))
    for rel in _csv_files(folder):
        if rel in run._heads:  # read by the log reader: the header is the first line of what it read
            line = run._heads[rel][:MAX_HEADER_BYTES]
            end = line.find(b"\n")
            run.csv_headers.append(
                TextHead(rel, line[: end + 1 if end >= 0 else None].decode("utf-8", errors="replace"))
            )
            continue
        try:
            with open(folder.abs(rel), "rb") as fh:  # a file held in memory (stdin) is a log, not read here
                run.csv_headers.append(TextHead(rel, fh.readline(MAX_HEADER_BYTES).decode("utf-8", errors="replace")))
        except OSError:
            continue


def _read_scripts(run: RunRead) -> None:
    folder = run.folder
    named = [(path, path.as_posix(), None) for path in folder.code_files]  # --code: read wherever it lies, first
    found = [
        (folder.abs(rel), run.shown(rel), folder.memory.get(rel.as_posix())) for rel in script_candidates(folder.files)
    ]
    run.scripts = read_scripts(named + found)


# -- helpers ---------------------------------------------------------------------------------------------
def _log_candidates(folder: RunFolder) -> list[tuple[Path, bool]]:
    """(relative path, is an extra candidate) of the files that may hold logs or metrics."""
    if folder.single:  # RUN named one file (or '-'): it is the log, whatever its name
        return [(rel, False) for rel in folder.files]
    main = set(folder.glob(LOG_PATTERNS))
    out = []
    for rel in folder.files:
        if rel.name.lower() in LOG_SKIP_NAMES or any(part.lower() in NOT_LOG_DIRS for part in rel.parts[:-1]):
            continue
        if rel in main:
            out.append((rel, False))
        elif (rel.suffix == "" or "log" in rel.stem.lower()) and rel.suffix.lower() not in _NOT_EXTRA_SUFFIXES:
            try:
                if folder.abs(rel).stat().st_size <= EXTRA_MAX_BYTES:
                    out.append((rel, True))
            except OSError:
                continue
    return out


def _mapping(run: RunRead, rel: Path, hparams: bool, raw: bytes | None = None) -> MappingFile:
    got = MappingFile(rel, run.shown(rel))
    try:
        got.data = load_mapping(run.folder.abs(rel), got.notes if hparams else [], got.lines, raw=raw)
    except (HparamReadError, OSError) as exc:
        got.problem = str(exc)
    except UnicodeDecodeError as exc:
        got.problem = f"not UTF-8 text (byte {exc.start}: {exc.reason})"
    return got


def _csv_files(folder: RunFolder) -> list[Path]:
    """CSV files whose header line names the metrics a run logs (not data samples)."""
    return [
        rel
        for rel in folder.glob(["metrics.csv", "*.csv"])
        if not any(p.lower() in NOT_LOG_DIRS for p in rel.parts[:-1])
    ]


def _settings_logs(folder: RunFolder) -> list[Path]:
    return [
        rel
        for rel in folder.files
        if rel.as_posix() in folder.memory  # standard input: a log excerpt, read like train.log
        or (
            (rel.suffix.lower() in SETTINGS_LOG_SUFFIXES or rel.name.lower() in SETTINGS_LOG_NAMES)
            and rel.name.lower() not in SETTINGS_NOT_LOGS
            and not any(p.lower() in NOT_LOG_DIRS for p in rel.parts[:-1])
        )
    ]


def _is_model_json(rel: Path) -> bool:
    return rel.suffix.lower() == ".keras" or (
        rel.suffix.lower() == ".json"
        and rel.name.lower() not in ("trainer_state.json", "manifest.json", "dump.json")
        and not any(p.lower() in NOT_LOG_DIRS for p in rel.parts[:-1])
    )


def _model_json(
    folder: RunFolder, rel: Path, done: tuple[bytes, dict[str, Any] | None] | None = None
) -> ModelJson | None:
    """The parsed JSON of a model file; None for a file not read at all (too large, not a regular file).

    ``done``: (its bytes, its parsed mapping or None) when the hparams reader read it (config.json): then the
    same parsed object is used, or the same bytes parsed where the mapping reader refused them."""
    from advisor.read import model_desc as md

    if done is not None:
        raw, data = done
        if data is not None:
            return ModelJson(rel, obj=data)
        try:
            return ModelJson(rel, obj=json.loads(raw.decode("utf-8")))
        except Exception as exc:  # noqa: BLE001 - any unreadable user file is recorded, never raised
            return ModelJson(rel, problem=f"{type(exc).__name__}: {exc}")
    path = folder.abs(rel)
    try:
        if file_problem(path, MAX_JSON_BYTES) is not None:
            return None
    except OSError:  # a file held in memory (stdin)
        return None
    try:
        if rel.suffix.lower() == ".keras":
            return ModelJson(rel, obj=md.read_keras_file(path))
        if path.stat().st_size > MAX_JSON_BYTES:
            return None
        return ModelJson(rel, obj=json.loads(path.read_bytes().decode("utf-8")))
    except Exception as exc:  # noqa: BLE001 - any unreadable user file is recorded, never raised
        return ModelJson(rel, problem=f"{type(exc).__name__}: {exc}")


def _onnx_graph(folder: RunFolder, rel: Path) -> GraphFile:
    from advisor.read import onnx_graph

    try:
        graph = onnx_graph.read_graph(folder.abs(rel))
        return GraphFile(rel, description=onnx_graph.describe(graph, rel.as_posix()))
    except (onnx_graph.OnnxError, OSError) as exc:
        return GraphFile(rel, problem=str(exc))


def _mindspore_ir(folder: RunFolder, irs: list[Path]) -> GraphFile:
    """The one IR file of a MindSpore graph dump that describes the model: the first of
    read.mindspore_ir.ir_candidates that gives layers (at most MAX_IR_TRIES are read)."""
    from advisor.read import mindspore_ir

    by_path = {folder.abs(rel): rel for rel in irs}
    tries = mindspore_ir.ir_candidates(list(by_path))[: mindspore_ir.MAX_IR_TRIES] or [folder.abs(irs[0])]
    read = [_ir_graph(path, by_path[path]) for path in tries[:1]]
    for path in tries[1:]:
        if read[-1].problem is None:
            break
        read.append(_ir_graph(path, by_path[path]))
    got = read[-1] if read[-1].problem is None else read[0]  # none gives layers: the best candidate says why
    got.siblings = [r for r in irs if r != got.rel]
    return got


def _ir_graph(path: Path, rel: Path) -> GraphFile:
    from advisor.read import mindspore_ir

    notes: list[str] = []
    try:
        desc = mindspore_ir.read_ir(path, rel.as_posix(), notes)
    except OSError as exc:
        return GraphFile(rel, problem=f"{type(exc).__name__}: {exc}")
    if not desc.layers:
        why = "no forward node of a cell (not a MindSpore graph IR with scopes)"
        return GraphFile(rel, problem="; ".join([why, *notes]))
    return GraphFile(rel, description=desc)


def _model_texts(folder: RunFolder) -> list[Path]:
    found = set(folder.glob(MODEL_TEXT_PATTERNS))
    return [
        p
        for p in folder.files
        if p.as_posix() in folder.memory  # standard input, as a log file
        or (
            p in found
            and p.name.lower() not in MODEL_TEXT_SKIP_NAMES
            and not any(part.lower() in NOT_LOG_DIRS for part in p.parts[:-1])
        )
    ]


def _regular(path: Path) -> bool:
    """A regular file that may be opened (not standard input held in memory, a FIFO, a device ...)."""
    try:
        return file_problem(path) is None
    except OSError:
        return False


def _head(path: Path) -> bytes | None:
    """The first bytes of a text file (enough for the settings and the model searches); None when it cannot
    be read. Not for a file held in memory (standard input): its bytes are at hand (``_read_texts``)."""
    try:
        if file_problem(path) is not None:
            return None
        with open(path, "rb") as fh:
            return fh.read(SEARCH_BYTES)
    except OSError:
        return None


def _whole(path: Path, max_bytes: int) -> bytes | None:
    """The whole file when it is a regular file of at most ``max_bytes``; None otherwise (or when it cannot be
    read: the reader that opens it then says why). A file held in memory (standard input) is not read here."""
    try:
        if file_problem(path, max_bytes) is not None:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _npz_labels(path: Path) -> tuple[str, np.ndarray] | None:
    """The labels of an .npz that sample discovery passed over, opened as discovery opens one: the members' headers
    and the zip directory's sizes are read first (read.samples.open_npz)."""
    try:
        arrays, _problems = open_npz(path, path.name)
    except Exception:  # noqa: BLE001 - a truncated or foreign .npz (BadZipFile, KeyError...) only loses this hint
        return None
    return _labels_in(arrays)


def _labels_in(arrays: dict[str, ArraySource]) -> tuple[str, np.ndarray] | None:
    """(key, array) of the first of LABEL_KEYS in ``arrays``, loaded when it announces at most MAX_LABEL_BYTES."""
    key = next((k for k in LABEL_KEYS if k in arrays), None)
    if key is None or arrays[key].nbytes > MAX_LABEL_BYTES:
        return None
    try:
        return key, arrays[key].load()
    except Exception:  # noqa: BLE001 - a damaged member only loses this hint, as np.load would
        return None
