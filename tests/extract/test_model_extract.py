"""Model/loss/task facts from run folders, and the model-structure rules end to end.

The Keras logs under fixtures/ are the stdout of benchmarks/mutations/keras_programs.py (Keras 3 on
the torch backend; model.summary(), the printed compile settings, fit(verbose=2)); the PyTorch
folders are written here by short real trainings.
"""

from __future__ import annotations

# confidences here are the rules' combined figure (raw_confidence), before the calibration map that
# benchmarks/calibrate.py fits on labelled runs (tested in tests/test_calibration.py)

import json
from pathlib import Path

import pytest

from tests.optional import importorskip

from advisor.diagnosis import diagnose
from advisor.extract import model as model_extract
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder

FIX = Path(__file__).parent / "fixtures"


def _facts(folder: Path) -> dict[str, list]:
    out = model_extract.extract(RunPair(run=RunFolder.scan(folder)))
    kinds: dict[str, list] = {}
    for f in out.facts:
        kinds.setdefault(f.kind, []).append(f)
    return kinds


def _causes(folder: Path) -> dict[str, float]:
    return {c.id: c.raw_confidence for c in diagnose(folder).causes}


def _warned(folder: Path) -> tuple[dict[str, float], set[str]]:
    """(causes with their confidence, ids of the warnings): a smell in a run that trains well is a warning."""
    report = diagnose(folder)
    return {c.id: c.confidence for c in report.causes}, {c.id for c in report.smells}


def test_keras_log_only_summary_and_compile_settings():
    facts = _facts(FIX / "keras_log_only_mse")
    [summary] = facts["model_summary"]
    assert (summary.description_format, summary.output_units, summary.output_activation, summary.total_params) == (
        "keras_summary", 10, None, 4810)
    [loss] = facts["loss_setup"]
    assert (loss.name, loss.family, loss.variant) == ("mse", "mse", "regression")
    [task] = facts["task"]
    assert (task.task_type, task.n_classes, task.is_from_metric, task.accuracy_metric) == (
        "multiclass", 10, True, "accuracy")


def test_keras_log_only_loss_fault_is_the_top_cause():
    # only train.log: model.summary() (no activations printed), get_compile_config() with loss=mse,
    # accuracy logged on a 10-unit output
    conf = _causes(FIX / "keras_log_only_mse")
    assert max(conf, key=conf.get) == "loss_function_error" and conf["loss_function_error"] >= 0.5, conf
    # categorical cross-entropy over Dense(1): the loss is ~0 from the first step
    conf = _causes(FIX / "keras_log_only_one_unit")
    assert max(conf, key=conf.get) == "loss_function_error" and conf["loss_function_error"] >= 0.8, conf


def test_keras_log_only_healthy_is_quiet():
    conf = _causes(FIX / "keras_log_only_healthy")
    assert not {c for c, p in conf.items() if p >= 0.5}, conf
    facts = _facts(FIX / "keras_log_only_healthy")
    assert facts["loss_setup"][0].variant == "sparse_categorical"


def _torch_run(folder: Path, model, loss_name: str, extra: str = "", steps: int = 60):
    torch = pytest.importorskip("torch")
    from sklearn.datasets import load_iris

    folder.mkdir()
    x, y = load_iris(return_X_y=True)
    x = torch.tensor((x - x.mean(0)) / x.std(0), dtype=torch.float32)
    y = torch.tensor(y)
    torch.manual_seed(0)
    crit = getattr(torch.nn, loss_name)()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    lines = [str(model), f"criterion: {crit}"]
    for step in range(1, steps + 1):
        out = model(x)
        loss = crit(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 5 == 0:
            acc = float((out.argmax(1) == y).float().mean())
            lines.append(f"step {step} loss {loss.item():.4f} acc {acc:.4f}")
    (folder / "train.log").write_text("\n".join(lines) + "\n")
    (folder / "hparams.yaml").write_text(f"framework: pytorch\noptimizer: adam\nlr: 0.01\nbatch_size: 150\n{extra}")


@pytest.mark.slow
def test_torch_softmax_into_cross_entropy(tmp_path):
    torch = pytest.importorskip("torch")
    from torch import nn

    _torch_run(tmp_path / "sm", nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3), nn.Softmax(dim=1)),
               "CrossEntropyLoss")
    facts = _facts(tmp_path / "sm")
    [summary] = facts["model_summary"]
    assert (summary.framework, summary.output_units, summary.output_activation) == ("pytorch", 3, "softmax")
    assert facts["loss_setup"][0].expects == "logits"
    conf = _causes(tmp_path / "sm")
    assert max(conf, key=conf.get) == "loss_function_error", conf
    assert torch is not None


@pytest.mark.slow
def test_torch_logits_into_cross_entropy_is_quiet(tmp_path):
    pytest.importorskip("torch")
    from torch import nn

    _torch_run(tmp_path / "ok", nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)), "CrossEntropyLoss",
               extra="num_classes: 3\n", steps=150)
    facts = _facts(tmp_path / "ok")
    [task] = facts["task"]
    assert (task.task_type, task.n_classes, task.decided_from) == ("multiclass", 3, "hparams.yaml: num_classes=3")
    assert facts["model_summary"][0].output_activation == "linear"
    conf = _causes(tmp_path / "ok")
    assert not {c for c, p in conf.items() if p >= 0.5}, conf


