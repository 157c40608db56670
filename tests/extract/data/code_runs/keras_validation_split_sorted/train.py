"""Train a small dense network on a 4-class problem with Keras 3 (torch backend)."""
import os

os.environ.setdefault("KERAS_BACKEND", "torch")

import keras
import numpy as np
from keras import layers

EPOCHS = 15
BATCH_SIZE = 64

rng = np.random.default_rng(0)
centers = rng.normal(0, 1.0, size=(4, 20))


def make_data(n):
    y = rng.integers(0, 4, size=n)
    x = centers[y] + rng.normal(0, 1.5, size=(n, 20))
    return x.astype("float32"), y


x_train, y_train = make_data(4000)
order = np.argsort(y_train, kind="stable")
x_train, y_train = x_train[order], y_train[order]

keras.utils.set_random_seed(0)
model = keras.Sequential(
    [
        keras.Input(shape=(20,)),
        layers.Dense(64, activation="relu"),
        layers.Dropout(0.3),
        layers.Dense(4, activation="softmax"),
    ]
)
model.compile(
    optimizer=keras.optimizers.Adam(learning_rate=1e-3),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
)
model.fit(x_train, y_train, epochs=EPOCHS, batch_size=BATCH_SIZE, validation_split=0.2, verbose=2)
