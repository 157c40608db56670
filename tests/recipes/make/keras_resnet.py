"""Regenerate the Keras ResNet50 recipe runs (real Keras 3, torch backend, CPU).

    python tests/recipes/make/keras_resnet.py OUTDIR

writes OUTDIR/keras_resnet_recipe_rate_few_epochs/ and OUTDIR/keras_resnet_lr_unscaled/, each
holding what the run itself wrote: train.log (stdout+stderr), training.csv
(keras CSVLogger) and hparams.yaml (the settings the script keeps).

Recipe: Goyal et al. 2017, https://arxiv.org/abs/1706.02677 -- SGD momentum
0.9, lr 0.1 per 256 images (linear scaling), weight decay 1e-4.  At batch 32
that is lr 0.0125.  The broken run keeps batch 32 but uses lr 1.6, the rate of
the batch-4096 recipe (no scaling down).

Each run is executed as a child process whose stdout/stderr go to train.log,
as a user's `python train.py > train.log 2>&1` would.
"""
import os
import subprocess
import sys

RUNS = {
    # name: (learning_rate)
    "keras_resnet_recipe_rate_few_epochs": 0.1 * 32 / 256,   # 0.0125
    "keras_resnet_lr_unscaled": 1.6,         # batch-4096 rate at batch 32
}
SEED = 1234
BATCH = 32
EPOCHS = 4
N_TRAIN, N_VAL = 320, 96


def make_data(n, rng):
    """Noise images; class = which cell of a 2x5 grid holds a bright block."""
    import numpy as np
    x = rng.uniform(0, 80, size=(n, 32, 32, 3)).astype("float32")
    y = rng.integers(0, 10, size=n)
    for i, c in enumerate(y):
        r, col = divmod(int(c), 5)
        x[i, r * 16 + 2:r * 16 + 14, col * 6 + 1:col * 6 + 6, :] += 160.0
    return x, y.astype("int64")


def train(name, outdir):
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import numpy as np
    import torch
    torch.set_num_threads(1)
    import keras

    lr = RUNS[name]
    keras.utils.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    x_train, y_train = make_data(N_TRAIN, rng)
    x_val, y_val = make_data(N_VAL, rng)
    x_train = keras.applications.resnet50.preprocess_input(x_train)
    x_val = keras.applications.resnet50.preprocess_input(x_val)

    hparams = {
        "model": "ResNet50",
        "weights": None,
        "input_shape": [32, 32, 3],
        "classes": 10,
        "optimizer": "SGD",
        "learning_rate": lr,
        "momentum": 0.9,
        "weight_decay": 1e-4,
        "batch_size": BATCH,
        "epochs": EPOCHS,
        "seed": SEED,
        "backend": keras.backend.backend(),
    }
    with open(os.path.join(outdir, "hparams.yaml"), "w") as f:
        for k, v in hparams.items():
            if v is None:
                v = "null"
            f.write(f"{k}: {v}\n")

    model = keras.applications.ResNet50(weights=None, input_shape=(32, 32, 3), classes=10)
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=lr, momentum=0.9, weight_decay=1e-4),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.summary()
    print(f"Training {hparams['model']} with SGD lr={lr} momentum=0.9 "
          f"weight_decay=1e-4 batch_size={BATCH} epochs={EPOCHS}", flush=True)
    model.fit(
        x_train, y_train,
        validation_data=(x_val, y_val),
        batch_size=BATCH,
        epochs=EPOCHS,
        verbose=2,
        callbacks=[keras.callbacks.CSVLogger(os.path.join(outdir, "training.csv"))],
    )
    loss, acc = model.evaluate(x_val, y_val, batch_size=BATCH, verbose=0)
    print(f"Final validation: loss={loss:.4f} accuracy={acc:.4f}", flush=True)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        train(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    env = dict(os.environ, KERAS_BACKEND="torch", PYTHONUNBUFFERED="1")
    for name in RUNS:
        outdir = os.path.join(root, name)
        os.makedirs(outdir, exist_ok=True)
        with open(os.path.join(outdir, "train.log"), "w") as log:
            rc = subprocess.call([sys.executable, os.path.abspath(__file__), "--child", name, outdir],
                                 stdout=log, stderr=subprocess.STDOUT, env=env, cwd=outdir)
        print(f"{name}: exit {rc}")


if __name__ == "__main__":
    main()
