"""MindSpore 2.x training programs (CPU), written the way a MindSpore user writes them.

A model-zoo style ``<net>_config.yaml`` holds the hyper-parameters (``lr``, ``epoch_size``,
``batch_size``, ``momentum``, ``loss_scale`` ...); the script builds an ``nn.Cell`` network, a
``nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')`` loss and an ``nn.Momentum`` /
``nn.Adam`` optimizer, trains with ``mindspore.train.Model(...).train(epoch_size, dataset,
callbacks=[LossMonitor(...), TimeMonitor()])`` on a ``NumpySlicesDataset`` and prints the
accuracy of ``model.eval`` as the model zoo's eval scripts do. The run folder keeps what such a
user has: ``train.log`` (``python train.py > train.log 2>&1``: the printed network, MindSpore's
own warnings, LossMonitor and TimeMonitor lines, the eval print) and the config yaml.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

from common import load


@contextlib.contextmanager
def _shell_redirect(path: Path) -> Iterator[None]:
    """stdout and stderr of the process (Python and C++ alike) into ``path``: ``> train.log 2>&1``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def _config(s: dict) -> dict:
    """The model zoo's config layout (builtin options first, then the training hyper-parameters)."""
    cfg = {
        "enable_modelarts": False,
        "data_url": "",
        "train_url": "",
        "checkpoint_url": "",
        "data_path": f"/cache/data/{s['dataset']}",
        "output_path": "/cache/train",
        "device_target": "CPU",
        "dataset_name": s["dataset"],
        "num_classes": s["n_classes"],
        "hidden_sizes": s["hidden"],
        "lr": s["lr"],
        "momentum": s.get("momentum", 0.9),
        "weight_decay": 0.0,
        "epoch_size": s["epochs"],
        "batch_size": s["batch_size"],
        "buffer_size": 1000,
        "loss_scale": s.get("loss_scale", 1.0),
        "amp_level": s.get("amp_level", "O0"),
        "optimizer": "Momentum" if s["optimizer"] == "momentum" else "Adam",
        "sparse": s.get("sparse", True),
        "save_checkpoint": False,
        "keep_checkpoint_max": 10,
        "ckpt_path": "./ckpt",
        "seed": s.get("seed", 1),
    }
    if s["optimizer"] != "momentum":
        del cfg["momentum"]
    return cfg


#: the model zoo's second and third documents: a help text for each option, then the allowed choices
_HELP = {
    "enable_modelarts": "Whether training on modelarts, default: False",
    "data_url": "Dataset url for obs",
    "train_url": "Training output url for obs",
    "data_path": "Dataset path for local",
    "output_path": "Training output path for local",
    "device_target": "Target device type",
    "lr": "Base learning rate",
    "epoch_size": "Number of training epochs",
    "batch_size": "Batch size for training",
    "loss_scale": "Static loss scale",
    "amp_level": "Auto mixed precision level",
    "save_checkpoint": "Whether save checkpoint",
}
_CHOICES = {"device_target": ["Ascend", "GPU", "CPU"], "amp_level": ["O0", "O1", "O2", "O3"]}


def _write_config(path: Path, cfg: dict) -> None:
    """``<net>_config.yaml`` as the model zoo writes it: a comment header, the options, then ``---``
    and the help and choices documents that ``model_utils/config.py`` reads with ``yaml.load_all``."""
    import yaml

    def dump(mapping: dict) -> str:
        return yaml.safe_dump(mapping, sort_keys=False, width=1000)

    text = (
        "# Builtin Configurations(DO NOT CHANGE THESE CONFIGURATIONS unless you know exactly what you are doing)\n"
        + dump({k: cfg[k] for k in list(cfg)[:7]})
        + "\n# Training options\n"
        + dump({k: cfg[k] for k in list(cfg)[7:]})
        + "\n---\n# Help description for each configuration\n"
        + dump(_HELP)
        + "\n---\n# Choices\n"
        + dump(_CHOICES)
    )
    path.write_text(text, encoding="utf-8")


def run(s: dict, out_dir: Path) -> None:
    import numpy as np

    xt, yt, xe, ye = load(s["dataset"], normalize=s.get("normalize", True), label_noise=s.get("label_noise", 0.0))
    cfg = _config(s)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_config(out_dir / f"{s['net']}_config.yaml", cfg)
    with _shell_redirect(out_dir / "train.log"):
        _train(s, cfg, np.asarray(xt), np.asarray(yt).astype(np.int32), np.asarray(xe), np.asarray(ye).astype(np.int32))


