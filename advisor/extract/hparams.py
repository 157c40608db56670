"""Hyper-parameter files -> ``hyperparameter``, ``hparam_diff``, ``learning_rate_check``, ``loss_scale_check`` facts.

The settings themselves are read into a ``HparamSet`` by ``hparam_set.collect``, once per side
(``RunView.settings``); this module turns them into facts:

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

import math
import re

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
from advisor.knowledge.settings import is_data_pipeline_setting
from advisor.knowledge.framework_defaults import (
    EFFECTS,
    read_by,
    LAYER_DEFAULTS,
    TYPICAL_RANGES,
)


from advisor.extract.view.settings import NOT_DIFFED, TRAINER_PEAK_RATE, HparamSet, Setting


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
        if not (read_by(name, run.get("optimizer")) or read_by(name, base.get("optimizer"))):
            continue  # neither side's optimizer reads it (momentum given to Adam): it changes nothing
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


#: the layers each layer default applies to, as a model description names their types (or activations)
LAYER_OF_DEFAULT: dict[str, re.Pattern[str]] = {
    "batchnorm_decay": re.compile(r"batch_?norm", re.I),
    "batchnorm_epsilon": re.compile(r"batch_?norm", re.I),
    "layernorm_epsilon": re.compile(r"layer_?norm", re.I),
    "gelu_approximate": re.compile(r"gelu", re.I),
    "linear_init": re.compile(r"linear|dense|matmul", re.I),
    "conv_init": re.compile(r"conv", re.I),
}


def _layers_absent(pair: RunPair) -> set[str]:
    """The layer defaults whose layers neither side's model description holds (empty when no side describes its
    layers): a default of a layer the model does not have is no difference between the runs."""
    words: list[str] = []
    for side in pair.sides():
        found, _ = pair.view(side).model
        for desc in found.descriptions:
            words += [f"{layer.layer_type} {layer.activation or ''}" for layer in desc.layers]
    if not words:
        return set()
    text = " ".join(words)
    return {name for name, pattern in LAYER_OF_DEFAULT.items() if not pattern.search(text)}


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
            absent = _layers_absent(pair)
            out.facts.extend(d for d in diff(run, base) if not (d.default_scope == "layer" and d.name in absent))
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
                is_data_pipeline=is_data_pipeline_setting(name),
                source=Source(path=(a or b).path, line=(a or b).line),
            )
        )  # type: ignore[union-attr]
    return out


def _cite(s: Setting | None) -> str | None:
    if s is None:
        return None
    return f"{s.path}:{s.line}" if s.line is not None else s.path
