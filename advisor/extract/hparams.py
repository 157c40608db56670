"""Hyper-parameter files -> ``hyperparameter``, ``hparam_diff``, ``learning_rate_check``, ``loss_scale_check`` facts.

1. Each hyper-parameter file of a folder (read by ``advisor.read.run`` with
   ``advisor.read.hparams``; settings printed in logs with ``advisor.read.log_settings``) is
   flattened to dotted keys, and every key the advisor knows is mapped onto the
   canonical vocabulary of ``advisor.facts.hparams`` with its value normalised
   (``"AdamW"``, ``torch.optim.AdamW``, ``adamw_torch`` -> ``adamw``; PyTorch's
   BatchNorm ``momentum=0.1`` -> ``batchnorm_decay=0.9``; ``keep_prob`` ->
   ``dropout``; ``"1e-3"`` -> 0.001).
2. With ``framework`` known, keys the run did not set take that framework's
   documented default (``advisor.knowledge.framework_defaults``).
3. Run and baseline are diffed on these effective values.
4. Without a baseline, the learning rate is placed against the usual band for
   its optimizer and batch size, and loss scaling is summarised.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.facts.base import Source
from advisor.facts.hparams import (
    HparamDiff,
    Hyperparameter,
    LearningRateCheck,
    LossScaleCheck,
    Scalar,
    SettingDiff,
)
from advisor.facts.hparams import Setting as SettingFact
from advisor.inventory import InputRecord
from advisor.knowledge.settings import SYNONYMS
from advisor.knowledge.framework_defaults import (
    EFFECTS,
    LAYER_DEFAULTS,
    TYPICAL_RANGES,
    canonical_framework,
    defaults_for,
)
from advisor.read.hparams import (
    file_dialect,
    file_priority,
    flatten,
    numbered_mapping,
)
from advisor.read.run import RunRead


#: parent keys that make a ``type``/``name`` key name the parent's thing
_CHOICE_PARENTS = {
    "optimizer": "optimizer",
    "optim": "optimizer",
    "opt": "optimizer",
    "optimizer_config": "optimizer",
    "loss": "loss",
    "criterion": "loss",
    "loss_fn": "loss",
    "lr_scheduler": "lr_scheduler",
    "scheduler": "lr_scheduler",
    "lr_config": "lr_scheduler",
    "init": "weight_init",
    "initializer": "weight_init",
    "weight_init": "weight_init",
}
_CHOICE_KEYS = {"type", "name", "_target_", "class", "class_name", "cls", "policy"}
_BN_HINT = re.compile(r"(^|[._])(bn|batchnorm|batch_norm|norm_layer|norm_cfg|norm)([._]|$)|batchnorm|batch_norm")
_LN_HINT = re.compile(r"(^|[._])(ln|layernorm|layer_norm)([._]|$)|layernorm|layer_norm")

#: names kept as facts but never diffed (they differ by design, or are not settings)
NOT_DIFFED = {"seed", "framework", "num_parameters"}

_OPTIMIZERS = {
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
_LOSSES = {
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
_INITS = {
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


def _squash(text: str) -> str:
    """'torch.optim.AdamW' -> 'adamw'; 'Sparse_Categorical-CrossEntropy' -> 'sparsecategoricalcrossentropy'."""
    last = text.strip().rsplit(".", 1)[-1].lower()
    return re.sub(r"[^a-z0-9]", "", last)


def _optimizer(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    s = _squash(value)
    if s in _OPTIMIZERS:
        return _OPTIMIZERS[s]
    for prefix in ("adamw", "adam", "sgd", "rmsprop", "adagrad", "lamb", "lion"):  # adamw_torch_fused, adam8bit
        if s.startswith(prefix):
            return _OPTIMIZERS[prefix]
    return s


def _lookup(table: dict[str, str], value: Any, strict: bool = False) -> str | None:
    """The canonical spelling of ``value`` in ``table``; unknown names as squashed text (or None if strict)."""
    if not isinstance(value, str) or not value.strip():
        return None
    s = _squash(value)
    found = table.get(s, table.get(s.removesuffix("loss")))
    return found if found is not None or strict else s


_SCHEDULERS = (
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


def _scheduler(value: Any) -> str | None:
    """'CosineAnnealingLR', 'cosine_with_restarts', 'torch.optim.lr_scheduler.StepLR' -> cosine / step / ...;
    a warm-up prefix is kept ('warmup_cosine' -> 'warmup+cosine'), unknown names as squashed text."""
    if not isinstance(value, str) or not value.strip():
        return None
    s = _squash(value)
    warm = "warmup" in s
    s = s.replace("warmup", "")
    for needle, canon in _SCHEDULERS[1:]:
        if needle in s:
            return f"warmup+{canon}" if warm else canon
    return ("warmup+" + s if s else "warmup") if warm else s


def _number(value: Any) -> float | None:
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


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "on", "off", "1", "0"):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return None


def _precision(value: Any) -> str | None:
    """16, '16-mixed', 'mixed_float16', 'fp16', 'bf16-mixed', 32, 'no' -> fp16 / bf16 / fp32."""
    flag = _flag(value)
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


@dataclass
class Setting:
    value: Scalar
    raw_key: str
    path: str
    is_default: bool = False
    default_source: str | None = None
    line: int | None = None
    #: generic settings: the whole value as compact JSON (what a diff compares; ``value`` may be cut)
    full: str | None = None


#: generic settings kept per side (a model's config.json has ~30, a training_args.json ~110, an mmdet dump ~300)
MAX_GENERIC = 600
#: generic values longer than this are cut (the diff still compares the whole value)
MAX_GENERIC_TEXT = 300


def _generic_value(value: Any) -> tuple[Scalar | None, str]:
    """(value for the fact, whole value as text): numbers, flags and text as they are; lists and
    mappings as compact JSON text (cut at MAX_GENERIC_TEXT characters)."""
    if value is None or isinstance(value, (bool, str)):
        full = json.dumps(value)
        return (value[:MAX_GENERIC_TEXT] if isinstance(value, str) else value), full
    if isinstance(value, (int, float)):
        try:
            f = float(value)
        except OverflowError:  # an integer of hundreds of digits
            bits = int(value).bit_length()
            text = str(value) if bits < 4000 else f"<integer of about {int(bits * 0.30103)} digits>"
            return text[:MAX_GENERIC_TEXT], text
        return (f if math.isfinite(f) else str(f)), repr(f)
    try:
        full = json.dumps(value, separators=(", ", ": "), default=str)
    except (ValueError, RecursionError):
        full = str(type(value).__name__)
    return (full if len(full) <= MAX_GENERIC_TEXT else full[: MAX_GENERIC_TEXT - 1] + "\u2026"), full


@dataclass
class HparamSet:
    """The effective hyper-parameters of one folder."""

    side: str
    values: dict[str, Setting] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    #: settings a later file also gives: (name, its value there, the file) -- the first file's value is kept
    shadowed: list[tuple[str, Any, str]] = field(default_factory=list)
    #: settings outside the vocabulary, under their names as written (the first file read wins)
    generic: dict[str, Setting] = field(default_factory=dict)
    #: generic settings not kept because MAX_GENERIC was reached
    generic_dropped: int = 0
    #: every source that gave a setting (``files``: those that gave one of the vocabulary)
    setting_files: list[str] = field(default_factory=list)

    def put_generic(self, name: str, value: Any, path: str) -> None:
        if name in self.generic:
            return
        if len(self.generic) >= MAX_GENERIC:
            self.generic_dropped += 1
            return
        shown, full = _generic_value(value)
        self.generic[name] = Setting(shown, name, path, full=full)  # type: ignore[arg-type]

    def get(self, name: str) -> Scalar | None:
        s = self.values.get(name)
        return None if s is None else s.value

    def put(self, name: str, value: Scalar | None, raw_key: str, path: str) -> None:
        if value is None:
            return
        if name == "precision" and name in self.values and value == "fp32":
            return  # fp16: false must not hide bf16: true
        if name in self.values and not (name == "precision" and self.values[name].value == "fp32"):
            self.shadowed.append((name, value, path))
            return
        self.values[name] = Setting(value, raw_key, path)


#: canonical names of optimizer settings: under a section of another thing (a loss, an EMA) a key keeps
#: its section and is not the optimizer's (``loss.eps`` is not Adam's epsilon)
_OPTIMIZER_SETTINGS = {
    "learning_rate",
    "adam_epsilon",
    "adam_beta1",
    "adam_beta2",
    "betas",
    "momentum",
    "nesterov",
    "weight_decay",
}
_FOREIGN_SECTION = re.compile(r"loss|criterion|(^|_)ema($|_)|swa|teacher|distil|discriminator|critic|augment")
#: an epsilon inside a part of the model is a layer's (normalisation, attention), not the optimizer's
_MODEL_PART = re.compile(r"model|backbone|head|neck|layer|block|attn|attention|encoder|decoder|embed|norm")
#: sections whose ``warmup_ratio`` is the starting factor of the learning rate (mmcv ``lr_config``), not a share of steps
_WARMUP_FACTOR_SECTIONS = {"lr_config", "param_scheduler"}


def _context_name(key: str, dialect: str | None = None) -> str | None:
    """Canonical name of a dotted key, using its parents where the last part is ambiguous
    (None: outside the vocabulary, kept as a generic setting)."""
    parts = [p.lower() for p in key.split(".")]
    last, parents = parts[-1], parts[:-1]
    if last in _CHOICE_KEYS and parents and parents[-1] in _CHOICE_PARENTS:
        return _CHOICE_PARENTS[parents[-1]]
    context = ".".join(parts)
    if last in ("momentum", "decay") and _BN_HINT.search(context):
        return "batchnorm_momentum" if last == "momentum" else "batchnorm_decay"
    if last in ("eps", "epsilon"):
        if _BN_HINT.search(context):
            return "batchnorm_epsilon"
        if _LN_HINT.search(context):
            return "layernorm_epsilon"
        if any(_MODEL_PART.search(p) for p in parents):
            return None
    if last == "enabled" and parents and parents[-1] in ("fp16", "bf16", "amp"):
        return parents[-1]
    if dialect == "deepspeed" and last == "train_batch_size":
        return "global_batch_size"  # DeepSpeed: micro batch x accumulation x devices
    name = "betas" if last == "betas" else SYNONYMS.get(last)
    if name in _OPTIMIZER_SETTINGS and any(_FOREIGN_SECTION.search(p) for p in parents):
        return None
    if name == "warmup_ratio" and any(p in _WARMUP_FACTOR_SECTIONS for p in parents):
        return None
    return name


def _unchosen_sections(flat: dict[str, Any]) -> tuple[str, ...]:
    """Prefixes of sections named after an optimizer that the file's ``optimizer`` key did not choose.

    The MindSpore model zoo keeps one section per optimizer beside the choice (``optimizer: Lamb`` with
    ``AdamWeightDecay:``, ``Lamb:``, ``Momentum:``): only the chosen section's values are in effect.
    """
    out = []
    for key, value in flat.items():
        parent, _, last = str(key).rpartition(".")
        if last.lower() not in ("optimizer", "optim") or not isinstance(value, str):
            continue
        chosen = _squash(value)
        prefix = f"{parent}." if parent else ""
        sections = {
            k[len(prefix) :].split(".", 1)[0]
            for k in map(str, flat)
            if k.startswith(prefix) and "." in k[len(prefix) :]
        }
        out += [f"{prefix}{sec}." for sec in sections if _squash(sec) in _OPTIMIZERS and _squash(sec) != chosen]
    return tuple(out)


def _collect_file(flat: dict[str, Any], path: str, hp: HparamSet, dialect: str | None = None) -> None:
    pending_bn_momentum: list[tuple[float, str]] = []
    unchosen = _unchosen_sections(flat)
    for key, value in flat.items():
        name = None if unchosen and str(key).startswith(unchosen) else _context_name(str(key), dialect)
        if name is None or name == "num_classes" and isinstance(value, dict):
            hp.put_generic(str(key), value, path)  # id2label: the class count, and the names as a setting
        if name is None:
            continue
        if name == "warmup_steps" and isinstance(value, float) and 0 < value < 1:
            name = "warmup_ratio"  # transformers 5: a warmup_steps below 1 is a share of the training steps
        if name == "framework":
            hp.put(name, canonical_framework(value), key, path)
        elif name == "optimizer":
            hp.put(name, _optimizer(value), key, path)
            if isinstance(value, str) and _squash(value) == "nesterov":
                hp.put("nesterov", True, key, path)
        elif name == "loss":
            hp.put(name, _lookup(_LOSSES, value), key, path)
        elif name in ("weight_init", "conv_init", "linear_init"):
            hp.put(name, _lookup(_INITS, value, strict=True), key, path)
        elif name == "lr_scheduler":
            hp.put(name, _scheduler(value), key, path)
        elif name == "betas":
            if isinstance(value, (list, tuple)) and len(value) == 2:
                hp.put("adam_beta1", _number(value[0]), key, path)
                hp.put("adam_beta2", _number(value[1]), key, path)
        elif name in ("nesterov", "gelu_approximate"):
            hp.put(name, _flag(value), key, path)
        elif name == "hidden_act":
            if isinstance(value, str) and value.lower().startswith("gelu"):
                hp.put("gelu_approximate", value.lower() != "gelu", key, path)  # gelu_new, gelu_pytorch_tanh: tanh
        elif name in ("fp16", "bf16", "amp"):
            flag = _flag(value)
            if flag is not None:
                hp.put("precision", ("bf16" if name == "bf16" else "fp16") if flag else "fp32", key, path)
            elif isinstance(value, str):
                hp.put("precision", _precision(value), key, path)
        elif name in ("precision", "amp_level"):
            hp.put("precision", _precision(value), key, path)
        elif name == "loss_scale":
            if isinstance(value, str) and value.strip().lower() == "dynamic":
                hp.put("loss_scale_mode", "dynamic", key, path)
            else:
                num = _number(value)
                if num == 0 and "fp16" in key.lower():  # DeepSpeed: fp16.loss_scale 0 means dynamic
                    hp.put("loss_scale_mode", "dynamic", key, path)
                elif num is not None:
                    hp.put("loss_scale", num, key, path)
        elif name == "init_loss_scale":
            hp.put("loss_scale", _number(value), key, path)
            hp.put("loss_scale_mode", "dynamic", key, path)
        elif name == "initial_scale_power":
            num = _number(value)
            if num is not None and 0 <= num <= 64:
                hp.put("loss_scale", float(2.0**num), key, path)
        elif name == "loss_scale_mode":
            s = _squash(str(value))
            if "dynamic" in s:
                hp.put(name, "dynamic", key, path)
            elif "fixed" in s or "static" in s:
                hp.put(name, "static", key, path)
        elif name == "dynamic_loss_scale":
            flag = _flag(value)
            if flag is not None:
                hp.put("loss_scale_mode", "dynamic" if flag else "static", key, path)
        elif name == "keep_prob":
            num = _number(value)
            if num is not None and 0 <= num <= 1:
                hp.put("dropout", 1.0 - num, key, path)
        elif name == "batchnorm_momentum":
            num = _number(value)
            if num is not None and 0 <= num <= 1:
                pending_bn_momentum.append((num, key))
        elif name == "num_classes" and isinstance(value, dict):
            if numbered_mapping(value) and len(value) >= 2:
                hp.put(name, float(len(value)), key, path)
        elif name == "world_size" and isinstance(value, (list, tuple)):
            hp.put(name, float(len(value)), key, path)  # gpus: [0, 1, 2, 3]
        else:
            num = _number(value)
            if name in (
                "max_steps",
                "epochs",
                "batch_size",
                "global_batch_size",
                "world_size",
                "gradient_accumulation_steps",
            ) and (num is None or num <= 0):
                continue  # HF max_steps=-1, devices=-1: not set
            hp.put(name, num, key, path)
    # BatchNorm "momentum": its meaning depends on the framework (resolved once the file is read)
    for num, key in pending_bn_momentum:
        fw = hp.get("framework")
        keep = 1.0 - num if fw == "pytorch" or (fw is None and num <= 0.5) else num
        hp.put("batchnorm_decay", keep, key, path)


def _show(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


#: what a Hugging Face trainer_state.json records of the run's settings (the rest is progress and history);
#: its train_batch_size is the per-device batch times the GPUs of one process (TrainingArguments.train_batch_size)
TRAINER_STATE_SETTINGS = ("train_batch_size", "num_train_epochs", "max_steps")


def collect(run: RunRead, out: Extraction) -> HparamSet:
    """Take every hyper-parameter file read of a folder, then the settings printed in its logs, into one
    HparamSet (the first source read wins); record each source in ``out.inputs``."""
    hp = HparamSet(side=run.side)
    for f in sorted(run.hparams, key=lambda f: (file_priority(f.rel.name), len(f.rel.parts), f.rel.as_posix())):
        if f.data is None:
            out.inputs.append(
                InputRecord(path=f.shown, kind="hparams", status="unreadable", why=f.problem, side=run.side)
            )
            continue
        flat = flatten(f.data, keep_numbered=True)
        framework = "pytorch" if f.rel.name.lower() in ("training_args.json", "training_args.bin") else None
        _take(hp, out, [(flat, dict(f.lines))], f.shown, list(f.notes), file_dialect(f.rel.name), framework)
    for f in run.trainer_states:
        if f.data is None:
            continue  # the log readers report an unreadable trainer_state.json
        recorded = {k: f.data[k] for k in TRAINER_STATE_SETTINGS if k in f.data}
        if recorded:
            _take(
                hp,
                out,
                [(recorded, dict(f.lines))],
                f.shown,
                ["the settings Trainer records in it: " + ", ".join(recorded)],
                None,
                "pytorch",
                quiet_if_empty=True,
            )
    for printed in run.log_settings:
        found = printed.found
        if found:
            where = ", ".join(f"{f.form} at line {f.line}" for f in found[:5])
            _take(
                hp,
                out,
                [(flatten(f.values, keep_numbered=True), f.lines) for f in found],
                printed.shown,
                [f"settings printed in the log: {where}"],
                None,
                None,
                quiet_if_empty=True,
            )
    _from_trainer_log(run, hp)
    _keras_default_rate(run, hp)
    if hp.generic_dropped:
        out.checks.append(
            CheckRun(
                stage="hyperparameters",
                inputs=list(hp.files),
                note=f"{len(hp.generic)} settings outside the vocabulary kept, "
                f"{hp.generic_dropped} more not kept (limit {MAX_GENERIC})",
            )
        )
    _derive(hp)
    return hp


def _take(
    hp: HparamSet,
    out: Extraction,
    sources: list[tuple[dict[str, Any], dict[str, int]]],
    shown: str,
    notes: list[str],
    dialect: str | None,
    framework: str | None,
    quiet_if_empty: bool = False,
) -> None:
    """Put the settings of one file (or of the prints of one log) into ``hp``, and record the file."""
    before, shadowed, generic = len(hp.values), len(hp.shadowed), len(hp.generic)
    for flat, lines in sources:
        notes += [
            f"'{k}' is {v} (not a usable number; ignored)"
            for k, v in flat.items()
            if isinstance(v, float) and not math.isfinite(v) and _context_name(str(k), dialect) is not None
        ]
        _collect_file(flat, shown, hp, dialect)
        for s in list(hp.values.values()) + list(hp.generic.values()):  # the settings it gave cite their line
            if s.path == shown and s.line is None:
                s.line = lines.get(s.raw_key)
    if framework is not None and "framework" not in hp.values and len(hp.values) > before:
        hp.put("framework", framework, f"(Hugging Face {shown.rsplit('/', 1)[-1]})", shown)
    differing = [
        f"{n} = {_show(v)} here, {_show(hp.values[n].value)} in {hp.values[n].path}"
        for n, v, _ in hp.shadowed[shadowed:]
        if hp.values[n].value != v
    ]
    if differing:
        notes.append(
            "the first file read wins: "
            + "; ".join(differing[:5])
            + (f" (and {len(differing) - 5} more)" if len(differing) > 5 else "")
        )
    kept = len(hp.generic) - generic
    if len(hp.values) == before and not kept:
        if quiet_if_empty:
            return
        if len(hp.shadowed) > shadowed:
            why = (
                "every setting it holds is already taken from "
                + ", ".join(hp.files or ["another file"])
                + " (read first)"
            )
        else:
            why = "no setting found in it"
        out.inputs.append(
            InputRecord(path=shown, kind="hparams", status="ignored", side=hp.side, why="; ".join([why] + notes))
        )
        return
    if kept:
        notes.append(f"{kept} setting(s) outside the vocabulary kept under their own names")
    if len(hp.values) > before:
        hp.files.append(shown)
    hp.setting_files.append(shown)
    out.inputs.append(
        InputRecord(path=shown, kind="hparams", status="used", side=hp.side, why="; ".join(notes) or None)
    )


#: what a Hugging Face Trainer log implies when no settings file of the run says it: Trainer's default optimizer
#: (TrainingArguments ``optim``: AdamW) and framework
TRAINER_DEFAULT_OPTIMIZER = (
    "adamw",
    "https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments",
)
_TRAINER_FORMATS = {"hf_trainer_print", "hf_trainer_state"}


#: the raw key of a learning rate taken from the rates a Trainer log shows (not stated as a setting)
TRAINER_PEAK_RATE = "the highest learning_rate the Trainer log shows"


def _from_trainer_log(run: RunRead, hp: HparamSet) -> None:
    """A Trainer log (its printed dicts, or trainer_state.json) without the run's settings files: the learning rate
    is at least the highest rate it logged (the scheduler's rate; the configured one at the end of the warm-up),
    the optimizer Trainer's default (marked as a default), the framework PyTorch."""
    logs = [log for log in run.logs if log.read is not None and log.read.formats & _TRAINER_FORMATS]
    if not logs or "learning_rate" in hp.values:
        return
    peak: tuple[float, str] | None = None
    for log in logs:
        for s in log.read.series.values():
            if s.key.metric != "lr" or s.raw_key != "learning_rate":  # Trainer's key (a loop's own 'lr' is not)
                continue
            top = max((v for v in s.buf.value if math.isfinite(v)), default=None)
            if top is not None and (peak is None or top > peak[0]):
                peak = (top, log.shown)
    if peak is None or peak[0] <= 0:
        return
    hp.values["learning_rate"] = Setting(peak[0], TRAINER_PEAK_RATE, peak[1])
    if "optimizer" not in hp.values:
        name, source = TRAINER_DEFAULT_OPTIMIZER
        hp.values["optimizer"] = Setting(name, "Trainer's default optim", peak[1], True, source)
    if "framework" not in hp.values:
        hp.values["framework"] = Setting("pytorch", "(Hugging Face Trainer log)", peak[1])
    if peak[1] not in hp.files:
        hp.files.append(peak[1])


#: the learning rate Keras builds an optimizer with when ``compile(optimizer="name")`` names it
#: (``keras.optimizers.get``: the class with its defaults; https://keras.io/api/optimizers/)
KERAS_DEFAULT_RATES = {
    "sgd": 0.01,
    "adam": 0.001,
    "adamw": 0.001,
    "rmsprop": 0.001,
    "adagrad": 0.001,
    "adadelta": 0.001,
    "adamax": 0.001,
    "nadam": 0.001,
    "ftrl": 0.001,
    "lion": 0.001,
    "adafactor": 0.001,
}
_KERAS_OPTIMIZERS_DOC = "https://keras.io/api/optimizers/"


def _keras_default_rate(run: RunRead, hp: HparamSet) -> None:
    """A Keras ``compile(optimizer='adam')`` printed in a log, and no learning rate stated anywhere: Keras built the
    optimizer with its class default (marked as a default)."""
    if "learning_rate" in hp.values:
        return
    for printed in run.log_settings:
        for found in printed.found:
            name = found.values.get("optimizer") if found.form == "compile call" else None
            if not isinstance(name, str) or "learning_rate" in found.values:
                continue
            rate = KERAS_DEFAULT_RATES.get(name.lower())
            if rate is None:
                continue
            hp.values["learning_rate"] = Setting(
                rate,
                f"Keras' default for compile(optimizer='{name}')",
                printed.shown,
                True,
                _KERAS_OPTIMIZERS_DOC,
                found.line,
            )
            return


def _derive(hp: HparamSet) -> None:
    """Global batch size, and framework defaults for what was not set."""
    where = hp.files[0] if hp.files else ""
    if "global_batch_size" not in hp.values and isinstance(hp.get("batch_size"), float):
        gbs = hp.get("batch_size")
        parts = ["batch_size"]
        for name in ("gradient_accumulation_steps", "world_size"):
            v = hp.get(name)
            if isinstance(v, float) and v > 0:
                gbs *= v
                parts.append(name)
        hp.values["global_batch_size"] = Setting(float(gbs), "derived: " + " x ".join(parts), where)
    fw = hp.get("framework")
    if not isinstance(fw, str):
        return
    opt = hp.get("optimizer")
    for name, default in defaults_for(fw, opt if isinstance(opt, str) else None).items():
        if name not in hp.values:
            hp.values[name] = Setting(default.value, f"default of {fw}", where, True, default.source)


def _facts_for(hp: HparamSet, out: Extraction) -> None:
    for name, s in sorted(hp.values.items()):
        out.facts.append(
            Hyperparameter(
                name=name,
                value=s.value,
                raw_key=s.raw_key,
                is_default=s.is_default,
                default_source=s.default_source,
                side=hp.side,
                source=Source(path=s.path, line=s.line) if s.path else None,
            )
        )
    for name, s in hp.generic.items():
        if s.value is None:
            continue  # null: nothing a rule could match (still compared with the baseline's value)
        out.facts.append(
            SettingFact(
                name=name, value=s.value, side=hp.side, source=Source(path=s.path, line=s.line) if s.path else None
            )
        )
    lr_check = learning_rate_check(hp)
    if lr_check is not None:
        out.facts.append(lr_check)
    ls = loss_scale_check(hp)
    if ls is not None:
        out.facts.append(ls)


_ADAPTIVE = {"adam", "adamw", "rmsprop", "nadam", "radam", "adamax"}


def usual_lr_band(
    optimizer: str, global_batch_size: float | None, momentum: float | None
) -> tuple[str, float, float] | None:
    """(family, low, high) of learning rates seen in practice, or None for optimizers without a band.

    SGD: the linear scaling rule, 0.1 per 256 samples (Goyal et al. 2017,
    https://arxiv.org/abs/1706.02677), band [ref/100, ref*10]; without momentum
    the effective step is 1/(1-momentum) smaller, so the band moves up 10x.
    Adam-like: 1e-3 is the default of every framework (Kingma & Ba 2014,
    https://arxiv.org/abs/1412.6980); fine-tuning goes down to ~1e-6 and rates scale
    roughly with sqrt(batch) (Malladi et al. 2022, https://arxiv.org/abs/2205.10287):
    band [1e-6, 3e-3 * max(1, sqrt(batch/256))].
    """
    if optimizer == "sgd":
        if global_batch_size:
            ref = 0.1 * global_batch_size / 256.0
            low, high = ref / 100.0, ref * 10.0
        else:
            low, high = 1e-4, 1.0
        if momentum is not None and momentum < 0.5:
            low, high = low * 10.0, high * 10.0
        return "sgd", low, high
    if optimizer in _ADAPTIVE:
        scale = max(1.0, math.sqrt(global_batch_size / 256.0)) if global_batch_size else 1.0
        return "adaptive", 1e-6, 3e-3 * scale
    return None


def learning_rate_check(hp: HparamSet) -> LearningRateCheck | None:
    lr, opt = hp.get("learning_rate"), hp.get("optimizer")
    if not isinstance(lr, float) or lr <= 0 or not isinstance(opt, str):
        return None
    gbs = hp.get("global_batch_size")
    gbs = gbs if isinstance(gbs, float) and gbs > 0 else None
    mom = hp.get("momentum")
    band = usual_lr_band(opt, gbs, mom if isinstance(mom, float) else None)
    if band is None:
        return None
    family, low, high = band
    warm = [hp.get(n) for n in ("warmup_steps", "warmup_ratio", "warmup_epochs")]
    stated = [w for w in warm if isinstance(w, float)]
    has_warmup = any(w > 0 for w in stated) if stated else None
    if has_warmup is None and isinstance(hp.get("lr_scheduler"), str) and "warmup" in str(hp.get("lr_scheduler")):
        has_warmup = True
    src, line = hp.values["learning_rate"].path, hp.values["learning_rate"].line
    lr_setting, opt_setting = hp.values["learning_rate"], hp.values["optimizer"]
    return LearningRateCheck(
        learning_rate_origin=_origin(lr_setting),
        optimizer_origin=_origin(opt_setting),
        learning_rate=lr,
        optimizer=opt,
        optimizer_family=family,
        global_batch_size=gbs,
        usual_low=float(low),
        usual_high=float(high),
        times_above_usual=float(lr / high),
        times_below_usual=float(low / lr),
        has_warmup=has_warmup,
        is_large_batch=bool(gbs is not None and gbs >= 1024),
        side=hp.side,
        source=Source(path=src, line=line) if src else None,
    )


def _origin(setting: Setting) -> str | None:
    """How a value the run did not state was arrived at (its ``raw_key`` says it: "Keras' default for ..."),
    for evidence text; None for a stated value."""
    if setting.is_default or setting.raw_key == TRAINER_PEAK_RATE:
        return setting.raw_key
    return None


def loss_scale_check(hp: HparamSet) -> LossScaleCheck | None:
    prec, scale, mode = hp.get("precision"), hp.get("loss_scale"), hp.get("loss_scale_mode")
    if prec is None and scale is None and mode is None:
        return None
    scale_f = scale if isinstance(scale, float) else None
    where = next((hp.values[n].path for n in ("loss_scale", "loss_scale_mode", "precision") if n in hp.values), "")
    return LossScaleCheck(
        precision=prec if isinstance(prec, str) else None,
        loss_scale=scale_f,
        is_dynamic=_is_dynamic(hp, mode, scale_f),
        log2_loss_scale=float(math.log2(scale_f)) if scale_f is not None and scale_f > 0 else None,
        side=hp.side,
        source=Source(path=where) if where else None,
    )


def _is_dynamic(hp: HparamSet, mode: Scalar | None, scale: float | None) -> bool | None:
    """Dynamic scaling as configured; a plain ``loss_scale`` number without a mode is a static scale
    (DeepSpeed, apex ``static_loss_scale``, MindSpore ``FixedLossScaleManager``); None when nothing says."""
    if mode is not None:
        return mode == "dynamic"
    if scale is not None and hp.values["loss_scale"].raw_key.rsplit(".", 1)[-1].lower() in (
        "loss_scale",
        "static_loss_scale",
    ):
        return False
    return None


def _equal(a: Scalar, b: Scalar) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b and type(a) is type(b)
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=0.0)
    return a == b


