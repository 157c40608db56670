"""Shared parts of the mutation-corpus programs: data that ships with scikit-learn (no download),
the settings every program reads, and the files a run leaves behind.

A program is ``run(settings, out_dir)``: it trains a small model with ``settings`` (the healthy
values of its ``BASE`` merged with one fault operator's changes, see ``generate.py``) and leaves
what the framework prints and saves: ``train.log`` (stdout: the model summary or repr, the compile
or loss settings the script prints, the training lines), a hyper-parameter file, and whatever the
framework itself writes (Keras ``model.json`` from ``model.to_json()``, Lightning ``metrics.csv`` and
``hparams.yaml``). Programs whose script saves a data sample (``data/train.npz``, the layout advisor
documents) say so in ``SAVES_SAMPLE``.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np


def load(name: str, normalize: bool = True, label_noise: float = 0.0, seed: int = 0
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_eval, y_eval) of a scikit-learn data set; 80/20 split.

    normalize=False feeds the features raw (digits as 0..255 pixels, i.e. x16, the way an 8-bit
    image arrives; tabular sets unstandardised). label_noise shuffles that share of the training labels.
    """
    from sklearn import datasets
    from sklearn.model_selection import train_test_split

    loader = {"digits": datasets.load_digits, "iris": datasets.load_iris, "cancer": datasets.load_breast_cancer,
              "diabetes": datasets.load_diabetes, "wine": datasets.load_wine}[name]
    x, y = loader(return_X_y=True)
    x = x.astype(np.float32)
    regression = name == "diabetes"
    y = y.astype(np.float32) if regression else y.astype(np.int64)
    xt, xe, yt, ye = train_test_split(x, y, test_size=0.2, random_state=seed,
                                      stratify=None if regression else y)
    if name == "digits":
        xt, xe = (xt / 16.0, xe / 16.0) if normalize else (xt * 16.0, xe * 16.0)
    elif normalize:
        mu, sd = xt.mean(0), xt.std(0) + 1e-8
        xt, xe = (xt - mu) / sd, (xe - mu) / sd
    if regression:
        mu, sd = yt.mean(), yt.std()
        yt, ye = (yt - mu) / sd, (ye - mu) / sd
    if label_noise > 0 and not regression:
        rng = np.random.default_rng(seed + 1)
        idx = rng.choice(len(yt), int(label_noise * len(yt)), replace=False)
        yt = yt.copy()
        yt[idx] = rng.permutation(yt[idx])
    return xt.astype(np.float32), yt, xe.astype(np.float32), ye


class Tee(io.TextIOBase):
    def __init__(self, *streams: Any) -> None:
        self.streams = streams

    def write(self, s: str) -> int:
        for st in self.streams:
            st.write(s)
        return len(s)

    def flush(self) -> None:
        for st in self.streams:
            st.flush()


@contextlib.contextmanager
def console_log(out_dir: Path, echo: bool = False) -> Iterator[None]:
    """Everything the program prints goes to out_dir/train.log (what `python train.py > train.log` keeps)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "train.log", "w", encoding="utf-8") as fh:
        streams = (fh, sys.__stdout__) if echo else (fh,)
        with contextlib.redirect_stdout(Tee(*streams)), contextlib.redirect_stderr(Tee(*streams)):
            yield


def write_yaml(path: Path, mapping: dict) -> None:
    import yaml

    path.write_text(yaml.safe_dump(mapping, sort_keys=False), encoding="utf-8")


def write_json(path: Path, mapping: dict) -> None:
    path.write_text(json.dumps(mapping, indent=2), encoding="utf-8")


def save_sample(out_dir: Path, xt: np.ndarray, yt: np.ndarray, xe: np.ndarray, ye: np.ndarray, n: int = 512) -> None:
    (out_dir / "data").mkdir(exist_ok=True)
    np.savez(out_dir / "data" / "train.npz", x=xt[:n], y=yt[:n])
    np.savez(out_dir / "data" / "eval.npz", x=xe[:n], y=ye[:n])
