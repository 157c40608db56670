"""Which model family a run trains, its regime and its tool -> one ``model_family`` fact per side.

Read from what the folder already holds, strongest first:

1. a Hugging Face ``config.json`` (``model_type``, ``architectures``) and a peft ``adapter_config.json``
   (``base_model_name_or_path``, ``r``, ``lora_alpha``: a LoRA run);
2. the settings that name a model (``model``, ``arch``, ``net_name``, ``cfg``, ``config``, ``backbone``,
   ``META_ARCHITECTURE``, an mmdetection ``model.type``) in settings files and in settings printed in logs,
   and the settings file's own name (the MindSpore model zoo's ``resnet50_imagenet2012_config.yaml``);
3. what logs print: a Keras ``Model: "resnet50"`` summary, the top-level class of a printed module tree or
   of a Lightning summary table, an Ultralytics banner or results header, an mmdetection/detectron2 logger
   name, a peft ``trainable params`` line.

Names are matched with advisor/knowledge/recipes.py (``FAMILY_NAMES``, ``HF_MODEL_TYPES``). The regime comes
from what the run says of its start: ``weights: ''``/``pretrained: false``/a model built from a ``.yaml`` is
from scratch; a ``.pt`` checkpoint, ``pretrained: true`` or ``weights: imagenet`` is a fine-tune; LoRA settings
or an adapter config make it LoRA; a BERT ``*ForPreTraining``/``*ForMaskedLM`` is pre-training.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from advisor.extract.base import Extraction, RunPair
from advisor.facts.base import Source
from advisor.facts.recipe import ModelFamily, TrainingTool
from advisor.knowledge.setting_keys import LORA_KEYS, MODEL_KEYS, PRETRAINED_KEYS
from advisor.knowledge.recipes import FAMILY_NAMES, HF_MODEL_TYPES, family_task, family_title
from advisor.extract.view import FlatSettings
from advisor.read.run import RunRead

#: the text of a log searched for banners (they are printed at the start)
BANNER_BYTES = 200_000

_KERAS_MODEL = re.compile(r'^Model: "([^"]+)"', re.M)
_TOP_CLASS = re.compile(r"^([A-Z][A-Za-z0-9_]+)\($", re.M)
_INNER_CLASS = re.compile(r"^\s*\((?:model|base_model|module|net|backbone)\): ([A-Z][A-Za-z0-9_]+)\($", re.M)
_LIGHTNING_ROW = re.compile(r"^\s*\|?\s*0\s*\|\s*[\w.]+\s*\|\s*([A-Za-z][\w.]*)\s*\|", re.M)
_MMDET_TYPE = re.compile(r"model\s*=\s*dict\(\s*type\s*=\s*'(\w+)'")
_META_ARCH = re.compile(r"META_ARCHITECTURE:\s*['\"]?(\w+)")
#: what transformers' from_pretrained logs at INFO level when it loads a checkpoint's weights (modeling_utils)
_LOADED_WEIGHTS = re.compile(r"loading weights file (\S+)")
_PEFT_LINE = re.compile(r"trainable params: ([\d,]+) \|\| all params: ([\d,]+)")
#: banners that name a tool (and, for Ultralytics, the family)
_TOOLS = (
    (
        re.compile(
            r"Ultralytics (?:YOLOv?\d+|\d+\.\d+)|YOLOv\d+\w* summary|\bGIoU\s+obj\s+cls\b|box_loss\s+(?:obj_loss\s+)?cls_loss"
        ),
        "ultralytics",
    ),
    (re.compile(r" - mmdet - |mmengine - INFO|mmdet\.|mmdetection"), "mmdetection"),
    (re.compile(r"\bd2\.(?:engine|utils|data)|detectron2"), "detectron2"),
)
#: log formats -> the tool that writes them, most specific first: a Lightning or MindSpore run may also print a
#: dict line that reads like a Trainer log ("hf_trainer_print"), so that one decides last
_FORMAT_TOOLS = {
    "lightning": "lightning",
    "keras": "keras",
    "keras_csvlogger": "keras",
    "mindspore": "mindspore",
    "ultralytics": "ultralytics",
    "yolo": "ultralytics",
    "megatron": "megatron",
    "timm": "timm",
    "hf_trainer_state": "transformers",
    "hf_trainer_print": "transformers",
}
_SPLIT = re.compile(r"[\s\-_./\\:]+")
_CFG_SUFFIX = re.compile(r"\.(?:ya?ml|py|json|cfg|pt|pth|ckpt|safetensors|bin)$", re.I)


def _words(text: str) -> list[str]:
    return [w for w in _SPLIT.split(text.lower()) if w]


#: the names of each family as word tuples (a name of several words matches consecutive words)
_NAMES = tuple((family, tuple(tuple(_words(n)) for n in names)) for family, _t, _k, names in FAMILY_NAMES)


def family_of_name(text: str) -> tuple[str, str] | None:
    """(family, the name matched) for a model or config name (``ga_faster_r50_fpn_1x_coco.py``), else None."""
    text = str(text).replace("\\", "/")
    joined = _words(_CFG_SUFFIX.sub("", PurePosixPath(text).name if "/" in text else text))
    if not joined:
        return None
    for family, names in _NAMES:
        for name in names:
            n = len(name)
            for i in range(len(joined) - n + 1):
                if tuple(joined[i : i + n]) == name:
                    return family, " ".join(name)
            glued = "".join(name)
            if n > 1 and glued in joined:
                return family, glued
    return None


@dataclass
class _Hit:
    family: str
    name: str
    where: str
    path: str | None
    line: int | None = None
    rank: int = 9  # lower: stronger evidence


def _says_lora(key: str, last: str, value: object) -> bool:
    """Whether a setting says the run trains LoRA adapters: a LoRA key whose value is not off (``use_lora: false``,
    ``lora_r: 0`` and ``None`` say it does not)."""
    if not (last in LORA_KEYS or key.lower() in LORA_KEYS or key.lower().startswith("lora_parameters.")):
        return False
    if value is None or value is False or (isinstance(value, (int, float)) and value == 0):
        return False
    return not (isinstance(value, str) and value.strip().lower() in ("false", "no", "off", "0", "none", ""))


def _last(key: str) -> str:
    return key.rsplit(".", 1)[-1].lower()


def _hits(run: RunRead, settings: list[FlatSettings]) -> tuple[list[_Hit], dict[str, Any]]:
    hits: list[_Hit] = []
    flags: dict[str, Any] = {}
    for m in run.hparams:
        data = m.data or {}
        if PurePosixPath(m.shown).name.lower() == "config.json" and isinstance(data.get("model_type"), str):
            fam = HF_MODEL_TYPES.get(data["model_type"].lower())
            if fam:
                hits.append(
                    _Hit(fam, data["model_type"], f"{m.shown} model_type", m.shown, m.lines.get("model_type"), 0)
                )
            arch = data.get("architectures")
            if isinstance(arch, list) and arch and isinstance(arch[0], str):
                flags.setdefault("architecture", arch[0])
        name_hit = (
            family_of_name(PurePosixPath(m.shown).name)
            if m.shown.lower().endswith(("_config.yaml", "_config.yml"))
            else None
        )
        if name_hit:
            hits.append(
                _Hit(name_hit[0], PurePosixPath(m.shown).name, f"the settings file's name {m.shown}", m.shown, None, 2)
            )
    for mj in run.model_jsons:
        if mj.rel.name.lower() == "adapter_config.json" and isinstance(mj.obj, dict):
            obj = mj.obj
            flags["lora_from"] = str(mj.rel)
            flags["peft_type"] = str(obj.get("peft_type") or "")
            r, alpha = obj.get("r"), obj.get("lora_alpha")
            if isinstance(r, (int, float)) and isinstance(alpha, (int, float)) and r > 0:
                flags["lora_scale"] = float(alpha) / (math.sqrt(r) if obj.get("use_rslora") else float(r))
            base = obj.get("base_model_name_or_path")
            got = family_of_name(base) if isinstance(base, str) and base else None
            if got:
                hits.append(_Hit(got[0], str(base), f"{mj.rel} base_model_name_or_path", str(mj.rel), None, 0))
    for src in settings:
        shown, flat, lines = src.shown, src.values, src.lines
        for key, value in flat.items():
            last = _last(key)
            if last in MODEL_KEYS or (last == "type" and key.lower() in ("model.type", "model.backbone.type")):
                if isinstance(value, str) and value.strip():
                    got = family_of_name(value)
                    if got:
                        rank = 1 if last != "backbone" and key.lower() != "model.backbone.type" else 3
                        hits.append(_Hit(got[0], value, f"{shown} {key}", shown, lines.get(key), rank))
                    if last in ("cfg", "model", "config") and value.lower().endswith((".yaml", ".yml")):
                        flags.setdefault("yaml_model", value)
                    if last == "model" and value.lower().endswith((".pt", ".pth")):
                        flags.setdefault("pretrained", (True, f"{shown} {key}: {value}"))
            if last in PRETRAINED_KEYS and "pretrained" not in flags:
                flags.update(_pretrained_flag(last, value, f"{shown} {key}"))
            if _says_lora(key, last, value):
                flags.setdefault("lora_setting", f"{shown} {key}")
                if last in ("lora_alpha",) and isinstance(value, (int, float)):
                    flags.setdefault("lora_alpha", float(value))
                if last in ("lora_r", "lora_rank") and isinstance(value, (int, float)):
                    flags.setdefault("lora_r", float(value))
    if "lora_scale" not in flags and flags.get("lora_alpha") and flags.get("lora_r"):
        flags["lora_scale"] = flags["lora_alpha"] / flags["lora_r"]
        flags.setdefault("lora_from", flags.get("lora_setting"))
    for text in run.model_texts:
        head = text.text[:BANNER_BYTES]
        shown = run.shown(text.rel)
        for pattern, where, rank in (
            (_META_ARCH, "META_ARCHITECTURE", 1),
            (_MMDET_TYPE, "the printed config's model type", 1),
            (_KERAS_MODEL, "the Keras summary's model name", 2),
            (_INNER_CLASS, "the printed model's class", 2),
            (_TOP_CLASS, "the printed model's class", 3),
            (_LIGHTNING_ROW, "Lightning's model summary", 3),
        ):
            for found in pattern.finditer(head):
                got = family_of_name(found.group(1))
                if got:
                    line = head.count("\n", 0, found.start()) + 1
                    hits.append(_Hit(got[0], found.group(1), f"{shown}: {where}", shown, line, rank))
                    break
        loaded = _LOADED_WEIGHTS.search(head)
        if loaded and "pretrained" not in flags:  # from_pretrained: the run starts from a checkpoint's weights
            flags["pretrained"] = (True, f"{shown}: loading weights file {loaded.group(1).rsplit('/', 1)[-1]}")
        for pattern, tool in _TOOLS:
            banner = pattern.search(head)
            if banner:
                flags.setdefault("tool", (tool, shown))
                if tool == "ultralytics":
                    banner_text = banner.group(0).strip()
                    named = "yolo" in banner_text.lower() or "ultralytics" in banner_text.lower()  # not a header
                    hits.append(
                        _Hit(
                            "yolo",
                            banner_text if named else "YOLO",
                            f"{shown}: an Ultralytics {'banner' if named else 'results header'}",
                            shown,
                            head.count("\n", 0, banner.start()) + 1,
                            4,
                        )
                    )
        if _PEFT_LINE.search(head):
            flags.setdefault("lora_setting", f"{shown}: peft's trainable-params line")
    for header in run.csv_headers:
        if "train/box_loss" in header.text or "train/giou_loss" in header.text:
            hits.append(
                _Hit(
                    "yolo",
                    "results.csv",
                    f"{run.shown(header.rel)}: Ultralytics results columns",
                    run.shown(header.rel),
                    1,
                    4,
                )
            )
            flags.setdefault("tool", ("ultralytics", run.shown(header.rel)))
    return hits, flags


def _pretrained_flag(last: str, value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"pretrained": (value, f"{where}: {str(value).lower()}")}
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null", "false")):
        return (
            {"pretrained": (False, f"{where}: {value!r}")}
            if last in ("pretrained", "weights", "pretrained_weights")
            else {}
        )
    if isinstance(value, str):
        v = value.strip().lower()
        if (
            v in ("true", "imagenet", "default")
            or v.endswith((".pt", ".pth", ".ckpt", ".safetensors", ".bin"))
            or "/" in v
        ):
            return {"pretrained": (True, f"{where}: {value}")}
    return {}


def _tool(run: RunRead, flags: dict[str, Any]) -> tuple[str, str] | None:
    """(the tool that made the run, what says so)."""
    if "tool" in flags:
        tool, where = flags["tool"]
        return tool, f"{where} (its banner)"
    if flags.get("lora_from") or flags.get("lora_setting"):
        return "peft", str(flags.get("lora_from") or flags.get("lora_setting"))
    formats: dict[str, str] = {}
    for log in run.logs:
        if log.read is not None:
            for fmt in log.read.formats:
                formats.setdefault(fmt, run.shown(log.rel))
    for fmt, tool in _FORMAT_TOOLS.items():
        if fmt in formats:
            return tool, f"{formats[fmt]} (its log format)"
    return None


def _regime(family: str, flags: dict[str, Any]) -> tuple[str, str | None]:
    if flags.get("lora_from") or flags.get("lora_setting"):
        return "lora", flags.get("lora_from") or flags.get("lora_setting")
    arch = str(flags.get("architecture") or "")
    if family in ("bert",) and re.search(r"ForPreTraining|ForMaskedLM", arch):
        return "pretrain", f"the architecture {arch}"
    if "pretrained" in flags:
        yes, where = flags["pretrained"]
        return ("finetune" if yes else "scratch"), where
    if flags.get("yaml_model") and family == "yolo":
        return "scratch", f"a model built from {flags['yaml_model']}"
    if family in ("bert", "llm", "t5"):
        return "finetune", f"the {family_title(family)} family is fine-tuned from published weights"
    if family == "gpt":
        return "pretrain", None
    return "unknown", None


def _epochs_logged(run: RunRead) -> float | None:
    """The epochs the training log shows done: the highest epoch logged with a train loss, +1 where the log
    numbers whole epochs from 0 (Keras' CSVLogger and Lightning's metrics.csv write the epoch's index: a file of
    epochs 0..9 holds ten; the console's 'Epoch 10/10' and the Trainer's fractional epochs count what is done)."""
    top = -math.inf
    for log in run.logs:
        if log.read is None:
            continue
        for s in log.read.series.values():
            if s.key.split != "train" or s.key.metric != "loss":
                continue
            ep = [e for e in s.buf.epoch if math.isfinite(e)]
            if ep:
                zero_based = min(ep) == 0 and all(float(e).is_integer() for e in ep)
                top = max(top, max(ep) + (1.0 if zero_based else 0.0))
    return top if math.isfinite(top) and top > 0 else None


def family_fact(run: RunRead, hits: list[_Hit], flags: dict[str, Any]) -> ModelFamily | None:
    hits = list(hits)
    if not hits and (flags.get("lora_from") or flags.get("lora_setting")):
        # LoRA settings and no model name: LoRA is trained on large decoders far more than on anything else
        where = flags.get("lora_from") or flags.get("lora_setting")
        hits.append(_Hit("llm", "LoRA", f"{where} (LoRA settings; no model named: taken as a decoder LLM)", None))
    if not hits:
        return None
    best = min(hits, key=lambda h: h.rank)
    made_by = _tool(run, flags)
    tool = made_by[0] if made_by else None
    regime, regime_from = _regime(best.family, flags)
    return ModelFamily(
        side=run.side,
        source=Source(path=best.path, line=best.line) if best.path else None,
        family=best.family,
        title=family_title(best.family),
        task=family_task(best.family),
        regime=regime,  # type: ignore[arg-type]
        regime_from=regime_from,
        tool=tool,
        name=str(best.name)[:200],
        recognised_from=best.where,
        lora_scale=flags.get("lora_scale"),
        lora_from=flags.get("lora_from") if flags.get("lora_scale") is not None else None,
        epochs_logged=_epochs_logged(run),
    )


def tool_fact(run: RunRead, flags: dict[str, Any]) -> TrainingTool | None:
    made_by = _tool(run, flags)
    if made_by is None:
        return None
    return TrainingTool(side=run.side, tool=made_by[0], recognised_from=made_by[1])


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for side in pair.sides():
        hits, flags = _hits(side, pair.view(side).flat_settings)
        for fact in (family_fact(side, hits, flags), tool_fact(side, flags)):
            if fact is not None:
                out.facts.append(fact)
    return out
