"""The published training recipes of the model families users train most, and how to recognise each family.

A recipe row is what the family's authors (their paper, model card or official config) trained with: the
learning rate at their batch size and the rule they state for other batch sizes, warm-up, schedule, epochs,
weight decay and precision notes. Every row names its references; rules that compare a run with a row cite
them. Only published values are here: where the authors give a range (BERT fine-tuning) the row holds the range.

A family is recognised by names (``FAMILY_NAMES``): a Hugging Face ``model_type``, an architecture class, a
config file name, a model name in a setting or a banner. Names are matched as whole words of the lower-cased
text with ``-``/``_``/``.``/``/`` as word separators; the first family in ``FAMILY_NAMES`` whose name matches
wins (detectors before their backbones: ``faster_rcnn_r50`` is a detector, not a ResNet).
"""

from __future__ import annotations

from dataclasses import dataclass

Regime = str  # "scratch" | "finetune" | "lora" | "pretrain"


@dataclass(frozen=True)
class Recipe:
    """One family's published recipe for one regime (from scratch, fine-tuning, LoRA, pre-training)."""

    family: str
    regime: Regime
    title: str
    optimizer: str
    #: the published learning rate at ``batch`` (for a range: its upper end; ``lr_low`` its lower end)
    learning_rate: float
    #: global batch (samples, or images for detection) the rate was published for
    batch: float
    #: how the authors say to move the rate with the batch: linear | sqrt | none (a range that holds at any of
    #: the batches they tried, or a tool that accumulates to a nominal batch)
    scaling: str
    references: tuple[str, ...]
    lr_low: float | None = None
    #: the config's per-device batch, for a run that states its device count only (detection configs)
    per_device_batch: float | None = None
    warmup: str | None = None
    #: the recipe warms up at any batch (False: only for large batches, as ResNet's Goyal et al. warm-up)
    warmup_always: bool = True
    schedule: str | None = None
    #: epochs the recipe trains for (fine-tuning: the upper end of the published range)
    epochs: float | None = None
    #: the lower end of the published range of epochs, where the authors give one (BERT: 2 to 4)
    epochs_low: float | None = None
    weight_decay: float | None = None
    precision: str | None = None
    #: the family's activations are known to overflow float16 (the precision check names an fp16 run)
    overflows_fp16: bool = False
    #: the usual LoRA alpha / r scale (LoRA rows)
    lora_scale: float | None = None

    def rate_at(self, batch: float | None) -> tuple[float, float | None]:
        """(upper, lower) published rate scaled to ``batch`` by the recipe's rule (unscaled when unknown)."""
        if batch is None or batch <= 0 or self.scaling == "none":
            return self.learning_rate, self.lr_low
        factor = batch / self.batch if self.scaling == "linear" else (batch / self.batch) ** 0.5
        return self.learning_rate * factor, None if self.lr_low is None else self.lr_low * factor


_HE = "https://arxiv.org/abs/1512.03385"
_GOYAL = "https://arxiv.org/abs/1706.02677"
_DEIT = "https://arxiv.org/abs/2012.12877"
_VIT = "https://arxiv.org/abs/2010.11929"
_BERT = "https://arxiv.org/abs/1810.04805"
_ROBERTA = "https://arxiv.org/abs/1907.11692"
_MOSBACH = "https://arxiv.org/abs/2006.04884"
_GPT3 = "https://arxiv.org/abs/2005.14165"
_ALPACA = "https://github.com/tatsu-lab/stanford_alpaca#fine-tuning"
_INSTRUCTGPT = "https://arxiv.org/abs/2203.02155"
_LORA = "https://arxiv.org/abs/2106.09685"
_QLORA = "https://arxiv.org/abs/2305.14314"
_RSLORA = "https://arxiv.org/abs/2312.03732"
_T5 = "https://arxiv.org/abs/1910.10683"
_T5_FP16 = "https://huggingface.co/docs/transformers/model_doc/t5#training"
_D2 = "https://detectron2.readthedocs.io/en/latest/tutorials/getting_started.html#training-evaluation-in-command-line"
_D2_CFG = "https://github.com/facebookresearch/detectron2/blob/main/configs/Base-RCNN-FPN.yaml"
_MMDET = "https://mmdetection.readthedocs.io/en/latest/user_guides/train.html#learning-rate-automatically-scale"
_YOLOV5_TIPS = "https://docs.ultralytics.com/yolov5/tutorials/tips_for_best_training_results/"
_YOLOV5_HYP = "https://github.com/ultralytics/yolov5/blob/master/data/hyps/hyp.scratch-low.yaml"
_ULTRA_CFG = "https://docs.ultralytics.com/usage/cfg/#train-settings"
_UNET = "https://arxiv.org/abs/1505.04597"
_NNUNET = "https://arxiv.org/abs/1809.10486"
_MMSEG = "https://mmsegmentation.readthedocs.io/en/latest/user_guides/4_train_test.html"
_SEQ2SEQ = "https://arxiv.org/abs/1409.3215"
_ZAREMBA = "https://arxiv.org/abs/1409.2329"
_PASCANU = "https://arxiv.org/abs/1211.5063"
_MS_RESNET = "https://github.com/mindspore-ai/models/tree/master/official/cv/ResNet"
_MS_BERT = "https://github.com/mindspore-ai/models/tree/master/official/nlp/Bert"

