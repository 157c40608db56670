"""Hand-written key/value prints, in any order and separator.

``epoch 3 step 120 loss 0.4312 lr 0.01``, ``step=120, loss=0.43, lr=1e-2``,
``[epoch 3][iter 120/500] loss: 0.4312 grad_norm: 1.2e+01``,
``iter 0 || Loss: 19.4798 ||``, ``Epoch 001 loss 22.07 | Acc 13.52%``,
MindSpore ``epoch: 1 step: 100, loss is 2.30`` and ``loss:[2.302/2.298]``,
Megatron ``lm loss: 6.5E+00 | loss scale: 65536.0 | grad norm: 1.2``,
detectron2 ``iter: 19  total_loss: 1.986``, NumPy 2 scalars ``acc: np.float64(0.94)``, the PyTorch tutorials'
``Accuracy of the network on the 10000 test images: 54 %`` (an eval accuracy).  A value in parentheses after a
value (``loss: 1.2 (1.3)``, a running average) is not a new point.
"""

from __future__ import annotations

import re

from advisor.read.logs.keys import EPOCH_KEYS, STEP_KEYS, classify_key, parse_number

NUM = (
    r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[nN][aA][nN](?:\([iI][nN][dD]\))?"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|1\.#(?:INF|QNAN|IND)\d*)"
)
#: key, separator (':', '=', 'is', or blanks), optional '[', 'tensor(' or 'np.float64(', number, optional '%'; key and value
#: may be quoted (PaddleDetection 1.x ``'loss': '1.024392'``)
#: (possessive quantifiers: a key never gives characters back, which keeps the scan linear and fast)
#: the wrappers a printed number may stand in: ``tensor(0.5)``, NumPy 2's ``np.float64(0.5)``
VALUE_WRAPPER = r"(?:tensor\(|(?:np|numpy)\.(?:float|int)\d*\()"
KV_RE = re.compile(
    r"(?<![\w./'\"-])['\"]?+([A-Za-z_][\w./-]*+)(?:['\"]?+\s*+[:=]\s*+['\"]?+|\s++is\s++|\s++)(?:\[\s*|"
    + VALUE_WRAPPER
    + r")?("
    + NUM
    + r")(%?)['\"]?+(?![\w.#(])"
)
#: words printed apart that name one key (Megatron, fairseq, people)
_PHRASE_RE = re.compile(
    r"\b(learning|loss|grad|gradient|lm|total|train|val|valid|eval|test|global)[ _]"
    r"(rate|scale|norm|loss|step|acc|accuracy)\b",
    re.I,
)

#: an item of a printed dict (Hugging Face Trainer's ``{'loss': 2.31, 'epoch': 0.1}``): quoted key, value up to a
#: comma, brace or blank
DICT_ITEM_RE = re.compile(r"""['"]([^'"]{1,80})['"]\s*:\s*([^,}\s]+)""")

#: the PyTorch tutorials' evaluation print, ``Accuracy of the network on the 10000 test images: 54 %`` (and
#: ``Test Accuracy of the model on the 10000 test images: 97.53 %``): a test accuracy in percent
ACCURACY_OF_RE = re.compile(
    r"(?i)\b(?:test |val |validation )?accuracy of the (?:network|model)\b[^:=\n]{0,80}?[:=]\s*(" + NUM + r")\s*%"
)


_POSITION_KEYS = STEP_KEYS | EPOCH_KEYS
#: words printed apart that name one key: a line holding one is read with ``_PHRASE_RE`` first
PHRASES = (
    "learning rate",
    "loss scale",
    "grad norm",
    "gradient norm",
    "lm loss",
    "total loss",
    "train loss",
    "val loss",
    "valid loss",
    "eval loss",
    "test loss",
    "train acc",
    "val acc",
    "eval acc",
    "test acc",
    "global step",
    "accuracy of the",  # (read by ACCURACY_OF_RE; listed so that such a line is never a template)
)


