"""The canonical settings of one side: every settings file, trainer state and settings print of a run
read into one ``HparamSet`` (``collect``), the first source winning.

Each source is flattened to dotted keys, and every key advisor knows (``advisor.knowledge.settings``) is
mapped onto the canonical vocabulary of ``advisor.facts.hparams`` with its value normalised
(``advisor.knowledge.setting_values``: ``"AdamW"``, ``torch.optim.AdamW``, ``adamw_torch`` -> ``adamw``;
PyTorch's BatchNorm ``momentum=0.1`` -> ``batchnorm_decay=0.9``; ``keep_prob`` -> ``dropout``; ``"1e-3"`` ->
0.001); with the framework known, keys the run did not set take its documented defaults.
``RunView.settings`` calls it once per side; the hyper-parameter extractor (``hparams.py``) turns the set
into facts.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from advisor.extract.code.settings import code_settings
from advisor.extract.extraction import CheckRun, Extraction
from advisor.facts.hparams import (
    Scalar,
)
from advisor.inventory import InputRecord
from advisor.knowledge.setting_values import (
    INITS,
    LOSSES,
    OPTIMIZERS,
    as_flag,
    as_number,
    lookup,
    optimizer_name,
    precision_name,
    pure_half,
    scheduler_name,
    squash,
)
from advisor.knowledge.settings import SYNONYMS
from advisor.knowledge.framework_defaults import (
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
_CHOICE_KEYS = {
    "type",
    "name",
    "_target_",
    "class",
    "class_name",
    "cls",
    "policy",
    "class_path",
}  # class_path: jsonargparse
_BN_HINT = re.compile(r"(^|[._])(bn|batchnorm|batch_norm|norm_layer|norm_cfg|norm)([._]|$)|batchnorm|batch_norm")
_LN_HINT = re.compile(r"(^|[._])(ln|layernorm|layer_norm)([._]|$)|layernorm|layer_norm")

#: names kept as facts but never diffed (they differ by design, or are not settings)
NOT_DIFFED = {"seed", "framework", "num_parameters"}


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
        chosen = squash(value)
        prefix = f"{parent}." if parent else ""
        sections = {
            k[len(prefix) :].split(".", 1)[0]
            for k in map(str, flat)
            if k.startswith(prefix) and "." in k[len(prefix) :]
        }
        out += [f"{prefix}{sec}." for sec in sections if squash(sec) in OPTIMIZERS and squash(sec) != chosen]
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
            hp.put(name, optimizer_name(value), key, path)
            if isinstance(value, str) and squash(value) == "nesterov":
                hp.put("nesterov", True, key, path)
        elif name == "loss":
            hp.put(name, lookup(LOSSES, value), key, path)
        elif name in ("weight_init", "conv_init", "linear_init"):
            hp.put(name, lookup(INITS, value, strict=True), key, path)
        elif name == "lr_scheduler":
            hp.put(name, scheduler_name(value), key, path)
        elif name == "betas":
            if isinstance(value, (list, tuple)) and len(value) == 2:
                hp.put("adam_beta1", as_number(value[0]), key, path)
                hp.put("adam_beta2", as_number(value[1]), key, path)
        elif name in ("nesterov", "gelu_approximate"):
            hp.put(name, as_flag(value), key, path)
        elif name == "hidden_act":
            if isinstance(value, str) and value.lower().startswith("gelu"):
                hp.put("gelu_approximate", value.lower() != "gelu", key, path)  # gelu_new, gelu_pytorch_tanh: tanh
        elif name in ("fp16", "bf16", "amp"):
            flag = as_flag(value)
            if flag is not None:
                hp.put("precision", ("bf16" if name == "bf16" else "fp16") if flag else "fp32", key, path)
            elif isinstance(value, str):
                hp.put("precision", precision_name(value), key, path)
        elif name in ("precision", "amp_level"):
            hp.put("precision", precision_name(value), key, path)
            if pure_half(value, key):
                hp.put("half_weights", True, key, path)
        elif name == "loss_scale":
            if isinstance(value, str) and value.strip().lower() == "dynamic":
                hp.put("loss_scale_mode", "dynamic", key, path)
            else:
                num = as_number(value)
                if num == 0 and "fp16" in key.lower():  # DeepSpeed: fp16.loss_scale 0 means dynamic
                    hp.put("loss_scale_mode", "dynamic", key, path)
                elif num is not None:
                    hp.put("loss_scale", num, key, path)
        elif name == "init_loss_scale":
            hp.put("loss_scale", as_number(value), key, path)
            hp.put("loss_scale_mode", "dynamic", key, path)
        elif name == "initial_scale_power":
            num = as_number(value)
            if num is not None and 0 <= num <= 64:
                hp.put("loss_scale", float(2.0**num), key, path)
        elif name == "loss_scale_mode":
            s = squash(str(value))
            if "dynamic" in s:
                hp.put(name, "dynamic", key, path)
            elif "fixed" in s or "static" in s:
                hp.put(name, "static", key, path)
        elif name == "dynamic_loss_scale":
            flag = as_flag(value)
            if flag is not None:
                hp.put("loss_scale_mode", "dynamic" if flag else "static", key, path)
        elif name == "keep_prob":
            num = as_number(value)
            if num is not None and 0 <= num <= 1:
                hp.put("dropout", 1.0 - num, key, path)
        elif name == "batchnorm_momentum":
            num = as_number(value)
            if num is not None and 0 <= num <= 1:
                pending_bn_momentum.append((num, key))
        elif name == "num_classes" and isinstance(value, dict):
            if numbered_mapping(value) and len(value) >= 2:
                hp.put(name, float(len(value)), key, path)
        elif name == "world_size" and isinstance(value, (list, tuple)):
            hp.put(name, float(len(value)), key, path)  # gpus: [0, 1, 2, 3]
        else:
            num = as_number(value)
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
    for script, stated in code_settings(run.scripts):  # last: a file or the log's print says what really ran
        _take(
            hp,
            out,
            [(flatten(stated.values, keep_numbered=True), stated.lines)],
            script,
            [f"settings stated in the training code (from line {stated.line}), where no file or log print gives them"],
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
    batch = hp.get("batch_size")
    if "global_batch_size" not in hp.values and isinstance(batch, float):
        gbs = batch
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