#: family -> its recipes; the regime a run is in picks the row (``recipe_for``)
RECIPES: tuple[Recipe, ...] = (
    Recipe(
        "resnet",
        "scratch",
        "ResNet on ImageNet (He et al. 2016; linear scaling rule of Goyal et al. 2017)",
        "sgd",
        0.1,
        256,
        "linear",
        (_HE, _GOYAL),
        warmup="5 epochs when the batch is large (Goyal et al.)",
        warmup_always=False,
        schedule="step (x0.1 at epochs 30, 60, 80) or cosine",
        epochs=90,
        weight_decay=1e-4,
    ),
    Recipe(
        "resnet",
        "finetune",
        "ResNet fine-tuning (the ImageNet rate scaled linearly, Goyal et al. 2017)",
        "sgd",
        0.1,
        256,
        "linear",
        (_GOYAL,),
        weight_decay=1e-4,
    ),
    Recipe(
        "vit",
        "scratch",
        "ViT/DeiT from scratch (Touvron et al. 2021: lr 5e-4 x batch/512, warm-up 5 epochs)",
        "adamw",
        5e-4,
        512,
        "linear",
        (_DEIT, _VIT),
        warmup="5 epochs",
        schedule="cosine",
        epochs=300,
        weight_decay=0.05,
    ),
    Recipe(
        "vit",
        "finetune",
        "ViT fine-tuning (Dosovitskiy et al. 2021: SGD momentum 0.9, lr 0.003-0.03 at batch 512)",
        "sgd",
        0.03,
        512,
        "linear",
        (_VIT,),
        lr_low=0.003,
        warmup="500 steps",
        schedule="cosine",
    ),
    Recipe(
        "bert",
        "finetune",
        "BERT/RoBERTa fine-tuning (Devlin et al. 2019, A.3: Adam lr 2e-5 to 5e-5, batch 16 or 32, 2 to 4 epochs)",
        "adamw",
        5e-5,
        32,
        "none",
        (_BERT, _ROBERTA, _MOSBACH),
        lr_low=1e-5,
        warmup="10% of the steps (RoBERTa 6%)",
        schedule="linear decay",
        epochs=4,
        epochs_low=2,
        weight_decay=0.01,
    ),
    Recipe(
        "bert",
        "pretrain",
        "BERT pre-training (Devlin et al. 2019: Adam lr 1e-4, batch 256, 10k warm-up steps)",
        "adamw",
        1e-4,
        256,
        "sqrt",
        (_BERT,),
        warmup="10,000 steps",
        schedule="linear decay",
        weight_decay=0.01,
    ),
    Recipe(
        "gpt",
        "pretrain",
        "GPT-style pre-training (Brown et al. 2020, table 2.1: 6e-4 at 125M parameters down to 6e-5 at 175B)",
        "adamw",
        6e-4,
        256,
        "none",
        (_GPT3,),
        lr_low=6e-5,
        warmup="375M tokens",
        schedule="cosine to 10%",
        weight_decay=0.1,
        precision="bf16 or fp16 with dynamic loss scaling",
    ),
    Recipe(
        "llm",
        "finetune",
        "LLaMA-style full fine-tuning (Stanford Alpaca: lr 2e-5, batch 128, 3 epochs, warm-up 3%)",
        "adamw",
        2e-5,
        128,
        "none",
        (_ALPACA, _INSTRUCTGPT),
        warmup="3% of the steps",
        schedule="cosine",
        epochs=3,
        weight_decay=0.0,
        precision="bf16",
    ),
    Recipe(
        "llm",
        "lora",
        "LoRA/QLoRA fine-tuning (Dettmers et al. 2023: lr 2e-4 for 7B-13B, 1e-4 above; alpha/r about 1 to 2; 1 to 3 "
        "epochs)",
        "adamw",
        2e-4,
        16,
        "none",
        (_QLORA, _LORA, _RSLORA),
        lr_low=1e-4,
        schedule="constant or cosine",
        epochs=3,
        epochs_low=1,
        lora_scale=2.0,
    ),
    Recipe(
        "t5",
        "finetune",
        "T5 fine-tuning (Raffel et al. 2020: Adafactor lr 1e-3 constant; pre-trained in bf16)",
        "adafactor",
        1e-3,
        128,
        "none",
        (_T5, _T5_FP16),
        schedule="constant",
        precision="bf16 or fp32: T5-family activations overflow fp16 (NaN losses)",
        overflows_fp16=True,
    ),
    Recipe(
        "rcnn",
        "scratch",
        "Faster/Mask R-CNN (detectron2 and mmdetection configs: SGD lr 0.02 for 16 images = 8 GPUs x 2, linear rule)",
        "sgd",
        0.02,
        16,
        "linear",
        (_D2, _D2_CFG, _MMDET, _GOYAL),
        per_device_batch=2,
        warmup="1000 iterations (detectron2) / 500 (mmdetection)",
        schedule="step (1x: 90k iterations, 12 epochs)",
        epochs=12,
        weight_decay=1e-4,
    ),
    Recipe(
        "yolo",
        "scratch",
        "YOLOv5/YOLOv8 from scratch (Ultralytics: SGD lr0 0.01, nominal batch 64, 300 epochs from scratch)",
        "sgd",
        0.01,
        64,
        "none",
        (_YOLOV5_TIPS, _YOLOV5_HYP, _ULTRA_CFG),
        warmup="3 epochs",
        schedule="linear to lrf 0.01",
        epochs=300,
        weight_decay=5e-4,
    ),
    Recipe(
        "yolo",
        "finetune",
        "YOLOv5/YOLOv8 from pre-trained weights (Ultralytics defaults: lr0 0.01, 100 epochs)",
        "sgd",
        0.01,
        64,
        "none",
        (_YOLOV5_TIPS, _ULTRA_CFG),
        warmup="3 epochs",
        epochs=100,
        weight_decay=5e-4,
    ),
    Recipe(
        "unet",
        "scratch",
        "U-Net segmentation (nnU-Net: SGD Nesterov momentum 0.99, lr 0.01, poly schedule, batch 2)",
        "sgd",
        0.01,
        2,
        "none",
        (_NNUNET, _UNET, _MMSEG),
        schedule="poly",
        weight_decay=3e-5,
    ),
    Recipe(
        "lstm",
        "scratch",
        "LSTM language models and seq2seq (Zaremba et al. 2014; Sutskever et al. 2014: SGD lr 0.7-1, clip norm 5)",
        "sgd",
        1.0,
        128,
        "none",
        (_ZAREMBA, _SEQ2SEQ, _PASCANU),
        lr_low=0.7,
        schedule="halve after epoch 5",
        epochs=8,
    ),
    Recipe(
        "ms_resnet",
        "scratch",
        "MindSpore model zoo ResNet (resnet50_imagenet2012_config.yaml: Momentum lr_max 0.8 at 8 devices x 256, "
        "linear rule)",
        "momentum",
        0.8,
        2048,
        "linear",
        (_MS_RESNET, _GOYAL),
        per_device_batch=256,
        epochs=90,
        weight_decay=1e-4,
    ),
    Recipe(
        "ms_bert",
        "finetune",
        "MindSpore model zoo BERT fine-tuning (the BERT recipe: lr 2e-5 to 5e-5 at batch 32)",
        "adamw",
        5e-5,
        32,
        "none",
        (_MS_BERT, _BERT),
        lr_low=1e-5,
        epochs=4,
        epochs_low=2,
    ),
)

