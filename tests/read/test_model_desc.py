"""Model-description readers on text and JSON written by the real libraries (built in the test)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import zipfile

import pytest

from tests.optional import importorskip

from advisor.read import model_desc as md
from advisor.read import model_text as mt


def _layers(desc):
    return [(la.layer_type, la.role, la.units, la.activation, la.dropout_rate) for la in desc.layers]


def test_torch_repr_nested_sequential():
    torch = pytest.importorskip("torch")
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 8, 3)
            self.bn = nn.BatchNorm2d(8)
            self.act = nn.ReLU()
            self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(288, 3), nn.Softmax(dim=1))

    text = "epoch 0 loss 1.2\n" + str(Net()) + "\nepoch 1 loss 1.0\n"
    [desc] = mt.parse_module_repr(text, "train.log")
    assert torch is not None
    assert desc.format == "torch_repr" and desc.architecture == "Net" and desc.line == 2
    assert _layers(desc) == [("Conv2d", "conv", 8, None, None), ("BatchNorm2d", "norm", None, None, None),
                             ("ReLU", "activation", None, "relu", None), ("Flatten", "reshape", None, None, None),
                             ("Dropout", "dropout", None, None, 0.25), ("Linear", "dense", 3, None, None),
                             ("Softmax", "activation", None, "softmax", None)]


@pytest.mark.slow
def test_mindspore_repr_with_fused_activation():
    pytest.importorskip("mindspore")
    from mindspore import nn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(64, 32, activation="relu")
            self.drop = nn.Dropout(p=0.2)
            self.fc2 = nn.Dense(32, 10)

        def construct(self, x):
            return self.fc2(self.drop(self.fc1(x)))

    [desc] = mt.parse_module_repr(str(Net()), "model.txt")
    assert desc.format == "mindspore_repr" and desc.framework == "mindspore"
    assert _layers(desc) == [("Dense", "dense", 32, "relu", None), ("Dropout", "dropout", None, None, 0.2),
                             ("Dense", "dense", 10, None, None)]


def test_mindspore_angle_bracket_repr():
    # the print(net) layout of MindSpore 1.x / 2.0 (Cell.__repr__ with '<' '>')
    text = ("Net<\n  (fc1): Dense<input_channels=64, output_channels=32, has_bias=True, activation=ReLU<>>\n"
            "  (fc2): Dense<input_channels=32, output_channels=10, has_bias=True>\n  (sm): Softmax<>\n  >\n")
    [desc] = mt.parse_module_repr(text)
    assert desc.framework == "mindspore"
    assert _layers(desc) == [("Dense", "dense", 32, "relu", None), ("Dense", "dense", 10, None, None),
                             ("Softmax", "activation", None, "softmax", None)]


@pytest.fixture(scope="module")
def keras_model():
    os.environ.setdefault("KERAS_BACKEND", "torch")
    keras = importorskip("keras")
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dropout(0.2), keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        model.summary()
        print(model.get_compile_config())
    return model, buf.getvalue()


@pytest.mark.slow
def test_keras_summary(keras_model):
    _, text = keras_model
    [desc] = mt.parse_keras_summary("Epoch 1/2\n" + text)
    assert desc.format == "keras_summary" and not desc.activations_known and desc.total_params == 2410
    assert _layers(desc) == [("Dense", "dense", 32, None, None), ("Dropout", "dropout", None, None, None),
                             ("Dense", "dense", 10, None, None)]


@pytest.mark.slow
def test_keras_compile_config_printed_in_a_log(keras_model):
    _, text = keras_model
    comp = mt.find_compile_settings(text, "train.log")
    assert comp is not None
    assert (comp.loss, comp.from_logits, comp.metrics, comp.optimizer) == (
        "SparseCategoricalCrossentropy", True, ["accuracy"], "Adam")
    assert comp.line == text.splitlines().index(next(x for x in text.splitlines() if "'loss'" in x)) + 1


@pytest.mark.slow
def test_keras_to_json_and_keras_file(keras_model, tmp_path):
    model, _ = keras_model
    desc = md.parse_keras_config(json.loads(model.to_json()), "model.json")
    assert _layers(desc) == [("InputLayer", "input", None, None, None), ("Dense", "dense", 32, "relu", None),
                             ("Dropout", "dropout", None, None, 0.2), ("Dense", "dense", 10, "softmax", None)]
    model.save(tmp_path / "m.keras")
    desc2 = md.parse_keras_config(md.read_keras_file(tmp_path / "m.keras"), "m.keras")
    assert _layers(desc2) == _layers(desc)
    assert desc2.compile is not None and desc2.compile.loss == "SparseCategoricalCrossentropy"
    assert desc2.compile.from_logits is True and desc2.compile.learning_rate == pytest.approx(1e-3)


def test_keras_file_too_large_member_is_refused(tmp_path):
    path = tmp_path / "big.keras"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.json", "{}" + " " * 2000)
    with pytest.raises(ValueError, match="limit"):
        md.read_keras_file(path, max_bytes=1000)


@pytest.mark.slow
def test_hf_config_from_transformers(tmp_path):
    transformers = importorskip("transformers", "PreTrainedModel", "TrainerCallback")
    cfg = transformers.BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37,
                                  num_labels=3, architectures=["BertForSequenceClassification"])
    cfg.save_pretrained(tmp_path)
    desc = md.parse_hf_config(json.loads((tmp_path / "config.json").read_text()), "config.json")
    assert (desc.architecture, desc.n_classes, desc.problem_type) == ("BertForSequenceClassification", 3, None)
    cfg.problem_type = "regression"
    cfg.save_pretrained(tmp_path)
    assert md.parse_hf_config(json.loads((tmp_path / "config.json").read_text())).problem_type == "regression"


def test_hparams_model_keys():
    desc = md.parse_hparams_model({"model": {"hidden_sizes": [64, 32], "activation": "ReLU",
                                             "output_units": 10, "output_activation": "softmax"}})
    assert _layers(desc) == [("Dense", "dense", 64, "relu", None), ("Dense", "dense", 32, "relu", None),
                             ("Dense", "dense", 10, "softmax", None)]
    assert desc.activations_known
    assert md.parse_hparams_model({"lr": 0.1, "batch_size": 32}) is None
    # hidden sizes alone: the output layer is not described (its units and activation unknown)
    desc = md.parse_hparams_model({"hidden_sizes": [64], "activation": "relu"})
    assert _layers(desc) == [("Dense", "dense", 64, "relu", None), ("Dense", "dense", None, None, None)]
    assert not desc.activations_known


def test_hidden_sizes_do_not_describe_the_output_layer():
    # examples/healthy's hparams: one hidden layer of 64 ReLU units; the 10-unit output layer is not written
    desc = md.parse_hparams_model({"hidden_sizes": [64], "activation": "relu", "loss": "cross_entropy"})
    assert _layers(desc) == [("Dense", "dense", 64, "relu", None), ("Dense", "dense", None, None, None)]
    assert not desc.activations_known


def test_loss_spelled_in_a_torch_log_and_metric_names():
    text = "criterion: CrossEntropyLoss()\nepoch 1 step 5 loss 0.9 lr 0.01\nepoch 1 val_loss 0.8 val_acc 0.7\n"
    comp = mt.find_compile_settings(text)
    assert comp is not None and comp.loss == "CrossEntropyLoss" and comp.line == 1
    assert mt.logged_metric_names(text) == ["val_acc"]
    # a numeric 'loss: 0.23' of a training line is a value, not a loss name
    assert mt.find_compile_settings("45/45 - 0s - accuracy: 0.9 - loss: 0.23\n") is None
