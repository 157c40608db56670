"""Which logged key is which metric, in one vocabulary: the split (train, eval, test), the metric (loss, a
loss component, a score, the learning rate, the gradient norm, the loss scale), the step and epoch keys,
and how logs write numbers (``nan``, ``1.#INF``, ``np.float32(0.5)``). Every reader names its keys with
``classify_key``; ``records.py`` keeps what they record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal


#: "test": a final held-out evaluation (Keras ``Test loss:`` after fit), kept apart from the eval curve
Split = Literal["train", "eval", "test"]
Metric = Literal["loss", "loss_part", "score", "lr", "grad_norm", "loss_scale"]

# -- key vocabulary ------------------------------------------------------------
_EVAL_PREFIXES = (
    "validation_",
    "validation/",
    "valid_",
    "valid/",
    "val_",
    "val/",
    "val-",
    "eval_",
    "eval/",
    "test_",
    "test/",
    "metrics/",
    "dev_",
    "dev/",
)
_EVAL_INFIXES = frozenset(("val", "valid", "validation", "eval"))
_TRAIN_PREFIXES = ("training_", "training/", "train_", "train/", "train-")
#: main training-loss names, best first (a file with several picks the first)
LOSS_NAMES = (
    "loss",
    "total_loss",
    "lm_loss",
    "loss_total",
    "objective",
    "avg_loss",
    "mean_loss",
    "nll_loss",
    "cost",
    "reduced_train_loss",  # NeMo's Megatron models: self.log("reduced_train_loss", ...), the loss averaged over ranks
    "loss_sum",
    "xent",  # OpenNMT-py's training print: ``Step 100/100000; acc: 10.12; ppl: 1234.56; xent: 7.12; lr: ...``
)
_LR = {"lr", "learning_rate", "lr/pg0", "lr_pg0", "lr0", "base_lr", "current_lr", "lr-adam", "lr-sgd", "lr-adamw"}
_GRAD = {
    "grad_norm",
    "gnorm",
    "gradient_norm",
    "grad_norm_total",
    "total_grad_norm",
    "global_grad_norm",
    "grad-norm",
    "total_norm",
    "grad_norm_clip",
}
_SCALE = {
    "loss_scale",
    "loss_scaler",
    "scale",
    "cur_scale",
    "scaling_factor",
    "scale_sense",
    "lossscale",
    "loss-scale",
    "amp_scale",
    "grad_scale",
}
_SCORE_WORDS = (
    "acc",
    "accuracy",
    "top1",
    "top5",
    "acc1",
    "acc5",
    "f1",
    "map",
    "map50",
    "map50-95",
    "precision",
    "recall",
    "auc",
    "bleu",
    "rouge",
    "wer",
    "cer",
    "iou",
    "miou",
    "dice",
    "perplexity",
    "ppl",
)
#: spellings of the COCO mAP at one IoU and over 0.5:0.95 (YOLOv5 ``mAP@.5``, ``metrics/mAP_0.5:0.95``)
_SCORE_ALIASES = {
    "map@.5": "map50",
    "map@0.5": "map50",
    "map_0.5": "map50",
    "map@.5:.95": "map50-95",
    "map@0.5:0.95": "map50-95",
    "map_0.5:0.95": "map50-95",
}
STEP_KEYS = {
    "step",
    "global_step",
    "iter",
    "iteration",
    "it",
    "num_updates",
    "updates",
    "steps",
    "total_steps",
    "global_iter",
    "cur_iter",
    "trainer/global_step",
}
EPOCH_KEYS = {"epoch", "ep", "epochs", "cur_epoch"}


@dataclass(frozen=True)
class KeyInfo:
    series: str  # e.g. "train/loss", "eval/accuracy", "train/loss@epoch"
    split: Split
    metric: Metric
    base: str  # the name without split prefix / aggregation suffix


_KEY_CACHE: dict[str, KeyInfo | None] = {}


def classify_key(raw: str) -> KeyInfo | None:
    """Name a logged key with the common vocabulary, or None when not a curve we track."""
    hit = _KEY_CACHE.get(raw)
    if hit is not None or raw in _KEY_CACHE:
        return hit
    k = raw.strip().lower().replace(" ", "_")
    split: Split = "train"
    for p in _EVAL_PREFIXES:
        if k.startswith(p) and len(k) > len(p):
            split, k = "eval", k[len(p) :]
            break
    else:
        for p in _TRAIN_PREFIXES:
            if k.startswith(p) and len(k) > len(p):
                k = k[len(p) :]
                break
        else:
            parts = k.split("_")
            if len(parts) > 2 and any(t in _EVAL_INFIXES for t in parts[1:-1]):  # total_val_loss
                split, k = "eval", "_".join(t for t in parts if t not in _EVAL_INFIXES)
    agg = ""
    if k.endswith("_step") and len(k) > 5:
        k = k[:-5]
    elif k.endswith("_epoch") and len(k) > 6:
        k, agg = k[:-6], "@epoch"
    k = k.removesuffix("(b)")
    k = _SCORE_ALIASES.get(k, k)
    if k.startswith("x/lr") and k[4:].isdigit():  # YOLOv5's results.csv: the rate of each parameter group
        k = "lr/pg" + k[4:]
    metric: Metric | None
    if k in LOSS_NAMES:
        metric = "loss"
    elif k in _LR:
        metric, k = "lr", "lr"
    elif k.startswith("lr/pg") and k[5:].isdigit():  # Ultralytics' other parameter groups (biases: their own warm-up)
        metric = "lr"
    elif k in _GRAD:
        metric, k = "grad_norm", "grad_norm"
    elif k in _SCALE:
        metric, k = "loss_scale", "loss_scale"
    elif (
        (k.endswith("loss") or k.startswith("loss_"))
        and "." not in k
        and not any(w in k for w in ("scale", "weight", "type", "func", "fn", "coef", "ratio"))
    ):
        metric = "loss_part"
    elif any(
        k == w or k.endswith("_" + w) or (k.startswith(w) and k[len(w) :].lstrip("@_-").isdigit()) for w in _SCORE_WORDS
    ):
        metric = "score"
    else:
        metric = None
    info = None if metric is None else KeyInfo(series=f"{split}/{k}{agg}", split=split, metric=metric, base=k)
    if len(_KEY_CACHE) < 10_000:
        _KEY_CACHE[raw] = info
    return info


def printed_as(full: float, shown: float, min_decimals: int = 0) -> bool:
    """``full`` rounds to ``shown`` at the last digit ``shown`` has, or at ``min_decimals`` after the point when
    that is finer (``17.269388197455335`` -> ``17.2694``; with ``min_decimals=4``, a parsed ``0.4000`` reads back
    as ``0.4`` and ``0.41`` is not it)."""
    if full == shown:
        return True
    if not (math.isfinite(full) and math.isfinite(shown)):
        return False
    exp = Decimal(repr(shown)).as_tuple().exponent
    return isinstance(exp, int) and abs(full - shown) <= 0.5 * 10.0 ** min(exp, -min_decimals) * (1 + 1e-9)


def holds_val_and_test(values: dict[str, float]) -> bool:
    """The record holds keys of a validation set and of a test set (``Val Acc`` and ``Test Acc``, ``val_loss`` and
    ``test_loss``)."""
    has_test = has_val = False
    for k in values:
        head = k[:5].lower()
        if head.startswith("test"):
            has_test = True
        elif head.startswith("val") or head == "valid" or head.startswith("eval"):
            has_val = True
    return has_test and has_val


#: keys of a printed mapping that place its values (Hugging Face Trainer's ``step``, ``epoch``)
POSITION_KEYS = frozenset({"step", "global_step", "epoch"})


def holds_logged_values(keys: Iterable[str]) -> bool:
    """Whether a printed mapping whose numbers stand under ``keys`` is a record of logged values (a position, a
    loss or a score) rather than settings (``{'lr': 3e-05, 'batch_size': 32}``). One judgement for the log
    reader and the settings search, so that no printed dict is read as both or as neither."""
    return any(
        k in POSITION_KEYS or ((info := classify_key(k)) is not None and info.metric in ("loss", "score")) for k in keys
    )


# -- numbers -------------------------------------------------------------------
_NONFINITE_RE = re.compile(r"^([-+]?)(?:nan(?:\(ind\))?|1\.#(?:qnan|ind)|(inf(?:inity)?|1\.#inf))\d*$", re.I)


_NUMPY_SCALAR_RE = re.compile(r"^(?:np|numpy)\.(?:float|int|uint)\d*\(([^()]*)\)$")


def parse_number(text: str) -> float | None:
    """A logged number in any spelling (``1e-3``, ``nan``, ``-inf``, ``1.#INF``, ``tensor(0.5)``,
    ``np.float64(0.5)``), or None."""
    t = text.strip()
    if t[:1] in ("'", '"'):  # PaddleDetection 1.x, recent transformers: 'loss': '1.0243'
        t = t.strip("'\"")
    if t.startswith("tensor("):
        t = t[7:].split(",", 1)[0].rstrip(")")
    elif t[:3] == "np." or t[:6] == "numpy.":  # NumPy 2's scalar repr (NEP 51): np.float64(0.94), np.int64(3)
        m = _NUMPY_SCALAR_RE.match(t)
        if m is not None:
            t = m.group(1)
    try:
        return float(t)
    except ValueError:
        m = _NONFINITE_RE.match(t)
        if m is None:
            return None
        if m.group(2):
            return -math.inf if m.group(1) == "-" else math.inf
        return math.nan
