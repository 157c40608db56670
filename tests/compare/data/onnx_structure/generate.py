"""Writes this folder's fixtures with the real tools (torch CPU, its ONNX exporter):

- ``benchmark/model.onnx``: a small CNN (Conv, ReLU, MaxPool, Conv, BatchNorm, ReLU, Flatten, Dropout, Linear,
  GELU, LayerNorm, Linear) exported by ``torch.onnx.export`` (opset 14, eval mode: the exporter drops Dropout,
  splits LayerNorm into nine nodes and GELU into five);
- ``benchmark_train/model.onnx``: the same exported in training mode (Dropout kept, with its ratio);
- ``same/model.txt``: ``print(model)`` of the benchmark's PyTorch model;
- ``port/model.txt``: ``print(model)`` of a port that lost the BatchNorm and widened the first Linear from
  64 to 128 units.

    python tests/compare/data/onnx_structure/generate.py
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn as nn

HERE = Path(__file__).resolve().parent


def cnn(norm: bool = True, width: int = 64) -> nn.Module:
    torch.manual_seed(0)
    layers: list[nn.Module] = [nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3)]
    if norm:
        layers.append(nn.BatchNorm2d(16))
    layers += [nn.ReLU(), nn.Flatten(), nn.Dropout(0.25), nn.Linear(16 * 3 * 3, width), nn.GELU()]
    layers += [nn.LayerNorm(width), nn.Linear(width, 10)]
    return nn.Sequential(*layers)


def main() -> None:
    x = torch.randn(2, 1, 12, 12)
    for folder, mode in (("benchmark", torch.onnx.TrainingMode.EVAL), ("benchmark_train", torch.onnx.TrainingMode.TRAINING)):
        (HERE / folder).mkdir(exist_ok=True)
        m = cnn()
        m.train(mode == torch.onnx.TrainingMode.TRAINING)
        torch.onnx.export(
            m, (x,), HERE / folder / "model.onnx", dynamo=False, opset_version=14, input_names=["x"], training=mode,
            do_constant_folding=mode == torch.onnx.TrainingMode.EVAL,
        )
    for folder, model in (("same", cnn()), ("port", cnn(norm=False, width=128))):
        (HERE / folder).mkdir(exist_ok=True)
        (HERE / folder / "model.txt").write_text(f"{model}\n")


if __name__ == "__main__":
    main()
