"""Keras 3 training programs (run on the torch backend: KERAS_BACKEND=torch).

Each is a plain Keras script turned into ``run(settings, out_dir)``: build a Sequential model,
``model.summary()``, print the compile settings, ``fit(verbose=2)`` with validation data, save
``model.to_json()`` and a hparams.yaml. Settings: see ``BASE`` of each program in ``generate.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "torch")

from common import console_log, load, write_yaml


def _initializer(name: str):
    import keras

    if name == "zeros":
        return keras.initializers.Zeros()
    if name == "huge":
        return keras.initializers.RandomNormal(stddev=3.0)
    return "glorot_uniform"


def _optimizer(s: dict):
    import keras

    if s["optimizer"] == "sgd":
        return keras.optimizers.SGD(learning_rate=s["lr"], momentum=s.get("momentum", 0.0))
    if s["optimizer"] == "rmsprop":
        return keras.optimizers.RMSprop(learning_rate=s["lr"])
    return keras.optimizers.Adam(learning_rate=s["lr"])


#: the learning rate Keras gives an optimizer named by a string (https://keras.io/api/optimizers/)
_KERAS_DEFAULT_LR = {"sgd": 0.01, "rmsprop": 0.001, "adam": 0.001}


def _optimizer_source(s: dict) -> str:
    """The optimizer as a script that builds _optimizer(s) would write it: its name when Keras' defaults give the
    same optimizer, else the constructor with its arguments."""
    if s["lr"] == _KERAS_DEFAULT_LR.get(s["optimizer"]) and not s.get("momentum"):
        return repr(s["optimizer"])
    cls = {"sgd": "SGD", "rmsprop": "RMSprop"}.get(s["optimizer"], "Adam")
    extra = f", momentum={s['momentum']}" if s["optimizer"] == "sgd" and s.get("momentum") else ""
    return f"keras.optimizers.{cls}(learning_rate={s['lr']}{extra})"


def _loss(s: dict):
    import keras

    name = s["loss"]
    if s.get("from_logits"):
        cls = {"sparse_categorical_crossentropy": keras.losses.SparseCategoricalCrossentropy,
               "categorical_crossentropy": keras.losses.CategoricalCrossentropy,
               "binary_crossentropy": keras.losses.BinaryCrossentropy}[name]
        return cls(from_logits=True)
    return name


def run(s: dict, out_dir: Path) -> None:
    import keras
    import numpy as np

    keras.utils.set_random_seed(s.get("seed", 0))
    xt, yt, xe, ye = load(s["dataset"], normalize=s.get("normalize", True), label_noise=s.get("label_noise", 0.0))
    n_classes = int(max(yt.max(), ye.max()) + 1) if s["task"] != "regression" else None
    if s.get("one_hot"):
        yt, ye = np.eye(n_classes)[yt], np.eye(n_classes)[ye]
    layers: list = []
    if s.get("conv"):
        xt, xe = xt.reshape(-1, 8, 8, 1), xe.reshape(-1, 8, 8, 1)
        layers += [keras.Input((8, 8, 1)),
                   keras.layers.Conv2D(s["conv"], 3, activation=s["hidden_act"], kernel_initializer=_initializer(s["init"])),
                   keras.layers.Flatten()]
    else:
        layers.append(keras.Input((xt.shape[1],)))
    for units in s["hidden"]:
        layers.append(keras.layers.Dense(units, activation=s["hidden_act"], kernel_initializer=_initializer(s["init"])))
    layers.append(keras.layers.Dense(s["out_units"], activation=s["out_act"], kernel_initializer=_initializer(s["init"])))
    model = keras.Sequential(layers)
    model.compile(optimizer=_optimizer(s), loss=_loss(s), metrics=s["metrics"])
    with console_log(out_dir):
        model.summary()
        if s.get("print_style") == "call":
            print(f"model.compile(optimizer={_optimizer_source(s)}, loss={s['loss']!r}, metrics={s['metrics']!r}"
                  f"{', from_logits=True' if s.get('from_logits') else ''})")
        else:
            print(model.get_compile_config())
        model.fit(xt, yt, validation_data=(xe, ye), epochs=s["epochs"], batch_size=s["batch_size"], verbose=2)
    (out_dir / "model.json").write_text(model.to_json(), encoding="utf-8")
    hp = {"framework": "keras", "dataset": s["dataset"], "optimizer": s["optimizer"], "learning_rate": s["lr"],
          "batch_size": s["batch_size"], "epochs": s["epochs"], "loss": s["loss"],
          "kernel_initializer": {"zeros": "zeros", "huge": "random_normal"}.get(s["init"], "glorot_uniform")}
    if s["optimizer"] == "sgd":
        hp["momentum"] = s.get("momentum", 0.0)
    if s.get("write_num_classes") and n_classes:
        hp["num_classes"] = n_classes
    write_yaml(out_dir / "hparams.yaml", hp)
