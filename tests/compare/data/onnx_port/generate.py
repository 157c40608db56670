"""Writes this folder's fixtures with the real tools (torch 2.13 CPU, onnx, onnxruntime):

- ``model.onnx``: a 4-module PyTorch net (Linear, GELU, LayerNorm, Linear) exported with opset 14, where the
  exporter splits LayerNorm into ReduceMean/Sub/Pow/.../Add(eps)/Sqrt/Div/Mul/Add and GELU into Div/Erf/...;
- ``torch/``: the PyTorch benchmark's dump of step 0 (advisor's capture hook);
- ``onnx/``: ``advisor.capture.onnx_dump.dump_onnx`` of ``model.onnx`` on the same input;
- ``onnx_eps/``: the same with the split LayerNorm's epsilon constant changed from 1e-5 to 0.5 (an
  operator error a converter can make).

    python tests/compare/data/onnx_port/generate.py
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper

from advisor.capture import attach
from advisor.capture.onnx_dump import dump_onnx

HERE = Path(__file__).resolve().parent


def net() -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4))
    return m, torch.randn(2, 8)


def spoil_layernorm_eps(model: onnx.ModelProto, value: float) -> None:
    """Set the epsilon of a split LayerNorm (the constant added to the variance in module 2) to ``value``."""
    made_by = {o: n for n in model.graph.node for o in n.output}
    add = next(n for n in model.graph.node if n.name == "/2/Add")
    for name in add.input:
        const = made_by.get(name)
        if const is not None and const.op_type == "Constant":
            old = numpy_helper.to_array(const.attribute[0].t)
            const.attribute[0].t.CopyFrom(numpy_helper.from_array(np.array(value, dtype=old.dtype)))
            return
    raise RuntimeError("no epsilon constant found")


def main() -> None:
    m, x = net()
    torch.onnx.export(m, (x,), HERE / "model.onnx", dynamo=False, opset_version=14, input_names=["x"])
    for d in ("torch", "onnx", "onnx_eps", "_capture"):
        shutil.rmtree(HERE / d, ignore_errors=True)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    cap = attach(m, opt, HERE / "_capture", dump_steps=[0])
    m(x).sum().backward()
    opt.step()
    cap.close()
    shutil.move(HERE / "_capture" / "dump" / "step_000000", HERE / "torch")
    shutil.rmtree(HERE / "_capture")
    dump_onnx(HERE / "model.onnx", {"x": x.numpy()}, HERE / "onnx")
    bad = onnx.load(HERE / "model.onnx")
    spoil_layernorm_eps(bad, 0.5)
    onnx.save(bad, HERE / "_bad.onnx")
    dump_onnx(HERE / "_bad.onnx", {"x": x.numpy()}, HERE / "onnx_eps")
    (HERE / "_bad.onnx").unlink()


if __name__ == "__main__":
    main()
