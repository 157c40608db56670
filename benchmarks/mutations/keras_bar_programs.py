"""Keras 3 programs run the way users run them: ``python train.py > train.log 2>&1`` at Keras' default verbosity.

The other Keras programs (``keras_programs.py``) print ``model.get_compile_config()`` and train with
``fit(verbose=2)``, one line per epoch. A user's script mostly does neither: ``fit`` and ``evaluate`` keep their
default verbosity (Keras 3's progress bar, which writes ``\\r`` / backspace updates and ANSI colour codes even into
a file, since it takes any POSIX process for a terminal), and nothing about the compile settings is printed. The
run folder holds only ``train.log``, what the shell redirect leaves (stdout and stderr of a child process): no
hyper-parameter file, no data sample, no ``model.json``. A held-out probe of log-only diagnosis:

- ``kerasbar_cnn_digits``: a small CNN on scikit-learn's digits (8x8x1): Conv2D + MaxPooling2D + Dropout + Dense,
  ``RMSprop(learning_rate=...)``, sparse categorical cross-entropy, ``model.summary()`` printed,
  ``fit(x, y, validation_split=0.2, epochs=...)``, then ``model.evaluate`` and ``print("Test loss:", ...)``;
- ``kerasbar_bn_synth``: an MLP with BatchNormalization on a ``make_classification`` problem (20 features in raw
  units, 4 classes, one-hot labels, categorical cross-entropy), standardised with ``StandardScaler``,
  ``Adam(learning_rate=...)``, no summary, ``validation_data=`` the test split, and a final
  ``print(f"Accuracy on the test set: {acc:.3f}")``.

    python benchmarks/mutations/generate.py --only kerasbar_cnn_digits kerasbar_bn_synth -j 1
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_BAR = {"runner": "kerasbar", "seed": 0, "normalize": True, "label_noise": 0.0, "init": "default", "hidden": []}

#: program name -> (runner, healthy settings), merged into generate.PROGRAMS
PROGRAMS: dict[str, tuple[str, dict]] = {
    "kerasbar_cnn_digits": (
        "kerasbar",
        {**_BAR, "program": "cnn", "dataset": "digits", "task": "multiclass", "n_classes": 10, "optimizer": "rmsprop",
         "lr": 1e-3, "epochs": 20, "batch_size": 32, "out_act": "softmax", "loss": "sparse_categorical_crossentropy"},
    ),
    "kerasbar_bn_synth": (
        "kerasbar",
        {**_BAR, "program": "bn_mlp", "dataset": "synth4", "task": "multiclass", "n_classes": 4, "optimizer": "adam",
         "lr": 1e-3, "epochs": 30, "batch_size": 64, "out_act": "softmax", "loss": "categorical_crossentropy"},
    ),
}


def operators(base: dict) -> list[tuple[str, dict, str, list[str]]]:
    """(operator, changed settings, true cause, also-acceptable causes): a second seed healthy, then the fault
    operators of generate.py that fit a Keras classifier."""
    ops: list[tuple[str, dict, str, list[str]]] = [
        ("healthy_seed1", {"seed": 1}, None, []),
        ("lr_high", {"lr": base["lr"] * 1000}, "lr_too_high", ["gradient_explosion"]),
        ("lr_low", {"lr": base["lr"] / 1000}, "lr_too_low", []),
        ("epochs", {"epochs": 2}, "insufficient_epochs", []),
        ("batch_size", {"batch_size": 1024}, "insufficient_epochs", ["lr_too_low"]),
        ("init", {"init": "zeros"}, "weight_init_bad", []),
        ("normalization", {"normalize": False}, "not_normalized", []),
        ("labels", {"label_noise": 0.4}, "label_errors", []),
    ]
    if base["program"] == "cnn":
        # a regression loss on one-hot classes; sigmoid units in front of a softmax loss
        ops.append(("loss", {"loss": "mse", "one_hot": True}, "loss_function_error", []))
        ops.append(("output_activation", {"out_act": "sigmoid"}, "loss_function_error", []))
    else:
        # binary cross-entropy on one-hot classes (Keras then reports binary accuracy); no softmax in front of a
        # loss that expects probabilities (from_logits=False)
        ops.append(("loss", {"loss": "binary_crossentropy"}, "loss_function_error", []))
        ops.append(("output_activation", {"out_act": None}, "loss_function_error", []))
    return ops


def run(s: dict, out_dir: Path) -> None:
    """Train in a child process whose stdout and stderr are train.log (``python train.py > train.log 2>&1``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "KERAS_BACKEND": "torch", "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    with open(out_dir / "train.log", "w", encoding="utf-8") as fh:
        proc = subprocess.run([sys.executable, __file__, json.dumps(s)], stdout=fh, stderr=subprocess.STDOUT,
                              env=env, cwd=str(out_dir), check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{out_dir}: training exited with {proc.returncode}; see its train.log")


def _data(s: dict):
    """(x_train, y_train, x_test, y_test): digits as 8x8x1 images (0..16 grey levels scaled to [0, 1], or as 8-bit
    pixels 0..255 unscaled), or a 4-class make_classification problem whose 20 features come in raw units (each
    scaled by a factor in [1, 100] and shifted), standardised on the training split."""
    import numpy as np
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    seed = s["seed"]
    if s["dataset"] == "digits":
        x, y = datasets.load_digits(return_X_y=True)
        x = (x / 16.0 if s["normalize"] else x * 16.0).reshape(-1, 8, 8, 1)
    else:
        x, y = datasets.make_classification(n_samples=2000, n_features=20, n_informative=10, n_redundant=4,
                                            n_classes=4, n_clusters_per_class=1, class_sep=1.5, shift=None,
                                            scale=None, random_state=7)
    xt, xe, yt, ye = train_test_split(x.astype("float32"), y, test_size=0.2, random_state=seed, stratify=y)
    if s["dataset"] != "digits" and s["normalize"]:
        scaler = StandardScaler().fit(xt)
        xt, xe = scaler.transform(xt), scaler.transform(xe)
    if s["label_noise"] > 0:
        rng = np.random.default_rng(seed + 1)
        idx = rng.choice(len(yt), int(s["label_noise"] * len(yt)), replace=False)
        yt = yt.copy()
        yt[idx] = rng.permutation(yt[idx])
    return xt.astype("float32"), yt, xe.astype("float32"), ye


def _optimizer(s: dict):
    import keras

    return {"rmsprop": keras.optimizers.RMSprop, "adam": keras.optimizers.Adam}[s["optimizer"]](learning_rate=s["lr"])


def train(s: dict) -> None:
    import keras

    keras.utils.set_random_seed(s["seed"])
    xt, yt, xe, ye = _data(s)
    init = "zeros" if s["init"] == "zeros" else "glorot_uniform"
    if s["program"] == "cnn":
        if s.get("one_hot"):
            yt, ye = keras.utils.to_categorical(yt, 10), keras.utils.to_categorical(ye, 10)
        model = keras.Sequential([
            keras.Input(shape=(8, 8, 1)),
            keras.layers.Conv2D(16, 3, padding="same", activation="relu", kernel_initializer=init),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu", kernel_initializer=init),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dropout(0.25),
            keras.layers.Dense(64, activation="relu", kernel_initializer=init),
            keras.layers.Dense(10, activation=s["out_act"], kernel_initializer=init),
        ])
        model.compile(optimizer=_optimizer(s), loss=s["loss"], metrics=["accuracy"])
        model.summary()
        model.fit(xt, yt, batch_size=s["batch_size"], epochs=s["epochs"], validation_split=0.2)
        score = model.evaluate(xe, ye)
        print("Test loss:", score[0])
        print("Test accuracy:", score[1])
    else:
        yt, ye = keras.utils.to_categorical(yt, 4), keras.utils.to_categorical(ye, 4)
        model = keras.Sequential([
            keras.Input(shape=(20,)),
            keras.layers.Dense(64, kernel_initializer=init),
            keras.layers.BatchNormalization(),
            keras.layers.Activation("relu"),
            keras.layers.Dense(32, kernel_initializer=init),
            keras.layers.BatchNormalization(),
            keras.layers.Activation("relu"),
            keras.layers.Dense(4, activation=s["out_act"], kernel_initializer=init),
        ])
        model.compile(optimizer=_optimizer(s), loss=s["loss"], metrics=["accuracy"])
        model.fit(xt, yt, batch_size=s["batch_size"], epochs=s["epochs"], validation_data=(xe, ye))
        _, acc = model.evaluate(xe, ye)
        print(f"Accuracy on the test set: {acc:.3f}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    train(json.loads(sys.argv[1]))
