"""What YOLO training prints (ultralytics/yolov3, YOLOv5, Ultralytics 8): the names of its table columns, and the
rows of ``results.txt`` that are pasted without their header.

- the training table's header, printed before each epoch (``train.py``): YOLOv5 1.x-5.x and yolov3
  ``('%10s' * 8) % ('Epoch', 'gpu_mem', 'GIoU', 'obj', 'cls', 'total', 'targets', 'img_size')`` (``box`` for
  ``GIoU`` from YOLOv5 2.0, ``labels`` for ``targets`` from 5.0); YOLOv5 6.x ``Epoch GPU_mem box_loss obj_loss
  cls_loss Instances Size``; Ultralytics 8 ``Epoch GPU_mem box_loss cls_loss dfl_loss Instances Size``: the short
  loss names are the epoch's mean box, objectness, class and total loss (``HEADER_NAMES``);
- the validation table (``test.py`` / ``val.py``): ``('%20s' + '%12s' * 6) % ('Class', 'Images', 'Targets', 'P',
  'R', 'mAP@.5', 'mAP@.5:.95')``, later ``Instances``, ``mAP50``, ``mAP50-95``; Ultralytics 8 groups the columns
  per task, ``Box(P R mAP50 mAP50-95)`` then ``Mask(P R mAP50 mAP50-95)`` (``val_names``);
- ``results.txt`` (YOLOv5 up to 5.x, yolov3): one line per epoch, the training row ``('%10s' * 2 + '%10.4g' * 6) %
  ('%g/%g' % (epoch, epochs - 1), mem, *mloss, targets, img_size)`` followed by ``'%10.4g' * 7 % results``:
  P, R, mAP@.5, then mAP@.5:.95 (YOLOv5; yolov3 wrote F1 there, so that column is not read), and the
  validation box, objectness and class losses, as ``utils.plot_results`` reads the columns back. A line with
  the training row's shape alone (the console row without its header) is read too (``results_row``).
"""

from __future__ import annotations

import re

from advisor.read.logs.records import Collector
from advisor.read.logs.keys import parse_number

#: the training table's loss columns (lower-cased header cell -> key)
HEADER_NAMES = {"giou": "giou_loss", "box": "box_loss", "obj": "obj_loss", "cls": "cls_loss", "total": "total_loss"}
#: the validation table's columns that are not spelt as scores
_VAL_NAMES = {"p": "precision", "r": "recall"}

#: ``5/9  11.1G`` (epoch/last epoch, GPU memory as ``'%.3gG'``) then numbers
_ROW_RE = re.compile(r"^[ \t]*+(\d++)/\d++[ \t]++\d[\d.]*+(?:e[-+]?\d++)?+[GM](?:[ \t]++(\S++))++[ \t\r\n]*+\Z")
_TRAIN_COLUMNS = ("box_loss", "obj_loss", "cls_loss", "total_loss")
#: results.txt columns 9-15 (after the 8 of the training row); None: not read
_RESULT_COLUMNS = ("val_precision", "val_recall", "val_map50", None, "val_box_loss", "val_obj_loss", "val_cls_loss")


def val_names(cells: list[str]) -> list[str]:
    """The names of a validation header's cells: ``P``, ``R`` -> precision, recall; in Ultralytics 8's groups the
    first (``Box(P`` ... ``mAP50-95)``) keeps the plain names, a later one is prefixed with its own (``Mask(P`` ->
    ``mask_precision``)."""
    out = []
    group: str | None = None  # None: no group yet; "": the first group's
    for cell in cells:
        name = cell
        if "(" in cell:
            head, name = cell.split("(", 1)
            group = "" if group is None else head.lower() + "_"
        name = name.rstrip(")")
        out.append((group or "") + _VAL_NAMES.get(name.lower(), name))
    return out


def results_row(line: str, lineno: int, col: Collector) -> bool:
    """A ``results.txt`` line (or the training row alone) outside a table: its losses at its epoch and its
    validation results as evaluation; True when the line was one."""
    m = _ROW_RE.match(line)
    if m is None:
        return False
    cells = line.split()[2:]
    if len(cells) not in (6, 13):
        return False
    nums = [parse_number(c) for c in cells]
    if any(v is None for v in nums):
        return False
    epoch = float(m.group(1))
    col.add_record(dict(zip(_TRAIN_COLUMNS, nums[:4])), lineno, epoch=epoch)  # type: ignore[arg-type]
    if len(nums) == 13:
        evals = {k: v for k, v in zip(_RESULT_COLUMNS, nums[6:]) if k is not None}
        col.add_record(evals, lineno, epoch=epoch, split="eval")  # type: ignore[arg-type]
    col.read.formats.add("yolo_results")
    return True
