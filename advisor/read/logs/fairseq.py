"""fairseq's progress output (``fairseq/logging/progress_bar.py``), what the generic readers need to be told.

- ``--log-format simple`` (and ``tqdm`` without a terminal): ``epoch 001:    100 / 1000 loss=9.123, ...,
  num_updates=100, lr=1.25e-05, ...`` every ``--log-interval`` updates (``SimpleProgressBar.log``: key=value pairs,
  read by ``keyvalue``), and at the end of an epoch ``epoch 001 | loss 9.12 | ... | num_updates 1000``
  (``print``: the epoch's means, an ``@epoch`` series, not one more point of the updates' curve; fairseq 0.10+
  logs both through ``logging``: ``| INFO | train_inner | epoch 001: ...``, ``| INFO | train | epoch 001 | ...``);
  validation ``epoch 001 | valid on 'valid' subset | loss 8.5 | ... | num_updates 1000`` is an evaluation;
- ``--log-format json``: ``JsonProgressBar`` writes ``json.dumps`` of the same stats with the numbers as strings and
  ``epoch`` (the epoch number) and ``update`` (the fractional epoch) added: ``{"epoch": 1, "update": 0.1, "loss":
  "9.123", ..., "num_updates": "100"}``; at the end of an epoch each key is prefixed with the tag:
  ``{"epoch": 1, "train_loss": "9.12", ..., "train_num_updates": "1000"}``, ``{"epoch": 1, "valid_loss": "8.5", ...,
  "valid_num_updates": "1000", "valid_best_loss": "8.5"}``.
"""

from __future__ import annotations

import re

#: the end-of-epoch print (``epoch 001 | loss ...``: fairseq pads the epoch to 3 digits), not the validation's
#: (``epoch 001 | valid on 'valid' subset``)
_EPOCH_END_RE = re.compile(r"\bepoch \d{3,} \| (?!valid on )")
#: the position key of each JSON print: the updates' (``log``), the epoch end's and the validation's (``print``)
_UPDATES = ("num_updates", "train_num_updates", "valid_num_updates")


def simple_record(line: str, values: dict[str, float]) -> dict[str, float]:
    """The values of a line of the simple format as they are meant: an end-of-epoch print's are the epoch's means
    (``loss`` -> ``loss_epoch``: ``train/loss@epoch``); the validation's ``best_loss`` is the best so far, not a
    value of this evaluation. Other lines' values as they are."""
    if "epoch " not in line or "num_updates" not in line:
        return values
    if "valid on " in line:
        return {k: v for k, v in values.items() if not k.startswith("best_")}
    if _EPOCH_END_RE.search(line) is not None:
        return {f"{k}_epoch": v for k, v in values.items()}
    return values


def json_record(
    values: dict[str, float], epoch: float | None
) -> tuple[dict[str, float], float | None, float | None] | None:
    """(values, step, epoch) of a JSON print, or None when ``values`` is not one."""
    key = next((k for k in _UPDATES if k in values), None)
    if key is None:
        return None
    step = values.pop(key)
    update = values.pop("update", None)
    if key == "num_updates":
        return values, step, update if update is not None else epoch
    values = {k: v for k, v in values.items() if "_best_" not in k}  # (valid_best_loss: the best so far)
    if key == "train_num_updates":
        values = {f"{k.removeprefix('train_')}_epoch": v for k, v in values.items()}
    return values, step, epoch
