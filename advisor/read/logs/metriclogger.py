"""Position prefixes of the big frameworks' loggers; the values are key/value pairs.

- torchvision / maskrcnn-benchmark / LAVIS ``MetricLogger``: ``Epoch: [3]  [120/500]  eta: ...  loss: 1.2 (1.3)``
  (the number in parentheses is a running average, not a point): step = epoch * iterations_per_epoch + i
- mmdetection 2: ``Epoch [1][50/500]  lr: 1.0e-02, ... loss: 1.2``
- hand-written loops (the PyTorch tutorials' print): ``Epoch [7/30], Step [200/391], Loss: 0.43``: epochs and
  steps count from 1, so the global step is (7 - 1) * 391 + 200
- mmengine: ``Epoch(train)  [1][ 50/500]  lr: ...  loss: 1.2``, ``Iter(train) [  50/90000] ...``,
  ``Epoch(val) [1][50/50] ...`` (evaluation)
- tqdm progress bars with a postfix (Lightning's bar, hand-written loops):
  ``Epoch 3:  40%|████      | 40/100 [00:04<00:06, 9.5it/s, loss=0.41, v_num=0]``: ``40`` is the
  iteration inside the epoch (the epoch comes from the ``Epoch 3`` key/value)
- the PyTorch examples' loops (mnist, and the many scripts copied from it):
  ``Train Epoch: 3 [12800/60000 (21%)]\tLoss: 0.2312``: x = (3 - 1) * 60000 + 12800 samples; the epoch's
  ``Test set: Average loss: 0.0500, Accuracy: 9837/10000 (98%)`` is evaluation at that epoch
- Lightning's ``RichProgressBar``: ``Epoch 1/2  ━━━━━━━━╺━━━━━━ 5/10 0:00:00 • 0:00:01 177.48it/s train_loss: 0.141
  val_loss: 0.778``: like a tqdm bar (``5`` is the batch inside epoch ``1``); a narrow terminal wraps the metrics
  onto the next line
- Swin Transformer's ``main.py`` (and the many repositories built on it: SimMIM, Video Swin, ...):
  ``Train: [3/300][120/1251]\teta 0:05:00 lr 0.000100\t...\tloss 6.9123 (6.9100)``: epochs and steps from 0, so
  step = 3 * 1251 + 120
- detectron2 ``iter: 19  total_loss: 1.986`` needs no prefix (key/value).
"""

from __future__ import annotations

import re

from advisor.read.logs.keys import Split

EPOCH_ITER_RE = re.compile(
    r"Epoch\s*(?:\((train|val|test)\))?:?\s*\[\s*(\d+)\s*(?:/\s*\d+\s*)?\]\s*,?\s*((?:Step|Iter(?:ation)?|Batch)\s*)?"
    r"\[\s*(\d+)\s*/\s*(\d+)\s*\]"
)
#: pytorch/examples mnist: ``Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}`` (samples seen of the epoch)
_EXAMPLE_RE = re.compile(r"Train Epoch:\s*(\d+)\s*\[(\d+)/(\d+)\s*\(")
_TQDM_RE = re.compile(r"\|\s*(\d+)/(\d+)\s*\[[\d:]+<[\d:?]+")
#: Lightning's RichProgressBar: ``Epoch 1/2  ━━━━━━━━╺━━━━━━━━━ 5/10 0:00:00 • 0:00:01 177.48it/s train_loss: 0.141``
_RICH_RE = re.compile(r"\bEpoch (\d+)/\d+ +[━╺╸╾─ ]*?(\d+)/(\d+) +[\d:]+ • ")
_ITER_RE = re.compile(r"Iter\s*\((train|val|test)\)\s*\[\s*(\d+)\s*/\s*(\d+)\s*\]")
#: Swin Transformer: ``Train: [{epoch}/{EPOCHS}][{idx}/{num_steps}]``
_TRAIN_BRACKETS_RE = re.compile(r"\bTrain:\s*\[\s*(\d+)\s*/\s*\d+\s*\]\s*\[\s*(\d+)\s*/\s*(\d+)\s*\]")


def position(line: str) -> tuple[float | None, float | None, Split | None, str] | None:
    """(step, epoch, split, family) from the line's position prefix, or None."""
    m = EPOCH_ITER_RE.search(line)
    if m:
        mode, epoch, i, n = m.group(1), int(m.group(2)), int(m.group(4)), int(m.group(5))
        split: Split | None = "eval" if mode in ("val", "test") else None
        fam = (
            "mmengine"
            if mode
            else "epoch_step"
            if m.group(3)
            else "mmdet"
            if line.find("Epoch [") >= 0
            else "metriclogger"
        )
        if split == "eval":
            return None, float(epoch), split, fam
        # MetricLogger epochs start at 0, mmdet/mmengine at 1
        base = epoch if fam == "metriclogger" else epoch - 1
        return float(base * n + i), float(epoch), split, fam
    m = _EXAMPLE_RE.search(line) if "Train Epoch" in line else None
    if m:  # epochs from 1; x counts samples: (epoch - 1) * dataset size + samples seen in the epoch
        epoch, n, total = int(m.group(1)), int(m.group(2)), int(m.group(3))
        return float((epoch - 1) * total + n), float(epoch), None, "pytorch_example"
    if "it/s" in line or "s/it" in line:
        m = _TQDM_RE.search(line)
        if m:
            return float(m.group(1)), None, None, "tqdm"
        m = _RICH_RE.search(line)
        if m:  # epochs from 0: x = epoch * batches per epoch + batch; counter 0: no batch yet (None)
            epoch, i, n = int(m.group(1)), int(m.group(2)), int(m.group(3))
            return (float(epoch * n + i) if i else None), float(epoch), None, "rich"
    m = _TRAIN_BRACKETS_RE.search(line) if "Train:" in line else None
    if m:  # epochs and steps from 0
        epoch, i, n = int(m.group(1)), int(m.group(2)), int(m.group(3))
        return float(epoch * n + i), float(epoch), None, "swin"
    m = _ITER_RE.search(line)
    if m:
        split = "eval" if m.group(1) in ("val", "test") else None
        return (None if split else float(m.group(2))), None, split, "mmengine"
    return None
