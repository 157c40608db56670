"""The run's effective settings against its model family's published recipe -> ``recipe_check`` facts.

Runs after every extractor (it reads the ``model_family`` fact, the ``hyperparameter`` facts and the logged
learning rate). For the run side:

- **learning rate** at the run's effective batch: the recipe's rate moved to that batch by the rule its
  authors state (linear, square root, or none where the published range holds at any batch they tried).
  The batch is samples per optimizer step (per-device batch x devices x accumulation); a run that states
  only its device count gets the config's per-device batch (detection configs are written for 2 images per
  GPU; an mmdetection name ``8xb2`` says so), and the fact says it was assumed. The rate is the one stated,
  else the highest the log shows. It is compared only when the run's optimizer is of the recipe's kind
  (momentum SGD or adaptive) or not stated.
- **epochs**: configured (else the highest epoch the train loss is logged at) against the recipe's.
- **LoRA**: the update is scaled by alpha / r, so the step an adapter takes goes as lr x alpha / r (Hu et al.
  2021: tuning alpha is roughly tuning the learning rate); that product is compared with the recipe's.
- **precision**: fp16 for a family whose recipe says it overflows in fp16 (T5).
- **warm-up**: none, for a family whose recipe ramps the rate up at any batch (BERT, ViT, GPT, LLaMA-style
  fine-tuning, detectors, YOLO): every warm-up setting the run states is 0, or, with none stated, the
  logged rate starts at its peak. A ResNet's warm-up is for large batches only; its rule is
  ``large-batch-without-warmup``.
"""

from __future__ import annotations

from advisor.knowledge.setting_keys import WARMUP_KEYS

import math
import re
from collections.abc import Sequence
from typing import Any

from advisor.facts.base import Fact
from advisor.facts.hparams import Hyperparameter, Setting
from advisor.facts.loss_curve import LrSchedule
from advisor.facts.model import ModelSummary
from advisor.facts.recipe import ModelFamily, RecipeCheck
from advisor.knowledge.recipes import TOOL_FAMILIES, Recipe, family_title, recipe_for

_SGD = {"sgd", "momentum", "nesterov", "sgdm", "lars"}
_ADAPTIVE = {
    "adam",
    "adamw",
    "lamb",
    "adafactor",
    "rmsprop",
    "nadam",
    "radam",
    "adamax",
    "adagrad",
    "lion",
    "adamweightdecay",
    "adam_w",
    "adamw_torch",
    "adamw_hf",
    "paged_adamw_32bit",
    "paged_adamw_8bit",
    "adamw_8bit",
    "adamw_torch_fused",
}
#: below this share of trainable parameters (and no LoRA) the run trains a head on a frozen model
PROBING_SHARE = 0.1
#: below this many parameters a model is no published member of any family in the recipe table (the smallest,
#: BERT-tiny, has 4.4 M; YOLOv8n 3.2 M): a toy built from a config, whose rates the published recipes do not fit
MIN_RECIPE_PARAMS = 1_000_000
#: on a toy model the LoRA check still speaks when alpha/r alone is this many times the recipe's
TOY_LORA_SCALE_FACTOR = 8
_MM_NAME = re.compile(r"(\d+)xb(\d+)")


def _kind(optimizer: str) -> str | None:
    o = optimizer.lower().replace("-", "_")
    if o in _SGD or o.startswith("sgd"):
        return "sgd"
    if o in _ADAPTIVE or o.startswith(("adam", "paged_adam")):
        return "adaptive"
    return None


def _num(hp: dict[str, Hyperparameter], name: str) -> float | None:
    f = hp.get(name)
    if f is None or isinstance(f.value, bool) or not isinstance(f.value, (int, float)):
        return None
    v = float(f.value)
    return v if math.isfinite(v) and v > 0 else None


def _where(hp: dict[str, Hyperparameter], name: str) -> str:
    f = hp[name]
    key = f.raw_key or name
    return f"{key} in {f.source.path}" if f.source is not None else key


