"""Regenerate the MindSpore graph IR fixtures (real MindSpore 2.10, CPU, graph mode).

    python tests/read/make/mindspore_ir.py OUTDIR

writes OUTDIR/mindspore_ir_cnn/graphs/ and OUTDIR/mindspore_ir_port/graphs/: the ``*validate*.ir`` file that
``set_context(save_graphs=True, save_graphs_path=...)`` writes for one training step of a small CNN in
training mode (the other ~100 IR files of the compile pipeline are deleted: they describe the same graph), and
``model.txt``: ``print(net)`` of the same net. The port drops the BatchNorm and widens the first Dense from 64
to 128.
"""

import os
import shutil
import subprocess
import sys

CHILD = r'''
import sys
import numpy as np
import mindspore as ms
import mindspore.nn as nn
norm, width = sys.argv[1] == "1", int(sys.argv[2])
ms.set_context(mode=ms.GRAPH_MODE, save_graphs=True, save_graphs_path="./ir")
ms.set_seed(0)
layers = [nn.Conv2d(1, 8, 3, pad_mode="valid"), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(8, 16, 3, pad_mode="valid")]
if norm:
    layers.append(nn.BatchNorm2d(16))
layers += [nn.ReLU(), nn.Flatten(), nn.Dropout(p=0.25), nn.Dense(144, width, activation="gelu"), nn.LayerNorm((width,)), nn.Dense(width, 10)]
net = nn.SequentialCell(layers)
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.01, 0.9))
step.set_train()
x = ms.Tensor(np.random.default_rng(0).standard_normal((4, 1, 12, 12)).astype(np.float32))
y = ms.Tensor(np.array([0, 1, 2, 3], np.int32))
step(x, y)
with open("model.txt", "w") as f:
    f.write(f"{net}\n")
'''


def main(out: str) -> None:
    for name, norm, width in (("mindspore_ir_cnn", "1", "64"), ("mindspore_ir_port", "0", "128")):
        run = os.path.join(out, name)
        shutil.rmtree(run, ignore_errors=True)
        os.makedirs(run)
        subprocess.run([sys.executable, "-c", CHILD, norm, width], check=True, cwd=run, capture_output=True)
        kept = sorted(f for f in os.listdir(os.path.join(run, "ir")) if "validate" in f and f.endswith(".ir"))
        os.makedirs(os.path.join(run, "graphs"))
        shutil.copy(os.path.join(run, "ir", kept[-1]), os.path.join(run, "graphs", kept[-1]))
        os.chmod(os.path.join(run, "graphs", kept[-1]), 0o644)
        shutil.rmtree(os.path.join(run, "ir"))


if __name__ == "__main__":
    main(sys.argv[1])