@pytest.mark.slow
def test_torch_units_differ_from_num_classes(tmp_path):
    pytest.importorskip("torch")
    from torch import nn

    _torch_run(tmp_path / "units", nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 5)), "CrossEntropyLoss",
               extra="num_classes: 3\n")
    # the run trains well (the two extra units are never a target): the mismatch is a warning, not a cause
    conf, warned = _warned(tmp_path / "units")
    assert "loss_function_error" in warned and not {c for c, p in conf.items() if p >= 0.5}, (conf, warned)


@pytest.mark.slow
def test_units_differ_from_the_class_count_of_the_named_data_set(tmp_path):
    pytest.importorskip("torch")
    from torch import nn

    # no num_classes: the config names the data set (iris, 3 classes as scikit-learn documents it)
    _torch_run(tmp_path / "named", nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 5)), "CrossEntropyLoss",
               extra="dataset: iris\n")
    [task] = _facts(tmp_path / "named")["task"]
    assert (task.n_classes, task.decided_from) == (3, "hparams.yaml: dataset=iris (a data set of 3 classes)")
    assert not task.is_n_from_output
    conf, warned = _warned(tmp_path / "named")
    assert "loss_function_error" in warned and not {c for c, p in conf.items() if p >= 0.5}, (conf, warned)
    # a name that is not the data set's own says nothing: the count comes from the output layer again
    _torch_run(tmp_path / "subset", nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 5)), "CrossEntropyLoss",
               extra="dataset: iris-subset\n")
    [task] = _facts(tmp_path / "subset")["task"]
    assert task.n_classes == 5 and task.is_n_from_output


@pytest.mark.slow
def test_hf_config_and_keras_file(tmp_path):
    transformers = importorskip("transformers", "PreTrainedModel", "TrainerCallback")
    cfg = transformers.BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37,
                                  num_labels=1, architectures=["BertForSequenceClassification"])
    cfg.save_pretrained(tmp_path)
    (tmp_path / "log.txt").write_text("{'loss': 0.52, 'accuracy': 0.61, 'epoch': 1.0}\n")
    [task] = _facts(tmp_path)["task"]
    assert task.task_type == "regression" and task.decided_from.startswith("config.json")
    assert task.accuracy_metric == "accuracy"


def test_broken_keras_file_is_recorded_not_raised(tmp_path):
    (tmp_path / "model.keras").write_bytes(b"PK\x03\x04 not really a zip")
    out = model_extract.extract(RunPair(run=RunFolder.scan(tmp_path)))
    assert [(r.path, r.status) for r in out.inputs] == [("model.keras", "unreadable")]
    assert not out.facts


def test_hparams_output_activation_fills_a_summary(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"framework": "pytorch", "loss": "CrossEntropyLoss",
                                                      "output_activation": "softmax"}))
    facts = _facts(tmp_path)
    assert facts["model_summary"][0].output_activation == "softmax"
    assert facts["loss_setup"][0].variant == "torch_cross_entropy"


def test_label_columns_from_a_data_sample(tmp_path):
    import numpy as np

    (tmp_path / "data").mkdir()
    y = np.eye(4)[np.arange(200) % 4]
    np.savez(tmp_path / "data" / "train.npz", x=np.zeros((200, 3), np.float32), y=y)
    (tmp_path / "hparams.yaml").write_text("framework: keras\nloss: sparse_categorical_crossentropy\n")
    [task] = _facts(tmp_path)["task"]
    assert (task.task_type, task.n_classes, task.label_columns, task.labels_file) == (
        "multiclass", 4, 4, "data/train.npz")
    conf = _causes(tmp_path)
    assert conf.get("loss_function_error", 0) >= 0.7, conf
    # the same labels as class ids: the sparse loss fits them
    np.savez(tmp_path / "data" / "train.npz", x=np.zeros((200, 3), np.float32), y=np.arange(200) % 4)
    assert _facts(tmp_path)["task"][0].label_columns == 1
    assert _causes(tmp_path).get("loss_function_error", 0) < 0.5


def test_continuous_labels_make_a_regression_task(tmp_path):
    import numpy as np

    (tmp_path / "data").mkdir()
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "data" / "train.npz", x=rng.normal(size=(100, 3)), y=rng.normal(size=100))
    (tmp_path / "model.txt").write_text("Sequential(\n  (0): Linear(in_features=3, out_features=1, bias=True)\n"
                                        "  (1): Sigmoid()\n)\n")
    (tmp_path / "hparams.yaml").write_text("loss: MSELoss\nmetrics: [accuracy]\n")
    [task] = _facts(tmp_path)["task"]
    assert (task.task_type, task.decided_from, task.has_conflict) == ("regression", "data/train.npz: labels", True)
    conf = _causes(tmp_path)
    assert conf.get("loss_function_error", 0) >= 0.6 and conf.get("metric_misuse", 0) >= 0.5, conf
