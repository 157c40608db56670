"""What one side's files say of its model, read once for the model extractor (``RunView.model``).

Model descriptions (Keras configs and summaries, ``print(model)`` of PyTorch
and MindSpore, a Hugging Face ``config.json``, a model section of a settings
file), compile settings, the task, class count, data set, loss and metrics a
settings file names, and the shape of the training labels: each parsed with
``advisor.read.model_desc`` from what ``read_run`` read, and collected in a
``Found``. What the reading records (a model file used, a .keras file that
cannot be read) goes into the ``Extraction`` it is given.
"""

from __future__ import annotations

from advisor.extract.code.settings import code_settings

from advisor.knowledge.metrics import ACCURACY_NAME, REGRESSION_NAME
from advisor.knowledge.setting_keys import DATASET_KEYS, METRIC_KEYS, TASK_KEYS

from typing import Any

from advisor.extract.extraction import Extraction
from advisor.inventory import InputRecord
from advisor.knowledge.datasets import dataset_classes
from advisor.knowledge.settings import CLASS_COUNT_KEYS
from advisor.read import model_desc as md
from advisor.read import model_text as mt
from advisor.read.hparams import HPARAM_FILE_NAMES, flatten
from advisor.read.run import MappingFile, ModelJson, RunRead
from advisor.read.samples import SampleReadError

MAX_LABEL_BYTES = 50_000_000
#: keys naming the data set (its class count is looked up in advisor.knowledge.datasets)
#: metric names of classification (accuracy-like) and of regression


class Found:
    def __init__(self) -> None:
        self.descriptions: list[md.ModelDescription] = []
        self.compiles: list[md.CompileSettings] = []
        self.hf: md.ModelDescription | None = None
        self.metrics: dict[str, str] = {}  # metric name -> where
        self.settings: dict[str, tuple[Any, str]] = {}  # framework, num_classes, task, loss -> (value, 'file: key')
        self.used: list[str] = []
        self.labels: tuple[str, int, str, int | None] | None = None  # file, columns, task, classes


def _setting(found: Found, name: str, value: Any, where: str) -> None:
    if value is not None and name not in found.settings:
        found.settings[name] = (value, where)


def _read_json_model(folder: RunRead, got: ModelJson, found: Found, out: Extraction) -> bool:
    """A Keras model config or a Hugging Face config in a .json / .keras file; True when one was read."""
    rel, obj = got.rel, got.obj
    if got.problem is not None:
        if rel.suffix.lower() == ".keras":
            out.inputs.append(
                InputRecord(
                    path=rel.as_posix(),
                    kind="model",
                    status="unreadable",
                    why=f"not a readable .keras file: {got.problem}",
                    side=folder.side,
                )
            )
        return False
    desc = md.parse_keras_config(obj, rel.as_posix())
    if desc is not None:
        found.descriptions.append(desc)
        if desc.compile is not None and desc.compile.loss:
            found.compiles.append(desc.compile)
        return True
    hf = md.parse_hf_config(obj, rel.as_posix())
    if hf is not None and found.hf is None:
        found.hf = hf
        return True
    return False


def _read_hparams(file: MappingFile, found: Found) -> bool:
    rel, data = file.rel, file.data
    if data is None:
        return False  # the hyper-parameter extractor reports unreadable files
    used = False
    desc = md.parse_hparams_model(data, rel.as_posix())
    if desc is not None:
        found.descriptions.append(desc)
        used = True
    flat = flatten(data)
    where = rel.as_posix()
    for key, value in flat.items():
        last = str(key).rsplit(".", 1)[-1].lower()
        if last == "framework" and isinstance(value, str):
            _setting(found, "framework", value.strip().lower(), f"{where}: {key}")
        elif last in CLASS_COUNT_KEYS and isinstance(value, int) and not isinstance(value, bool) and value > 0:
            _setting(found, "num_classes", value, f"{where}: {key}={value}")
            used = True
        elif last in DATASET_KEYS and isinstance(value, str) and (known := dataset_classes(value)) is not None:
            _setting(found, "dataset_classes", known[0], f"{where}: {key}={value} (a data set of {known[0]} classes)")
            used = True
        elif last in TASK_KEYS and isinstance(value, str):
            _setting(found, "task", value.strip().lower(), f"{where}: {key}={value}")
            used = True
        elif (
            last in ("loss", "loss_fn", "criterion", "loss_function", "loss_type", "loss_name")
            and isinstance(value, str)
            or (
                last in ("type", "name", "class_name", "_target_")
                and ".".join(str(key).lower().split(".")[:-1]) in ("loss", "criterion", "loss_fn")
                and isinstance(value, str)
            )
        ):
            _setting(found, "loss", value, f"{where}: {key}")
            used = True
        elif last == "from_logits" and isinstance(value, bool):
            _setting(found, "from_logits", value, f"{where}: {key}")
        elif last in METRIC_KEYS:
            for m in value if isinstance(value, list) else [value]:
                if isinstance(m, str):
                    found.metrics.setdefault(m.strip().lower(), f"{where}: {key}")
    return used