def _batch(fam: ModelFamily, recipe: Recipe, hp: dict[str, Hyperparameter]) -> tuple[float | None, str | None]:
    if "batch_size" in hp and _num(hp, "batch_size") is not None or "global_batch_size" in hp:
        gbs = _num(hp, "global_batch_size")
        if gbs is not None:
            f = hp["global_batch_size"]
            return gbs, (f.raw_key or "global batch").replace("derived: ", "")
    devices = _num(hp, "world_size")
    if devices is not None and recipe.per_device_batch:
        per = recipe.per_device_batch
        m = _MM_NAME.search(fam.name)
        if m:
            per = float(m.group(2))
        accum = _num(hp, "gradient_accumulation_steps") or 1.0
        return devices * per * accum, (
            f"{devices:g} device(s) ({_where(hp, 'world_size')}) x {per:g} per device (assumed: the config's)"
            + (f" x {accum:g} accumulation" if accum != 1 else "")
        )
    return None, None


def _compare(value: float, high: float, low: float | None = None) -> tuple[float, float, str]:
    """(value / high, (low or high) / value, above | below | within): where a run's value lies against a recipe's."""
    above, below = value / high, (low if low is not None else high) / value
    return above, below, "above" if above > 1.0001 else "below" if below > 1.0001 else "within"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _lr_check(
    fam: ModelFamily, recipe: Recipe, hp: dict[str, Hyperparameter], sched: LrSchedule | None
) -> RecipeCheck | None:
    opt = hp.get("optimizer")
    opt_name = opt.value if opt is not None and isinstance(opt.value, str) else None
    if opt is not None and opt_name is not None and not (opt.is_default and _kind(recipe.optimizer) == "sgd"):
        kind = _kind(opt_name)
        if kind is None or kind != _kind(recipe.optimizer):
            return None
    lr = _num(hp, "learning_rate")
    origin = _where(hp, "learning_rate") if lr is not None else None
    if lr is None and sched is not None and sched.max_value and sched.max_value > 0:
        lr, origin = float(sched.max_value), "the highest learning rate the log shows"
    if lr is None:
        return None
    batch, batch_from = _batch(fam, recipe, hp)
    high, low = recipe.rate_at(batch)
    above, below, direction = _compare(lr, high, low)
    if direction != "above" and "learning_rate" not in hp:
        return None  # the configured peak is at least the highest rate logged, not at most: only "above" holds
    at = (
        f"at {batch:g} samples per step ({recipe.learning_rate:g} at {recipe.batch:g}, {recipe.scaling} rule)"
        if batch is not None and recipe.scaling != "none"
        else f"(published for batch {recipe.batch:g}{'; the run states no batch' if batch is None else ''})"
    )
    rng = f"{_fmt(low)} to {_fmt(high)}" if low is not None else _fmt(high)
    if direction == "above":
        how = f"{above:.3g}x the recipe's {rng}"
    elif direction == "below":
        how = f"1/{below:.3g} of the recipe's {rng}"
    else:
        how = f"within the recipe's {rng}"
    text = f"learning rate {lr:g} ({origin}) is {how} {at} for {fam.title} [{recipe.title}]"
    return _check(
        fam,
        recipe,
        setting="learning_rate",
        value=lr,
        origin=origin,
        recipe_value=high,
        low=low,
        above=above,
        below=below,
        direction=direction,
        batch=batch,
        batch_from=batch_from,
        text=text,
    )


def _check(
    fam: ModelFamily,
    recipe: Recipe,
    *,
    setting: str,
    value: float | None,
    origin: str | None,
    direction: str,
    text: str,
    recipe_value: float | None = None,
    low: float | None = None,
    above: float | None = None,
    below: float | None = None,
    batch: float | None = None,
    batch_from: str | None = None,
    **kw: Any,
) -> RecipeCheck:
    """The ``recipe_check`` fact of one setting, with the recipe row it was read against."""
    return RecipeCheck(
        side=fam.side,
        source=fam.source,
        family=recipe.family,
        title=recipe.title,
        regime=recipe.regime,
        setting=setting,
        run_value=value,
        run_value_from=origin,
        recipe_value=recipe_value,
        recipe_low=low,
        times_above=above,
        times_below=below,
        direction=direction,
        effective_batch=batch,
        batch_from=batch_from,
        recipe_batch=recipe.batch,
        scaling=recipe.scaling,
        recipe_rate=recipe.learning_rate,
        reference=recipe.references[0],
        references=" ".join(recipe.references),
        text=text,
        **kw,
    )