def _unusual(name: str, a: Scalar | None, b: Scalar | None) -> str:
    rng = TYPICAL_RANGES.get(name)
    if rng is None:
        return "neither"
    odd = [isinstance(v, float) and not (rng[0] <= v <= rng[1]) for v in (a, b)]
    return {(True, True): "both", (True, False): "run", (False, True): "baseline"}.get(tuple(odd), "neither")


def diff(run: HparamSet, base: HparamSet) -> list[HparamDiff]:
    """One HparamDiff per canonical name whose effective values differ."""
    names = sorted(set(run.values) | set(base.values))
    skip = set(NOT_DIFFED)
    if "global_batch_size" in run.values and "global_batch_size" in base.values:
        skip |= {"batch_size", "gradient_accumulation_steps", "world_size"}  # compared through the global batch
    out = []
    for name in names:
        if name in skip:
            continue
        a, b = run.values.get(name), base.values.get(name)
        av, bv = (a.value if a else None), (b.value if b else None)
        if av is not None and bv is not None and _equal(av, bv):
            continue
        if name == "weight_decay_mode" and run.get("weight_decay") == 0.0 and base.get("weight_decay") == 0.0:
            continue  # no decay on either side: how it would be applied does not matter
        ratio = rel = None
        if isinstance(av, float) and isinstance(bv, float) and not isinstance(av, bool):
            ratio = float(av / bv) if bv != 0 else None
            denom = max(abs(av), abs(bv))
            rel = float(abs(av - bv) / denom) if denom > 0 else 0.0
        src = a or b
        involves_default = bool((a and a.is_default) or (b and b.is_default))
        scope = None
        if involves_default:
            scope = "layer" if name in LAYER_DEFAULTS else "optimizer"
        rfw, bfw = run.get("framework"), base.get("framework")
        out.append(
            HparamDiff(
                name=name,
                run_value=av,
                baseline_value=bv,
                run_is_default=bool(a and a.is_default),
                baseline_is_default=bool(b and b.is_default),
                involves_default=involves_default,
                default_scope=scope,
                run_framework=rfw if isinstance(rfw, str) else None,
                baseline_framework=bfw if isinstance(bfw, str) else None,
                run_raw_key=a.raw_key if a else None,
                baseline_raw_key=b.raw_key if b else None,
                ratio=ratio,
                relative_difference=rel,
                unusual_side=_unusual(name, av, bv),
                effect=EFFECTS.get(name),
                source=Source(path=src.path, line=src.line) if src and src.path else None,
            )
        )
    return out


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    view = pair.view(pair.run)
    run = view.settings
    out.merge(view.settings_records)
    _facts_for(run, out)
    base = None
    if pair.baseline is not None:
        bview = pair.view(pair.baseline)
        base = bview.settings
        out.merge(bview.settings_records)
        _facts_for(base, out)
    if run.files:
        inputs = list(run.files) + ([f"baseline:{p}" for p in base.files] if base else [])
        note = None if base is None or not base.files else f"diffed against the baseline ({len(base.files)} file(s))"
        out.checks.append(CheckRun(stage="hyperparameters", inputs=inputs, note=note))
        if base is not None and base.files:
            out.facts.extend(diff(run, base))
    if base is not None and run.setting_files and base.setting_files:
        out.facts.extend(diff_generic(run, base))
    return out


