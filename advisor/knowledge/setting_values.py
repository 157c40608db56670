"""The canonical values of settings: optimizer, loss, initialiser and scheduler names in every spelling the
frameworks and their configs use (``"AdamW"``, ``torch.optim.AdamW``, ``adamw_torch`` -> ``adamw``), and how
numbers, flags and precisions are written (``"1e-3"``, ``"true"``, ``"bf16-mixed"``). The keys' spellings are
in ``settings.py``; the hyper-parameter reading (advisor/extract/view/settings.py) uses both.
"""

from __future__ import annotations

import math
import re
from typing import Any


OPTIMIZERS = {
    "adamw": "adamw",
    "adamweightdecay": "adamw",
    "fusedadamw": "adamw",
    "decoupledadamw": "adamw",
    "adam": "adam",
    "fusedadam": "adam",
    "sgd": "sgd",
    "momentum": "sgd",
    "sgdm": "sgd",
    "nesterov": "sgd",
    "rmsprop": "rmsprop",
    "adagrad": "adagrad",
    "adadelta": "adadelta",
    "adafactor": "adafactor",
    "lamb": "lamb",
    "fusedlamb": "lamb",
    "lars": "lars",
    "larc": "lars",
    "lion": "lion",
    "nadam": "nadam",
    "radam": "radam",
    "adamax": "adamax",
    "ftrl": "ftrl",
    "sophia": "sophia",
}
LOSSES = {
    "crossentropy": "cross_entropy",
    "ce": "cross_entropy",
    "crossentropyloss": "cross_entropy",
    "categoricalcrossentropy": "cross_entropy",
    "sparsecategoricalcrossentropy": "cross_entropy",
    "softmaxcrossentropy": "cross_entropy",
    "softmaxcrossentropywithlogits": "cross_entropy",
    "nll": "nll",
    "nllloss": "nll",
    "bce": "bce",
    "bceloss": "bce",
    "bcewithlogits": "bce",
    "bcewithlogitsloss": "bce",
    "binarycrossentropy": "bce",
    "sigmoidcrossentropy": "bce",
    "mse": "mse",
    "mseloss": "mse",
    "meansquarederror": "mse",
    "l2loss": "mse",
    "l1": "l1",
    "l1loss": "l1",
    "mae": "l1",
    "meanabsoluteerror": "l1",
    "smoothl1": "smooth_l1",
    "smoothl1loss": "smooth_l1",
    "huber": "huber",
    "huberloss": "huber",
    "focal": "focal",
    "focalloss": "focal",
    "ctc": "ctc",
    "ctcloss": "ctc",
    "kldiv": "kl",
    "kldivloss": "kl",
    "kld": "kl",
    "hinge": "hinge",
}
INITS = {
    "zeros": "zeros",
    "zero": "zeros",
    "ones": "ones",
    "one": "ones",
    "constant": "constant",
    "normal": "normal",
    "gaussian": "normal",
    "randn": "normal",
    "randomnormal": "normal",
    "uniform": "uniform",
    "randomuniform": "uniform",
    "xavieruniform": "xavier_uniform",
    "glorotuniform": "xavier_uniform",
    "xavier": "xavier_uniform",
    "xaviernormal": "xavier_normal",
    "glorotnormal": "xavier_normal",
    "kaiminguniform": "kaiming_uniform",
    "heuniform": "kaiming_uniform",
    "kaimingnormal": "kaiming_normal",
    "henormal": "kaiming_normal",
    "kaiming": "kaiming_normal",
    "he": "kaiming_normal",
    "orthogonal": "orthogonal",
    "truncatednormal": "truncated_normal",
    "truncnormal": "truncated_normal",
    "lecunnormal": "lecun_normal",
    "lecununiform": "lecun_uniform",
}


def squash(text: str) -> str:
    """'torch.optim.AdamW' -> 'adamw'; 'Sparse_Categorical-CrossEntropy' -> 'sparsecategoricalcrossentropy'."""
    last = text.strip().rsplit(".", 1)[-1].lower()
    return re.sub(r"[^a-z0-9]", "", last)


