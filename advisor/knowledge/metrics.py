"""What advisor knows of metric names, in one place: which scores are lower-is-better, which are accuracies,
which are overlap scores of detection and segmentation, and which one is a task's headline.

The names are the base names the log readers give a logged key (``val_acc`` -> ``acc``, YOLOv5's
``mAP@.5:.95`` -> ``map50-95``: advisor/read/logs/records.py)."""

from __future__ import annotations

import re

#: scores where lower is better: word and character error rates, perplexity
LOWER_BETTER = frozenset({"wer", "cer", "perplexity", "ppl"})
#: classification accuracies (a share of correct predictions, 0 to 1)
ACCURACY = frozenset({"acc", "accuracy", "top1", "top-1", "binary_accuracy", "categorical_accuracy"})
#: a logged or configured metric name that is a classification score (a key's word: val_acc, top-1, eval_f1)
ACCURACY_NAME = re.compile(
    r"(?i)(?:^|[_\-/. ])(acc|accuracy|top1|top-1|top5|f1|auc|map|precision|recall)(?:$|[_\-/. @])"
)
#: a metric name that is a regression error or fit (mae, rmse, r2, ...)
REGRESSION_NAME = re.compile(r"(?i)(^|_)(mae|rmse|r2|mean_absolute_error|mape|msle)($|_)")
#: overlap scores of detection and segmentation, whose chance level is about 0
OVERLAP = frozenset({"map", "map50", "map50-95", "miou", "iou", "dice"})
#: the headline score of a task, best first (a detector's mAP, not the precision its table prints first)
HEADLINE = ("accuracy", "acc", "top1", "acc1", "map50-95", "map", "map50", "f1")
#: scores read only when nothing else was logged: each says half of what the task's score says
PARTIAL = ("precision", "recall")


def lower_is_better(base: str) -> bool:
    """Whether a score of this base name improves as it falls."""
    return base.lower() in LOWER_BETTER