#: family -> (title, task, names that recognise it); the order is the matching order (see the module's doc)
FAMILY_NAMES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "rcnn",
        "Faster/Mask R-CNN",
        "object detection",
        (
            "faster rcnn",
            "fasterrcnn",
            "mask rcnn",
            "maskrcnn",
            "generalizedrcnn",
            "rcnn",
            "cascade rcnn",
            "retinanet",
            "fcos",
            "ga faster",
            "ga retinanet",
            "rpn",
            "two stage detector",
            "twostagedetector",
        ),
    ),
    (
        "yolo",
        "YOLO (Ultralytics)",
        "object detection",
        (
            "yolov5",
            "yolov5n",
            "yolov5s",
            "yolov5m",
            "yolov5l",
            "yolov5x",
            "yolov8",
            "yolov8n",
            "yolov8s",
            "yolov8m",
            "yolov8l",
            "yolov8x",
            "yolo11",
            "yolo11n",
            "yolo11s",
            "yolo11m",
            "yolov3",
            "yolov4",
            "ultralytics",
        ),
    ),
    ("unet", "U-Net", "segmentation", ("unet", "u net", "nnunet", "unet2d", "unet3d")),
    (
        "t5",
        "T5",
        "text-to-text",
        ("t5", "mt5", "byt5", "umt5", "flan t5", "t5forconditionalgeneration", "mt5forconditionalgeneration"),
    ),
    (
        "bert",
        "BERT/RoBERTa",
        "text classification and tagging",
        (
            "bert",
            "roberta",
            "xlm roberta",
            "distilbert",
            "albert",
            "electra",
            "deberta",
            "deberta v2",
            "camembert",
            "bertforsequenceclassification",
            "bertfortokenclassification",
            "bertforquestionanswering",
            "robertaforsequenceclassification",
            "bertmodel",
            "bertforpretraining",
            "bertformaskedlm",
            "distilbertforsequenceclassification",
            "bert base",
            "bert large",
        ),
    ),
    (
        "llm",
        "LLaMA-style decoder",
        "causal language modelling",
        (
            "llama",
            "llama2",
            "llama3",
            "mistral",
            "mixtral",
            "qwen",
            "qwen2",
            "qwen3",
            "gemma",
            "gemma2",
            "phi",
            "phi3",
            "chatglm",
            "baichuan",
            "internlm",
            "falcon",
            "yi",
            "llamaforcausallm",
            "mistralforcausallm",
            "qwen2forcausallm",
        ),
    ),
    (
        "gpt",
        "GPT-style decoder",
        "language-model pre-training",
        ("gpt2", "gpt", "gpt neox", "gptneox", "gpt j", "gptj", "opt", "bloom", "gpt2lmheadmodel", "gptmodel"),
    ),
    (
        "vit",
        "ViT/DeiT",
        "image classification",
        ("vit", "deit", "vitforimageclassification", "vitmodel", "vision transformer", "visiontransformer", "swin"),
    ),
    (
        "resnet",
        "ResNet",
        "image classification",
        (
            "resnet",
            "resnet18",
            "resnet34",
            "resnet50",
            "resnet101",
            "resnet152",
            "resnet50v2",
            "resnet101v2",
            "resnet152v2",
            "resnext50",
            "wide resnet50",
            "resnetforimageclassification",
        ),
    ),
    ("lstm", "LSTM / seq2seq", "sequence modelling", ("lstm", "bilstm", "seq2seq")),
)

