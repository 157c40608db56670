"""Which settings keys say what, in one place: the last part of a flattened key (``model.backbone.name`` ->
``name``) that names the model, the data set, the task, the metrics, pre-trained weights, LoRA, warm-up. The
canonical hyper-parameters and their spellings are ``settings.py``; these keys are read for what they name."""

from __future__ import annotations

#: the last part of a settings key that names the model trained
MODEL_KEYS = frozenset(
    "model model_name model_name_or_path model_type arch architecture net_name network net backbone cfg config "
    "model_cfg model_config base_model base_model_name_or_path meta_architecture model_id pretrained_model_name "
    "model_arch".split()
)
#: keys whose value says whether training starts from pre-trained weights
PRETRAINED_KEYS = frozenset("pretrained weights pretrained_weights init_checkpoint load_from resume_from".split())
#: keys that say the run fine-tunes LoRA adapters
LORA_KEYS = frozenset("lora_r lora_rank lora_alpha lora_scale use_lora lora_parameters.rank".split())
#: keys that name the data set (a well-known one has a documented class count: datasets.py)
DATASET_KEYS = ("dataset", "dataset_name", "data_set", "dataset_id")
#: keys that name the task (classification, regression, multi-label)
TASK_KEYS = ("task", "task_type", "problem_type", "objective")
#: keys that name the metrics computed or monitored
METRIC_KEYS = ("metrics", "metric", "eval_metric", "metric_for_best_model", "monitor")
#: keys of a warm-up's length, in the units their names say
WARMUP_KEYS = ("warmup_steps", "warmup_ratio", "warmup_epochs")