def _train(s: dict, cfg: dict, xt, yt, xe, ye) -> None:
    import numpy as np
    import mindspore as ms
    import mindspore.dataset as ds
    from mindspore import nn
    from mindspore.train import Accuracy, FixedLossScaleManager, LossMonitor, Model, TimeMonitor

    ms.set_context(mode=ms.PYNATIVE_MODE if s.get("pynative") else ms.GRAPH_MODE, device_target="CPU")
    ms.set_seed(cfg["seed"])

    class MLP(nn.Cell):
        """Dense stack with ReLU (the model zoo writes the layers as attributes)."""

        def __init__(self, n_in: int, hidden: list[int], num_classes: int) -> None:
            super().__init__()
            init = "zeros" if s.get("init") == "zeros" else None  # None: MindSpore's default (HeUniform)
            layers = []
            width = n_in
            for units in hidden:
                layers.append(nn.Dense(width, units, weight_init=init))
                if s.get("hidden_act", "relu"):
                    layers.append(nn.ReLU())
                width = units
            layers.append(nn.Dense(width, num_classes, weight_init=init))
            if s.get("out_act") == "softmax":
                layers.append(nn.Softmax())
            self.body = nn.SequentialCell(layers)

        def construct(self, x):
            return self.body(x)

    class Source:
        """Random-access source (NumpySlicesDataset fails on NumPy 2: its rows are NumPy scalars that
        ``np.array(x, copy=False)`` refuses, so the label is returned as a 0-d array)."""

        def __init__(self, x, y) -> None:
            self.x, self.y = x, y

        def __getitem__(self, i: int):
            return self.x[i], np.array(self.y[i], dtype=np.int32)

        def __len__(self) -> int:
            return len(self.x)

    def dataset(x, y, batch_size: int, shuffle: bool):
        data = ds.GeneratorDataset(Source(x, y), column_names=["data", "label"], shuffle=shuffle)
        return data.batch(batch_size, drop_remainder=False)

    net = MLP(xt.shape[1], cfg["hidden_sizes"], cfg["num_classes"])
    print(net)
    if s.get("loss") == "mse":
        loss = nn.MSELoss()
    else:
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=cfg["sparse"], reduction="mean")
    if cfg["optimizer"] == "Momentum":
        opt = nn.Momentum(
            net.trainable_params(), learning_rate=cfg["lr"], momentum=cfg["momentum"], loss_scale=cfg["loss_scale"]
        )
    else:
        opt = nn.Adam(net.trainable_params(), learning_rate=cfg["lr"], loss_scale=cfg["loss_scale"])
    kwargs = {}
    if cfg["loss_scale"] != 1.0:
        kwargs["loss_scale_manager"] = FixedLossScaleManager(cfg["loss_scale"], drop_overflow_update=False)
    if cfg["amp_level"] != "O0":
        kwargs["amp_level"] = cfg["amp_level"]
    model = Model(net, loss_fn=loss, optimizer=opt, metrics={"Accuracy": Accuracy()}, **kwargs)
    train_ds = dataset(xt, yt, cfg["batch_size"], True)
    eval_ds = dataset(xe, ye, cfg["batch_size"], False)
    steps = train_ds.get_dataset_size()
    print("============== Starting Training ==============", flush=True)
    try:
        model.train(
            cfg["epoch_size"],
            train_ds,
            callbacks=[LossMonitor(max(1, steps // 4)), TimeMonitor(steps)],
            dataset_sink_mode=False,
        )
    except (ValueError, RuntimeError):  # LossMonitor stops a run whose loss is NaN/Inf: the traceback ends the log
        traceback.print_exc()
        return
    print("============== Starting Testing ==============", flush=True)
    acc = model.eval(eval_ds, dataset_sink_mode=False)
    print(f"============== {acc} ==============", flush=True)


def operators(base: dict) -> list[tuple[str, dict, str, list[str]]]:
    """(operator, changed settings, true cause, also-acceptable causes) for a MindSpore program.

    Left out because MindSpore raises instead of training silently: ``sparse=False`` with integer
    labels (the logits and labels shapes are checked at graph compile), and a fixed loss scale with
    ``drop_overflow_update=True`` on CPU (only ``FixedLossScaleManager(drop_overflow_update=False)``
    is supported there). Zero initialisation and a removed hidden activation are left out too: on
    these data sets the run still reaches the healthy accuracy (a linear model separates digits and
    wine), so no run-level evidence is left to find.
    """
    ops: list[tuple[str, dict, str, list[str]]] = [
        ("healthy_seed2", {"seed": 2}, None, []),
        ("healthy_seed3", {"seed": 3}, None, []),
        ("lr_high", {"lr": base["lr"] * 1000}, "lr_too_high", ["gradient_explosion"]),
        ("lr_low", {"lr": base["lr"] / 1000}, "lr_too_low", []),
        ("labels", {"label_noise": 0.4}, "label_errors", []),
        ("epochs", {"epochs": 1}, "insufficient_epochs", []),
        ("normalization", {"normalize": False}, "not_normalized", []),
        ("batch_size", {"batch_size": 1024}, "insufficient_epochs", ["lr_too_low"]),
        # softmax at the end of the network, then SoftmaxCrossEntropyWithLogits applies it again
        ("output_activation", {"out_act": "softmax"}, "loss_function_error", []),
    ]
    if base.get("amp_level", "O0") != "O0":
        # float16 (O2) with a fixed scale of 2**24: scaled gradients pass float16's 65504 and, with
        # drop_overflow_update=False, the Inf update is applied
        ops.append(("loss_scale", {"loss_scale": 2.0**24}, "loss_scale_bad", ["fp_overflow"]))
    return ops
