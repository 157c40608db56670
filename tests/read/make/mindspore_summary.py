"""Regenerate the MindSpore SummaryCollector run (real MindSpore 2.10, CPU).

    python tests/read/make/mindspore_summary.py OUTDIR

writes OUTDIR/mindspore_summary/ and OUTDIR/mindspore_summary_lr_high/, each with summary/ as SummaryCollector wrote it (the ``*.summary.*`` event file with the
loss scalar and the weights' histograms, the ``*_lineage`` file with the hyper-parameters SummaryCollector
recorded) and train.log (stdout+stderr, LossMonitor's lines). The loss-landscape folder (ckpt_dir/, checkpoints and
a metadata file of absolute paths) is deleted. A small dense net on synthetic 4-class data, Momentum 0.9, 3 epochs:
at lr 0.5 it trains; at lr 50 the loss turns NaN.
"""
import os
import shutil
import subprocess
import sys

CHILD = r'''
import numpy as np
import mindspore as ms
from mindspore import nn, dataset as ds
from mindspore.train import Model, LossMonitor, SummaryCollector

ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
ms.set_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 16)).astype(np.float32)
y = (x[:, :4].argmax(1)).astype(np.int32)
# rows as ndarrays (0-d for the label): MindSpore 2.10's dataset conversion calls np.array(row, copy=False),
# which NumPy 2 refuses for a NumPy scalar
data = ds.GeneratorDataset([(x[i], np.array(y[i])) for i in range(len(x))], ["x", "y"], shuffle=False).batch(32)
net = nn.SequentialCell(nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4))
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
opt = nn.Momentum(net.trainable_params(), learning_rate=%(lr)r, momentum=0.9)
model = Model(net, loss_fn=loss, optimizer=opt, metrics={"acc"})
collector = SummaryCollector("summary", collect_freq=1, keep_default_action=True,
                             collect_specified_data={"collect_graph": False, "collect_dataset_graph": False})
model.train(3, data, callbacks=[LossMonitor(1), collector], dataset_sink_mode=False)
'''


RUNS = {"mindspore_summary": 0.5, "mindspore_summary_lr_high": 50.0}


def main() -> None:
    for name, lr in RUNS.items():
        out = os.path.join(os.path.abspath(sys.argv[1]), name)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        script = os.path.join(out, "_train.py")
        with open(script, "w") as f:
            f.write(CHILD % {"lr": lr})
        with open(os.path.join(out, "train.log"), "w") as log:
            subprocess.run([sys.executable, script], cwd=out, stdout=log, stderr=subprocess.STDOUT, check=False,
                           env=dict(os.environ, GLOG_v="3", PYTHONWARNINGS="ignore"))
        os.remove(script)
        shutil.rmtree(os.path.join(out, "summary", "ckpt_dir"), ignore_errors=True)


if __name__ == "__main__":
    main()
