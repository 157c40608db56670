"""Facts about which model family a run trains and how its settings compare with the family's published recipe.

``model_family``: what was recognised (family, regime, tool) and from what (a config.json ``model_type``, a
config file name, a banner). ``recipe_check``: one of the run's effective settings (learning rate at its
effective batch, epochs, LoRA scale, precision) against the family's recipe row of advisor/knowledge/recipes.py,
with the factor and direction, and the row's references.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from advisor.facts.base import Fact


class ModelFamily(Fact):
    """The model family a run trains, recognised from its files."""

    kind: Literal["model_family"] = "model_family"
    family: str = Field(description="family id of the recipe table: resnet, vit, bert, gpt, llm, t5, rcnn, yolo, ...")
    title: str = Field(description="the family's name as a reader knows it (Faster/Mask R-CNN, BERT/RoBERTa)")
    task: str | None = Field(default=None, description="what the family does (object detection, ...)")
    regime: Literal["scratch", "finetune", "lora", "pretrain", "unknown"] = Field(
        default="unknown", description="from scratch, fine-tuning pre-trained weights, LoRA adapters, pre-training"
    )
    regime_from: str | None = Field(default=None, description="what says the regime (weights: '', adapter_config.json)")
    tool: str | None = Field(
        default=None,
        description="the training tool recognised: transformers, peft, keras, lightning, ultralytics, mmdetection, "
        "detectron2, mindspore, timm (None: not recognised)",
    )
    name: str = Field(description="the name that was recognised, as written (ga_faster_r50_fpn_1x_coco.py, bert)")
    recognised_from: str = Field(description="where: the key or banner it was read from (config.json model_type)")
    lora_scale: float | None = Field(default=None, description="LoRA alpha / r (the factor on the adapter's update)")
    lora_from: str | None = Field(default=None, description="where alpha and r were read (adapter_config.json)")
    epochs_logged: float | None = Field(
        default=None, description="the highest epoch a training-loss point of the logs carries (a Trainer's 'epoch')"
    )
    doc = "the model family a run trains (recognised from a config, a file name, a banner), its regime and tool"


class RecipeCheck(Fact):
    """One effective setting of the run against its family's published recipe."""

    kind: Literal["recipe_check"] = "recipe_check"
    family: str = Field(description="family id of the recipe row (ms_resnet: the MindSpore model zoo's row)")
    title: str = Field(description="the recipe row's title, naming its source")
    regime: str = Field(description="the row's regime: scratch, finetune, lora, pretrain")
    setting: Literal["learning_rate", "epochs", "lora_scale", "precision", "warmup"] = Field(
        description="which setting is compared"
    )
    run_value: float | None = Field(default=None, description="the run's effective value (numbers)")
    run_text: str | None = Field(default=None, description="the run's value as text (precision: fp16)")
    run_value_from: str | None = Field(default=None, description="where the run's value comes from (key or log)")
    recipe_value: float | None = Field(
        default=None, description="the recipe's value, scaled to the run's effective batch for a learning rate"
    )
    recipe_low: float | None = Field(default=None, description="lower end of a published range (scaled as above)")
    recipe_text: str | None = Field(default=None, description="the recipe's value as text (precision: bf16)")
    times_above: float | None = Field(default=None, description="run_value / recipe_value (above 1: above)")
    times_below: float | None = Field(
        default=None, description="(recipe_low or recipe_value) / run_value (above 1: below the recipe)"
    )
    direction: Literal["above", "below", "within", "differs"] = Field(description="where the run's value lies")
    effective_batch: float | None = Field(default=None, description="the run's samples per optimizer step")
    batch_from: str | None = Field(default=None, description="how the effective batch was found (or assumed)")
    recipe_batch: float | None = Field(default=None, description="the batch the recipe's rate was published for")
    scaling: str | None = Field(default=None, description="the recipe's rule for another batch: linear, sqrt, none")
    recipe_rate: float | None = Field(default=None, description="the recipe's rate at its own batch (unscaled)")
    reference: str = Field(description="the recipe row's first reference")
    references: str = Field(description="all the row's references, space-separated")
    text: str = Field(description="one sentence: the setting, the run's value, the recipe's, by how much")
    doc = "a setting of the run against its model family's published recipe (scaled to the run's batch)"


class TrainingTool(Fact):
    """The tool that made the run (its logs' format or banner): what a hint to record more should be written for."""

    kind: Literal["training_tool"] = "training_tool"
    tool: str = Field(
        description="transformers, peft, lightning, keras, mindspore, ultralytics, mmdetection, detectron2, timm, "
        "megatron"
    )
    recognised_from: str = Field(description="the file and what in it says so")
    doc = "the tool that made the run, from its logs' format or banner"