def optimizer_name(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    s = squash(value)
    if s in OPTIMIZERS:
        return OPTIMIZERS[s]
    for prefix in ("adamw", "adam", "sgd", "rmsprop", "adagrad", "lamb", "lion"):  # adamw_torch_fused, adam8bit
        if s.startswith(prefix):
            return OPTIMIZERS[prefix]
    return s


def lookup(table: dict[str, str], value: Any, strict: bool = False) -> str | None:
    """The canonical spelling of ``value`` in ``table``; unknown names as squashed text (or None if strict)."""
    if not isinstance(value, str) or not value.strip():
        return None
    s = squash(value)
    found = table.get(s, table.get(s.removesuffix("loss")))
    return found if found is not None or strict else s


SCHEDULERS = (
    ("warmup", None),
    ("cosine", "cosine"),
    ("onecycle", "one_cycle"),
    ("plateau", "plateau"),
    ("multistep", "step"),
    ("step", "step"),
    ("exponential", "exponential"),
    ("exp", "exponential"),
    ("poly", "polynomial"),
    ("linear", "linear"),
    ("constant", "constant"),
    ("invsqrt", "inverse_sqrt"),
    ("inversesqrt", "inverse_sqrt"),
    ("noam", "inverse_sqrt"),
)


def scheduler_name(value: Any) -> str | None:
    """'CosineAnnealingLR', 'cosine_with_restarts', 'torch.optim.lr_scheduler.StepLR' -> cosine / step / ...;
    a warm-up prefix is kept ('warmup_cosine' -> 'warmup+cosine'), unknown names as squashed text."""
    if not isinstance(value, str) or not value.strip():
        return None
    s = squash(value)
    warm = "warmup" in s
    s = s.replace("warmup", "")
    for needle, canon in SCHEDULERS[1:]:
        if needle in s:
            return f"warmup+{canon}" if warm else canon
    return ("warmup+" + s if s else "warmup") if warm else s


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            f = float(value)
        except OverflowError:  # an integer beyond float range (YAML keeps up to 4,000 digits as an int)
            return None
        return f if math.isfinite(f) else None
    if isinstance(value, str):
        try:
            f = float(value.strip())
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def as_flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "on", "off", "1", "0"):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return None


def precision_name(value: Any) -> str | None:
    """16, '16-mixed', 'mixed_float16', 'fp16', 'bf16-mixed', 32, 'no' -> fp16 / bf16 / fp32."""
    flag = as_flag(value)
    if isinstance(value, bool) or (flag is not None and not isinstance(value, (int, float))):
        return "fp16" if flag else "fp32"
    s = str(value).strip().lower()
    if "bf16" in s or "bfloat16" in s:
        return "bf16"
    if "16" in s or "half" in s or s in ("o1", "o2", "o3"):
        return "fp16"
    if "32" in s or s in ("no", "none", "o0", "full", "float"):
        return "fp32"
    return None


#: precisions that keep the weights, gradients and optimizer state in float16 (no fp32 master copy): Lightning's
#: ``16-true``, a Keras ``float16`` dtype policy (``mixed_float16`` is the mixed one), apex ``O3``
_PURE_HALF = {"16-true", "fp16-true", "float16-true", "half-true"}
_POLICY_KEYS = {"dtype_policy", "policy", "mixed_precision_policy", "floatx"}
_OPT_LEVEL_KEYS = {"opt_level", "fp16_opt_level"}


def pure_half(value: Any, key: str) -> bool:
    """Whether a precision setting (``value`` under the raw ``key``) trains the weights themselves in float16."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return False
    s, last = str(value).strip().lower(), key.lower().rpartition(".")[2]
    if s in _PURE_HALF:
        return True
    if last in _POLICY_KEYS and s in ("float16", "fp16", "half"):
        return True
    return last in _OPT_LEVEL_KEYS and s == "o3"
