"""Writes this folder's fixtures with the real tools (torch 2.13 CPU; TensorFlow 2.21 CPU with Keras 3 on its
TensorFlow backend): a PyTorch benchmark and its Keras re-implementation, the same weights, one input batch.

- ``torch/``: the PyTorch benchmark's dump of step 0 (advisor's capture hook): modules fc1 (Linear 8->16),
  act (exact GELU), norm (LayerNorm, eps 1e-5), fc2 (Linear 16->4);
- ``tf/``: the Keras model (Dense, Activation("gelu"), LayerNormalization(epsilon=1e-5), Dense, named alike)
  run under ``tf.debugging.experimental.enable_dump_debug_info(..., tensor_debug_mode="FULL_TENSOR")``
  (tfdbg2): matches;
- ``tf_eps/``: the same with Keras' default LayerNormalization epsilon, 1e-3 (a framework default a port
  keeps by mistake);
- ``tf_gelu/``: the same with the tanh approximation of GELU.

Of each tfdbg2 dump only the files advisor reads are kept (``.metadata``, ``.graphs``, ``.execution``,
``.graph_execution_traces``); ``.source_files`` (the Python sources, megabytes) and ``.stack_frames`` are
deleted.

    python tests/compare/data/tf_port/generate.py
"""

from __future__ import annotations

import os

os.environ["KERAS_BACKEND"] = "tensorflow"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from advisor.capture import attach  # noqa: E402

HERE = Path(__file__).resolve().parent


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.act, self.norm, self.fc2 = nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.norm(self.act(self.fc1(x))))


def keras_net(torch_net: Net, eps: float | None, approximate: bool) -> keras.Model:
    gelu = (lambda x: keras.activations.gelu(x, approximate=True)) if approximate else "gelu"
    norm = keras.layers.LayerNormalization(name="norm", **({} if eps is None else {"epsilon": eps}))
    model = keras.Sequential(
        [keras.Input((8,)), keras.layers.Dense(16, name="fc1"), keras.layers.Activation(gelu, name="act"), norm,
         keras.layers.Dense(4, name="fc2")]
    )
    sd = {k: v.detach().numpy() for k, v in torch_net.state_dict().items()}
    model.get_layer("fc1").set_weights([sd["fc1.weight"].T, sd["fc1.bias"]])
    model.get_layer("norm").set_weights([sd["norm.weight"], sd["norm.bias"]])
    model.get_layer("fc2").set_weights([sd["fc2.weight"].T, sd["fc2.bias"]])
    return model


def tfdbg_dump(model: keras.Model, x: np.ndarray, out: Path) -> None:
    tf.debugging.experimental.enable_dump_debug_info(str(out), tensor_debug_mode="FULL_TENSOR", circular_buffer_size=-1)
    model.predict(x, verbose=0)
    tf.debugging.experimental.disable_dump_debug_info()
    for p in out.iterdir():
        if p.suffix in (".source_files", ".stack_frames"):
            p.unlink()


def main() -> None:
    torch.manual_seed(0)
    net, x = Net(), torch.randn(4, 8)
    for d in ("torch", "tf", "tf_eps", "tf_gelu", "_capture"):
        shutil.rmtree(HERE / d, ignore_errors=True)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    cap = attach(net, opt, HERE / "_capture", dump_steps=[0])
    net(x).sum().backward()
    opt.step()
    cap.close()
    shutil.move(HERE / "_capture" / "dump" / "step_000000", HERE / "torch")
    shutil.rmtree(HERE / "_capture")
    torch.manual_seed(0)
    fresh = Net()  # the weights before the step the capture took
    for name, eps, approx in (("tf", 1e-5, False), ("tf_eps", None, False), ("tf_gelu", 1e-5, True)):
        tfdbg_dump(keras_net(fresh, eps, approx), x.numpy(), HERE / name)


if __name__ == "__main__":
    main()