def parse_pairs(line: str, low: str | None = None) -> list[tuple[str, float, str]]:
    """(key, value, role) of every ``key value`` pair whose key we read (percent values divided by 100).

    ``role``: 'step', 'epoch', 'strong' (a loss or score) or 'weak' (lr, grad norm, loss scale).
    """
    low = line.lower() if low is None else low
    if "accuracy of the" in low:
        line = ACCURACY_OF_RE.sub(r"test_accuracy: \1%", line)
    for phrase in PHRASES:
        if phrase in low:
            line = _PHRASE_RE.sub(r"\1_\2", line)
            break
    out = []
    roles = _ROLE
    for key, num, pct in KV_RE.findall(line):
        if key[-1] == ".":  # ``acc.: 0.5``: an abbreviation's dot, not part of the name
            key = key.rstrip(".")
        role = roles.get(key, "?")
        if role == "?":
            role = key_role(key)
        if role is None:
            continue  # eta, time, data_time, max_mem...: not read, not converted
        val: float | None
        try:
            val = float(num)
        except ValueError:
            val = parse_number(num)
            if val is None:
                continue
        out.append((key, val / 100.0 if pct else val, role))
    return out


_ROLE: dict[str, str | None] = {}


def key_role(key: str) -> str | None:
    """'step', 'epoch', 'strong' (a loss or score), 'weak' (lr, grad norm, loss scale) or None (not read)."""
    role = _ROLE.get(key, "?")
    if role != "?":
        return role
    low = key.lower()
    if low in STEP_KEYS:
        role = "step"
    elif low in EPOCH_KEYS:
        role = "epoch"
    else:
        info = classify_key(key)
        role = None if info is None else ("strong" if info.metric in ("loss", "loss_part", "score") else "weak")
    if len(_ROLE) < 10_000:
        _ROLE[key] = role
    return role


#: ``amp=False``, ``cfg=None``: values no logged metric takes
_SETTING_VALUE_RE = re.compile(r"\w=(?:True|False|None)\b")
#: that many of them make a line a print of settings, whatever numbers it holds besides
_SETTING_VALUES_MIN = 3


def is_settings_print(line: str) -> bool:
    """Whether ``key=value`` pairs of the line are the run's settings, not logged values: at least
    ``_SETTING_VALUES_MIN`` of them are booleans or None (Ultralytics' ``engine/trainer: amp=False, ..., epochs=3,
    iou=0.7, lr0=0.01``, YOLOv5's ``train: weights=..., epochs=300, rect=False, ...``, an argparse ``Namespace``)."""
    if "False" not in line and "True" not in line and "None" not in line:
        return False
    return len(_SETTING_VALUE_RE.findall(line)) >= _SETTING_VALUES_MIN


_LOSS_TOKEN_RE = re.compile(r"\bloss(?:\s*[:=]\s*|\s+is\s+|\s+)([-+]?[\d.]\S*|nan\S*|inf\S*)", re.I)


def unreadable_loss(line: str) -> str | None:
    """The token after ``loss`` when it looks like a number but is not one (``nan(?)``, ``0.42x``), else None."""
    m = _LOSS_TOKEN_RE.search(line)
    if m is None:
        return None
    token = m.group(1).rstrip(",;|)]")
    return token if parse_number(token) is None else None


def split_record(pairs: list[tuple[str, float, str]]) -> tuple[dict[str, float], float | None, float | None, bool]:
    """(metric values, step, epoch, has_loss_or_score) from a line's pairs; the first of each key wins."""
    values: dict[str, float] = {}
    step = epoch = None
    strong = False
    for key, val, role in pairs:
        if role == "step":
            if step is None:
                step = val
        elif role == "epoch":
            if epoch is None:
                epoch = val
        elif key not in values:
            values[key] = val
            strong = strong or role == "strong"
    return values, step, epoch, strong
