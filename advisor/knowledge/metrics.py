"""What advisor knows of metric names, in one place: which scores are lower-is-better, which are accuracies,
which are overlap scores of detection and segmentation, and which one is a task's headline.

The names are the base names the log readers give a logged key (``val_acc`` -> ``acc``, YOLOv5's
``mAP@.5:.95`` -> ``map50-95``: advisor/read/logs/records.py)."""

from __future__ import annotations

#: scores where lower is better: word and character error rates, perplexity
LOWER_BETTER = frozenset({"wer", "cer", "perplexity", "ppl"})
#: classification accuracies (a share of correct predictions, 0 to 1)
ACCURACY = frozenset({"acc", "accuracy", "top1", "top-1", "binary_accuracy", "categorical_accuracy"})
#: overlap scores of detection and segmentation, whose chance level is about 0
OVERLAP = frozenset({"map", "map50", "map50-95", "miou", "iou", "dice"})
#: the headline score of a task, best first (a detector's mAP, not the precision its table prints first)
HEADLINE = ("accuracy", "acc", "top1", "acc1", "map50-95", "map", "map50", "f1")
#: scores read only when nothing else was logged: each says half of what the task's score says
PARTIAL = ("precision", "recall")


def lower_is_better(base: str) -> bool:
    """Whether a score of this base name improves as it falls."""
    return base.lower() in LOWER_BETTER
