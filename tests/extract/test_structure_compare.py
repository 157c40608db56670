"""The run's model against the baseline's, layer by layer (issue 27 item 3), on descriptions the real tools print:
a PyTorch benchmark's ``print(model)`` and a Keras 3 port's ``model.to_json()``. A faithful port (Keras puts the
activation inside Dense, PyTorch prints it as its own layer) gives no difference; a dropped Dropout, a doubled
width and a GELU ported as ReLU are named with their layers."""

from __future__ import annotations

import os

import pytest

from advisor.extract import model as model_extractor
from advisor.extract.base import RunPair
from advisor.extract.structure_compare import compare_structures
from advisor.facts.model import ModelLayer
from advisor.inventory import RunFolder

torch = pytest.importorskip("torch")


def _torch_baseline(folder, dropout=True, act=None):
    nn = torch.nn
    act = act or nn.GELU
    layers = [nn.Linear(16, 64), act()] + ([nn.Dropout(0.1)] if dropout else []) + [nn.Linear(64, 64), act(),
                                                                                 nn.Linear(64, 4)]
    folder.mkdir()
    (folder / "model.txt").write_text(str(nn.Sequential(*layers)))


def _facts(run, base):
    out = model_extractor.extract(RunPair(RunFolder.scan(run), RunFolder.scan(base, side="baseline")))
    return [f for f in out.facts if f.kind == "structure_diff"]


def test_same_model_printed_by_torch_twice_has_no_difference(tmp_path):
    _torch_baseline(tmp_path / "run")
    _torch_baseline(tmp_path / "base")
    (diff,) = _facts(tmp_path / "run", tmp_path / "base")
    assert diff.differences == 0 and diff.run_layers == 6


def test_dropout_missing_and_activation_swapped_are_named(tmp_path):
    _torch_baseline(tmp_path / "run", dropout=False, act=torch.nn.ReLU)
    _torch_baseline(tmp_path / "base")
    (diff,) = _facts(tmp_path / "run", tmp_path / "base")
    assert (diff.missing_count, diff.extra_count, diff.activation_changes, diff.width_changes) == (1, 0, 2, 0)
    assert "the baseline's '2' (dropout 0.1)" in diff.text and "'1' is relu, the baseline's '1' gelu" in diff.text


def test_keras_port_of_the_torch_model(tmp_path):
    os.environ.setdefault("KERAS_BACKEND", "torch")
    if os.environ["KERAS_BACKEND"] != "torch":
        pytest.skip("Keras on the torch backend")
    keras = pytest.importorskip("keras")
    _torch_baseline(tmp_path / "base", act=torch.nn.ReLU)

    def port(folder, units, dropout):
        folder.mkdir()
        layers = [keras.Input((16,)), keras.layers.Dense(units, activation="relu")]
        layers += [keras.layers.Dropout(dropout)] if dropout else []
        layers += [keras.layers.Dense(64, activation="relu"), keras.layers.Dense(4)]
        (folder / "model.json").write_text(keras.Sequential(layers).to_json())

    port(tmp_path / "faithful", 64, 0.1)
    (diff,) = _facts(tmp_path / "faithful", tmp_path / "base")
    assert diff.differences == 0, diff.text  # the activation inside Dense counts as PyTorch's separate ReLU
    port(tmp_path / "changed", 128, None)
    (diff,) = _facts(tmp_path / "changed", tmp_path / "base")
    assert (diff.missing_count, diff.width_changes) == (1, 1), diff.text
    assert "has 128 units, the baseline's '0' 64" in diff.text


def test_alignment_keeps_repeated_roles_in_place():
    def layers(roles, side):
        return [ModelLayer(index=i, name=str(i), layer_type=r, role=r, side=side) for i, r in enumerate(roles)]

    run = layers(["dense", "activation", "dense", "activation", "dense"], "run")
    base = layers(["dense", "activation", "dropout", "dense", "activation", "dense"], "baseline")
    diff = compare_structures(run, base)
    assert (diff.missing_count, diff.extra_count) == (1, 0), diff.text  # difflib's greedy blocks gave 3 and 2