#: (family, tool) -> the family whose recipe applies: the MindSpore model zoo publishes its own rates
TOOL_FAMILIES = {("resnet", "mindspore"): "ms_resnet", ("bert", "mindspore"): "ms_bert"}

#: Hugging Face ``model_type`` values that name a family outright (config.json)
HF_MODEL_TYPES: dict[str, str] = {
    "bert": "bert",
    "roberta": "bert",
    "xlm-roberta": "bert",
    "distilbert": "bert",
    "albert": "bert",
    "electra": "bert",
    "deberta": "bert",
    "deberta-v2": "bert",
    "camembert": "bert",
    "modernbert": "bert",
    "t5": "t5",
    "mt5": "t5",
    "umt5": "t5",
    "byt5": "t5",
    "llama": "llm",
    "mistral": "llm",
    "mixtral": "llm",
    "qwen2": "llm",
    "qwen3": "llm",
    "gemma": "llm",
    "gemma2": "llm",
    "phi": "llm",
    "phi3": "llm",
    "falcon": "llm",
    "chatglm": "llm",
    "baichuan": "llm",
    "internlm": "llm",
    "internlm2": "llm",
    "gpt2": "gpt",
    "gpt_neox": "gpt",
    "gptj": "gpt",
    "opt": "gpt",
    "bloom": "gpt",
    "vit": "vit",
    "deit": "vit",
    "swin": "vit",
    "resnet": "resnet",
}


def family_title(family: str) -> str:
    for name, title, _task, _names in FAMILY_NAMES:
        if name == family:
            return title
    return {"ms_resnet": "ResNet (MindSpore model zoo)", "ms_bert": "BERT (MindSpore model zoo)"}.get(family, family)


def family_task(family: str) -> str | None:
    return next((task for name, _t, task, _n in FAMILY_NAMES if name == family), None)


def recipe_for(family: str, regime: Regime) -> Recipe | None:
    """The family's row for the regime; a fine-tune without its own row falls back to the family's first row, a
    model trained from random weights to the family's pre-training row (a BERT built from a config is trained as
    BERT is pre-trained, not as it is fine-tuned)."""
    rows = [r for r in RECIPES if r.family == family]
    exact = next((r for r in rows if r.regime == regime), None)
    if exact is not None:
        return exact
    if regime == "lora":
        return next((r for r in rows if r.regime == "finetune"), None)
    if regime == "scratch":
        pretrain = next((r for r in rows if r.regime == "pretrain"), None)
        if pretrain is not None:
            return pretrain
    return rows[0] if rows and regime in ("scratch", "unknown") else None


__all__ = ["FAMILY_NAMES", "HF_MODEL_TYPES", "RECIPES", "Recipe", "TOOL_FAMILIES", "family_title", "recipe_for"]