def _epochs_check(fam: ModelFamily, recipe: Recipe, hp: dict[str, Hyperparameter]) -> RecipeCheck | None:
    if recipe.epochs is None:
        return None
    epochs = _num(hp, "epochs")
    origin = _where(hp, "epochs") if epochs is not None else None
    if epochs is None and fam.epochs_logged:
        epochs, origin = fam.epochs_logged, "the epoch the log has reached"
    if epochs is None or (epochs == hp.get("epochs") and hp["epochs"].is_default):
        return None
    above, below, direction = _compare(epochs, recipe.epochs, recipe.epochs_low)
    if direction != "above" and "epochs" not in hp:
        return None  # a log shows how far a run has come, not how far it was set to go
    published = f"{recipe.epochs_low:g} to {recipe.epochs:g}" if recipe.epochs_low is not None else f"{recipe.epochs:g}"
    how = f"{above:.3g}x" if direction == "above" else f"{1 / below:.2g} of" if direction == "below" else "within"
    text = (
        f"{epochs:g} epochs ({origin}) is {how} the {published} of the {fam.title} recipe "
        f"{'from scratch' if recipe.regime == 'scratch' else 'for ' + recipe.regime} [{recipe.title}]"
    )
    return _check(
        fam,
        recipe,
        setting="epochs",
        value=epochs,
        origin=origin,
        recipe_value=recipe.epochs,
        low=recipe.epochs_low,
        above=above,
        below=below,
        direction=direction,
        text=text,
    )


def _lora_check(
    fam: ModelFamily, recipe: Recipe, hp: dict[str, Hyperparameter], sched: LrSchedule | None
) -> RecipeCheck | None:
    if fam.lora_scale is None or recipe.lora_scale is None:
        return None
    lr = _num(hp, "learning_rate") or (float(sched.max_value) if sched is not None and sched.max_value else None)
    if lr is None:
        lr = recipe.learning_rate
        lr_from = f"the recipe's {recipe.learning_rate:g} (the run states none)"
    else:
        lr_from = f"lr {lr:g}"
    step, usual = lr * fam.lora_scale, recipe.learning_rate * recipe.lora_scale
    above, below, direction = _compare(step, usual)
    text = (
        f"LoRA alpha/r = {fam.lora_scale:g} ({fam.lora_from}) with {lr_from}: the adapter's step scales as "
        f"lr x alpha/r = {step:.3g}, {above:.3g}x the recipe's {usual:.3g} (lr {recipe.learning_rate:g} x alpha/r "
        f"{recipe.lora_scale:g}) [{recipe.title}]"
    )
    return _check(
        fam,
        recipe,
        setting="lora_scale",
        value=fam.lora_scale,
        origin=fam.lora_from,
        recipe_value=recipe.lora_scale,
        above=above,
        below=below,
        direction=direction,
        text=text,
    )


#: a logged rate whose first value is at least this share of its peak starts at full rate (no ramp logged)
FULL_START = 0.95
#: points a logged rate needs before its start says anything about a warm-up
WARMUP_POINTS = 5


def _warmup_check(
    fam: ModelFamily, recipe: Recipe, hp: dict[str, Hyperparameter], sched: LrSchedule | None
) -> RecipeCheck | None:
    if not recipe.warmup or not recipe.warmup_always:
        return None
    if isinstance(hp.get("lr_scheduler"), Hyperparameter) and "warmup" in str(hp["lr_scheduler"].value).lower():
        return None
    stated = [n for n in WARMUP_KEYS if n in hp and not hp[n].is_default and isinstance(hp[n].value, (int, float))]
    if any(float(hp[n].value or 0) > 0 for n in stated):
        return None
    ramp_logged = (
        sched is not None
        and sched.points >= WARMUP_POINTS
        and sched.first_value is not None
        and sched.max_value is not None
        and sched.max_value > 0
        and sched.first_value < FULL_START * sched.max_value
    )
    if ramp_logged:
        return None
    if stated:
        origin = ", ".join(f"{_where(hp, n)} = {float(hp[n].value or 0):g}" for n in stated)
    elif sched is not None and sched.points >= WARMUP_POINTS and sched.first_value and sched.max_value:
        origin = f"the logged learning rate starts at its peak ({sched.first_value:.3g})"
    else:
        return None
    text = f"no learning-rate warm-up ({origin}); the {fam.title} recipe warms up over {recipe.warmup} [{recipe.title}]"
    return _check(
        fam,
        recipe,
        setting="warmup",
        value=0.0,
        origin=origin,
        direction="below",
        text=text,
        run_text="none",
        recipe_text=recipe.warmup,
    )