#: generic settings never compared: where things are written, what a run is called, logging,
#: seeds and devices differ between any two runs by design
_NOT_COMPARED = re.compile(
    r"(^|_)(dir|dirs|path|paths|file|files|filename|root|url|uri|token|time|date|timestamp|host|hostname|port|addr|"
    r"address|id|ids|uuid|name|names|project|tags|notes|comment|wandb|mlflow|tensorboard|hub|push|report|log|logs|"
    r"logging|save|output|resume|checkpoint|ckpt|cache|seed|rank|device|devices|gpu|gpus|cuda|workers|verbose|"
    r"verbosity|debug|tqdm|print|interval|freq|frequency|version|commit|overwrite|modelarts)(_|$)"
)


def _compared(name: str, a: Setting | None, b: Setting | None) -> bool:
    parts = [p.lower() for p in name.split(".")]
    if any(p.startswith("_") or _NOT_COMPARED.search(p) for p in parts):
        return False
    for s in (a, b):  # a value that is a path
        if s is not None and isinstance(s.value, str) and ("/" in s.value or "\\" in s.value) and " " not in s.value:
            return False
    return True


def diff_generic(run: HparamSet, base: HparamSet) -> list[SettingDiff]:
    """One SettingDiff per generic setting whose value differs (set on one side only: when that side's
    file is also read on the other side, so that it was added or removed, not just written elsewhere)."""
    out = []
    run_names = {p.rsplit("/", 1)[-1] for p in run.setting_files}
    base_names = {p.rsplit("/", 1)[-1] for p in base.setting_files}
    for name in sorted(set(run.generic) | set(base.generic)):
        a, b = run.generic.get(name), base.generic.get(name)
        if not _compared(name, a, b):
            continue
        if a is not None and b is not None:
            if a.full == b.full or (
                isinstance(a.value, float) and isinstance(b.value, float) and _equal(a.value, b.value)
            ):
                continue
        elif (a or b).path.rsplit("/", 1)[-1] not in (base_names if a is not None else run_names):  # type: ignore[union-attr]
            continue
        out.append(
            SettingDiff(
                name=name,
                run_value=a.value if a else None,
                baseline_value=b.value if b else None,
                run_source=_cite(a),
                baseline_source=_cite(b),
                source=Source(path=(a or b).path, line=(a or b).line),
            )
        )  # type: ignore[union-attr]
    return out


def _cite(s: Setting | None) -> str | None:
    if s is None:
        return None
    return f"{s.path}:{s.line}" if s.line is not None else s.path
