"""Every spelling of every setting advisor reads, in one table: the canonical names of
``advisor.facts.hparams`` and the keys that mean them in configs, argument dumps and printed settings.

A key is matched on the last part of its dotted path, lower-cased (``optimizer.lr`` -> ``lr`` ->
``learning_rate``). To teach advisor a new spelling, add it to its row here: the hyper-parameter, model and
chance-level extractors all read this table.
"""

from __future__ import annotations

import re

#: canonical name -> its spellings, space-separated
SPELLINGS: dict[str, str] = {
    "framework": "framework",
    "optimizer": "optimizer optim optimizer_name optimizer_type opt solver_type",
    "learning_rate": "lr learning_rate base_lr max_lr peak_lr init_lr initial_lr initial_learning_rate lr0 "
    "learning_rate_init lr_max",
    "batch_size": "bs batch_size per_device_train_batch_size train_batch_size per_gpu_train_batch_size "
    "micro_batch_size train_micro_batch_size_per_gpu samples_per_gpu batch batchsize",
    "global_batch_size": "global_batch_size total_batch_size ims_per_batch effective_batch_size",
    "gradient_accumulation_steps": "gradient_accumulation_steps grad_accum_steps accumulate_grad_batches "
    "accum_iter gradient_accumulation update_freq accumulation_steps",
    "world_size": "world_size n_gpu num_gpus gpus device_num num_devices nproc_per_node",
    "epochs": "epochs max_epochs num_train_epochs num_epochs n_epochs total_epochs train_epochs epoch_size epoch_num",
    "max_steps": "max_steps total_steps num_train_steps max_iters max_iter train_steps num_steps total_num_steps",
    "warmup_steps": "warmup_steps warmup_iters num_warmup_steps warmup_iter warmup_num_steps",
    "warmup_epochs": "warmup_epochs warmup_epoch",
    "warmup_ratio": "warmup_ratio warmup_proportion warmup_fraction",
    "lr_scheduler": "lr_scheduler_type lr_scheduler scheduler lr_policy lr_schedule lr_decay_style lr_decay_mode "
    "lr_scheduler_name",
    "weight_decay": "weight_decay wd l2 l2_reg weight_decay_rate l2_weight_decay",
    "momentum": "momentum",
    "nesterov": "nesterov use_nesterov",
    "adam_beta1": "adam_beta1 beta1 beta_1 b1",
    "adam_beta2": "adam_beta2 beta2 beta_2 b2",
    "adam_epsilon": "adam_epsilon adam_eps eps epsilon optimizer_epsilon",
    "grad_clip_norm": "max_grad_norm clip_grad_norm gradient_clip_val grad_clip clip_norm global_clipnorm "
    "clipnorm gradient_clipping grad_norm_clip",
    "loss": "loss loss_fn criterion loss_function loss_type loss_name",
    "label_smoothing": "label_smoothing label_smoothing_factor smoothing label_smooth_factor",
    "dropout": "dropout dropout_rate drop_rate hidden_dropout_prob dropout_prob dropout_p p_dropout",
    "keep_prob": "keep_prob keep_probability",
    "batchnorm_momentum": "bn_momentum batchnorm_momentum batch_norm_momentum",
    "batchnorm_decay": "bn_decay batch_norm_decay batchnorm_decay",
    "batchnorm_epsilon": "bn_eps batch_norm_eps batchnorm_eps bn_epsilon batch_norm_epsilon",
    "layernorm_epsilon": "layer_norm_eps layer_norm_epsilon ln_eps layernorm_eps layernorm_epsilon norm_eps",
    "gelu_approximate": "gelu_approximate approximate_gelu",
    "hidden_act": "hidden_act activation_function hidden_activation",
    "weight_init": "weight_init init init_method initializer kernel_initializer init_type weight_init_method "
    "weight_initializer",
    "conv_init": "conv_init",
    "linear_init": "dense_init linear_init fc_init",
    "init_std": "initializer_range init_std init_stddev weight_init_std",
    "seed": "seed random_seed manual_seed",
    "num_parameters": "num_parameters n_params num_params param_count parameter_count",
    "num_train_samples": "num_train_samples train_size num_train_examples n_train dataset_size train_samples "
    "num_examples",
    "num_classes": "num_classes n_classes num_labels nb_classes number_of_classes n_class nc class_num num_class "
    "id2label",
    "target_accuracy": "target_accuracy target_acc expected_accuracy reference_accuracy benchmark_accuracy "
    "published_accuracy paper_accuracy target_top1",
    "target_loss": "target_loss expected_loss reference_loss benchmark_loss",
    "fp16": "fp16 use_fp16 half",
    "bf16": "bf16 use_bf16",
    "amp": "amp use_amp mixed_precision enable_amp",
    "precision": "precision dtype_policy mixed_precision_policy",
    "amp_level": "amp_level opt_level fp16_opt_level",
    "loss_scale": "loss_scale static_loss_scale",
    "init_loss_scale": "init_loss_scale initial_scale init_scale loss_scale_value initial_loss_scale",
    "initial_scale_power": "initial_scale_power",
    "loss_scale_mode": "loss_scale_mode loss_scale_manager loss_scale_type loss_scaler loss_scale_policy",
    "dynamic_loss_scale": "dynamic_loss_scale use_dynamic_loss_scale",
}

#: last part of a dotted key (lower-case) -> canonical name
SYNONYMS: dict[str, str] = {key: canon for canon, keys in SPELLINGS.items() for key in keys.split()}

#: keys whose integer value is a class count: every spelling of num_classes but ``id2label`` (a mapping,
#: counted by the hyper-parameter extractor), and Darknet's ``classes=80`` (too ambiguous for the settings
#: table: elsewhere ``classes`` is the list of names)
CLASS_COUNT_KEYS = frozenset(SPELLINGS["num_classes"].split()) - {"id2label"} | {"classes"}


def spellings(canon: str) -> frozenset[str]:
    """The keys that mean the canonical setting ``canon``."""
    return frozenset(SPELLINGS[canon].split())


#: words of a setting's last key part that name a step of the input pipeline (cropping, resizing, flips and
#: rotations, colour jitter, normalisation mean/std, mixing augmentations; Ultralytics' hsv_h, degrees, mosaic)
DATA_PIPELINE_WORDS = (
    "crop resize rotate rotation flip fliplr flipud mirror mean std normalize normalise normalization "
    "normalisation augment augmentation aug jitter mixup cutmix cutout erasing autoaugment randaugment "
    "colorjitter brightness contrast saturation hue interpolation img_size image_size input_size imgsz "
    "mosaic degrees translate shear perspective hsv_h hsv_s hsv_v scale_range min_scale max_scale"
).split()
_PIPELINE = re.compile(
    r"(?:^|_)(" + "|".join(sorted(map(re.escape, DATA_PIPELINE_WORDS), key=len, reverse=True)) + r")(?:$|_)"
)


def is_data_pipeline_setting(key: str) -> bool:
    """A setting of the input pipeline (``data.crop_size``, ``train.mean``, ``hsv_h``); a weight
    initialiser's ``init_std`` or an optimiser's ``running_mean`` is not one."""
    last = key.rsplit(".", 1)[-1].lower()
    if any(word in last for word in ("init", "running", "momentum", "loss")):
        return False
    return _PIPELINE.search(last) is not None or any(
        part.lower() in ("transform", "transforms", "augment", "augmentation", "pipeline", "preprocess")
        for part in key.split(".")[:-1]
    )
