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


def _bn_mlp(folder):
    """A PyTorch MLP with BatchNorm and Dropout, as print(model) shows it."""
    nn = torch.nn
    folder.mkdir()
    net = nn.Sequential(nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, 64),
                        nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 10))
    (folder / "model.txt").write_text(str(net))


@pytest.mark.parametrize("activation", ["activation: relu\n  ", ""])
def test_a_width_list_beside_a_model_print_compares_the_widths_only(tmp_path, activation):
    """A port's config lists its layer widths (``hidden_sizes: [128, 64]``), the benchmark's print shows the whole
    module tree: the print's BatchNorms, Dropout and (when the config states none) activations are nothing the
    list could show, so they are not missing; a width that differs still is."""
    _bn_mlp(tmp_path / "base")
    run = tmp_path / "run"
    run.mkdir()
    (run / "hparams.yaml").write_text(f"model:\n  hidden_sizes: [128, 64]\n  {activation}output_units: 10\n")
    (diff,) = _facts(run, tmp_path / "base")
    assert diff.differences == 0, diff.text
    (run / "hparams.yaml").write_text(f"model:\n  hidden_sizes: [128, 32]\n  {activation}output_units: 10\n")
    (diff,) = _facts(run, tmp_path / "base")
    assert (diff.differences, diff.width_changes, diff.missing_count) == (1, 1, 0), diff.text
    assert "has 32 units, the baseline's '4' 64" in diff.text


def test_a_mindspore_print_beside_the_torch_print_of_the_same_cnn(tmp_path):
    """MindSpore 2.10's print(net) (Conv2d(input_channels=..., BatchNorm2d(num_features=..., gamma=Parameter
    (name=bn1.gamma, ...)): a layer line holds nested parentheses) against PyTorch's print of the same CNN: the
    BatchNorms pair up, nothing is missing."""
    ms_nn = pytest.importorskip("mindspore.nn")
    nn = torch.nn

    class MsNet(ms_nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = ms_nn.Conv2d(1, 16, 3, pad_mode="pad", padding=1)
            self.bn1 = ms_nn.BatchNorm2d(16)
            self.relu = ms_nn.ReLU()
            self.pool = ms_nn.MaxPool2d(2, 2)
            self.conv2 = ms_nn.Conv2d(16, 32, 3, pad_mode="pad", padding=1)
            self.bn2 = ms_nn.BatchNorm2d(32)
            self.flatten = ms_nn.Flatten()
            self.fc = ms_nn.Dense(128, 10)

    class TorchNet(nn.Module):  # the benchmark the port follows: the same cells, the same reuse of relu and pool
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(16)
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(16, 32, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(32)
            self.flatten = nn.Flatten()
            self.fc = nn.Linear(128, 10)

    torch_net = TorchNet()
    for side, text in (("run", str(MsNet())), ("base", str(torch_net))):
        (tmp_path / side).mkdir()
        (tmp_path / side / "model.txt").write_text(text)
    (diff,) = _facts(tmp_path / "run", tmp_path / "base")
    assert diff.missing_count == 0 and "bn" not in diff.text, diff.text