def _read_code(folder: RunRead, found: Found) -> None:
    """The loss, its from_logits, the class count and the metrics a training script states (after every file)."""
    for shown, stated in code_settings(folder.scripts):
        for name in ("framework", "loss", "from_logits", "num_classes"):
            value = stated.values.get(name)
            if name == "framework" and isinstance(value, str):
                value = value.lower()
            if value is not None:
                _setting(found, name, value, f"{shown}: line {stated.lines.get(name)}")
        metrics = stated.values.get("metrics")
        for m in metrics if isinstance(metrics, list) else []:
            if isinstance(m, str):
                found.metrics.setdefault(m.strip().lower(), f"{shown}: line {stated.lines.get('metrics')}")


def _read_labels(folder: RunRead, found: Found) -> None:
    """The training labels of a data sample: how many columns, and whether they are classes or values."""
    import numpy as np

    try:
        sets = folder.samples().sets
    except (SampleReadError, OSError, ValueError):  # the data extractor reports unreadable samples
        return
    for sample in sorted(sets, key=lambda st: st.split != "train"):
        lab = sample.labels
        if lab is None or not lab.shape or lab.nbytes > MAX_LABEL_BYTES or lab.dtype.kind not in "biuf":
            continue
        try:
            y = np.asarray(lab.load(), dtype=np.float64)
        except (SampleReadError, OSError, ValueError):
            continue
        cols = 1 if y.ndim == 1 else int(np.prod(y.shape[1:]))
        finite = y[np.isfinite(y)]
        if finite.size == 0:
            continue
        whole = bool(np.all(finite == np.round(finite)))
        if cols > 1:
            binary = bool(np.all((finite == 0) | (finite == 1)))
            if binary:
                rows = y.reshape(len(y), -1)
                task = "multiclass" if np.all(rows.sum(1) == 1) else "multilabel"
                found.labels = (lab.file, cols, task, cols)
            return
        n = len(np.unique(finite)) if whole else None
        if whole and n is not None and n <= max(2, min(1000, finite.size // 5)):
            found.labels = (lab.file, 1, "binary" if n == 2 else "multiclass", n)
        elif not whole:
            found.labels = (lab.file, 1, "regression", None)
        return


def read_folder(folder: RunRead, out: Extraction) -> Found:
    found = Found()
    _read_labels(folder, found)
    for got in folder.model_jsons:
        rel = got.rel
        if _read_json_model(folder, got, found, out):
            found.used.append(rel.as_posix())
            if rel.name.lower() not in HPARAM_FILE_NAMES:  # config.json & co. are listed by the hparams reader
                fmt = found.hf.format if found.hf is not None and found.hf.path == rel.as_posix() else "keras_config"
                out.inputs.append(
                    InputRecord(path=rel.as_posix(), kind="model", side=folder.side, why=f"model description ({fmt})")
                )
    for file in folder.hparams:
        if _read_hparams(file, found) and file.rel.as_posix() not in found.used:
            found.used.append(file.rel.as_posix())
    _read_code(folder, found)
    for head in folder.model_texts:
        text = head.text
        where = head.rel.as_posix()
        descs = mt.parse_module_repr(text, where) + mt.parse_keras_summary(text, where)
        comp = mt.find_compile_settings(text, where)
        names = mt.logged_metric_names(text)
        for n in names:
            found.metrics.setdefault(n, where)
        if descs or comp:
            found.descriptions.extend(descs)
            if comp is not None:
                found.compiles.append(comp)
            found.used.append(where)
            if descs and head.rel.name.lower().startswith(("model.", "model_summary")):  # a file that is one
                out.inputs.append(
                    InputRecord(
                        path=where, kind="model", side=folder.side, why=f"model description ({descs[0].format})"
                    )
                )
    for graph in folder.model_graphs:
        where = graph.rel.as_posix()
        out.inputs += [
            InputRecord(
                path=other.as_posix(),
                kind="model",
                status="ignored",
                why=f"another pass of the graph dump whose {where} was read",
                side=folder.side,
            )
            for other in graph.siblings
        ]
        if graph.description is None:
            out.inputs.append(
                InputRecord(
                    path=where, kind="model", status="unreadable", why=f"{graph.problem}; not read", side=folder.side
                )
            )
            continue
        found.descriptions.append(graph.description)
        found.used.append(where)
        out.inputs.append(
            InputRecord(
                path=where, kind="model", side=folder.side, why=f"model description ({graph.description.format})"
            )
        )
    for head in folder.csv_headers:
        for col in head.text.strip().split(","):
            if ACCURACY_NAME.search(col) or REGRESSION_NAME.search(col):
                found.metrics.setdefault(col.strip().lower(), head.rel.as_posix())
    return found