_FP16_KEYS = ("fp16", "amp", "precision", "amp_level")


def _precision_check(fam: ModelFamily, recipe: Recipe, hp: dict[str, Hyperparameter]) -> RecipeCheck | None:
    if not recipe.overflows_fp16:
        return None
    fp16 = None
    for name in _FP16_KEYS:
        f = hp.get(name)
        if f is None or f.is_default:
            continue
        v = f.value
        if name == "fp16" and v is True:
            fp16 = _where(hp, name)
        elif (
            name == "precision"
            and isinstance(v, (str, int, float))
            and str(v).lower().replace("-mixed", "") in ("16", "fp16", "float16", "mixed_float16", "16.0")
        ):
            fp16 = _where(hp, name)
        elif name == "amp_level" and isinstance(v, str) and v.upper() in ("O1", "O2", "O3"):
            fp16 = _where(hp, name)
    if fp16 is None or (hp.get("bf16") is not None and hp["bf16"].value is True):
        return None
    text = f"{fam.title} trained in fp16 ({fp16}); the recipe: {recipe.precision} [{recipe.title}]"
    return _check(
        fam,
        recipe,
        setting="precision",
        value=None,
        origin=fp16,
        direction="differs",
        text=text,
        run_text="fp16",
        recipe_text=recipe.precision,
    )


def _model_size(
    facts: Sequence[Fact], hp: dict[str, Hyperparameter], summary: ModelSummary | None, lora: bool
) -> float | None:
    """The model's parameter count where the run states it: a printed model summary, peft's "all params", or the
    trainable count the Trainer logs when every weight trains (not with LoRA: then it counts the adapters)."""
    if summary is not None and (summary.total_params or summary.config_min_params):
        return float(summary.total_params or summary.config_min_params or 0)  # a config's matrices: nearly all
    stated = next((f for f in facts if isinstance(f, Setting) and f.side == "run" and f.name == "all_params"), None)
    if stated is not None and isinstance(stated.value, (int, float)) and not isinstance(stated.value, bool):
        return float(stated.value)
    return None if lora else _num(hp, "num_parameters")


def recipe_checks(facts: Sequence[Fact]) -> list[Fact]:
    fam = next((f for f in facts if isinstance(f, ModelFamily) and f.side == "run"), None)
    if fam is None:
        return []
    family = TOOL_FAMILIES.get((fam.family, fam.tool or ""), fam.family)
    recipe = recipe_for(family, fam.regime)
    if recipe is None:
        return []
    if family != fam.family:
        fam = fam.model_copy(update={"title": family_title(family)})
    hp = {f.name: f for f in facts if isinstance(f, Hyperparameter) and f.side == "run"}
    sched = next((f for f in facts if isinstance(f, LrSchedule) and f.side == "run"), None)
    summary = next((f for f in facts if isinstance(f, ModelSummary) and f.side == "run"), None)
    size = _model_size(facts, hp, summary, fam.regime == "lora")
    # a toy model built from a config: the published rates, epochs and warm-ups are for the published sizes; an
    # adapter scale far beyond the recipe's is wrong at any size
    toy = size is not None and size < MIN_RECIPE_PARAMS
    lora_scale_off = fam.lora_scale is not None and fam.lora_scale >= TOY_LORA_SCALE_FACTOR * (recipe.lora_scale or 1)
    # a head trained on a frozen model (linear probing) is not the recipe's fine-tune: its rate is its own
    probing = summary is not None and summary.trainable_share is not None and summary.trainable_share < PROBING_SHARE
    out: list[Fact] = []
    lr_applies = (fam.regime != "lora" or fam.lora_scale is None) and not probing and not toy
    for check in (
        _lr_check(fam, recipe, hp, sched) if lr_applies else None,
        None if toy else _epochs_check(fam, recipe, hp),
        _lora_check(fam, recipe, hp, sched) if not toy or lora_scale_off else None,
        _precision_check(fam, recipe, hp),
        None if toy else _warmup_check(fam, recipe, hp, sched),
    ):
        if check is not None:
            out.append(check)
    return out
