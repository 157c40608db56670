"""Tables printed to the console: a header line of column names, then rows of bare numbers.

- a bare ``step loss`` (or ``epoch  train_loss  val_loss  lr``) header and rows such as ``100  2.3026``;
- YOLO's progress table (``train.py``; the column names are in ``yolo.py``): a header ``Epoch gpu_mem box obj
  cls total labels img_size`` (v5.x; v6+: ``Epoch GPU_mem box_loss obj_loss cls_loss Instances Size``; Ultralytics
  8: ``Epoch GPU_mem box_loss cls_loss dfl_loss Instances Size``) printed before each epoch, then progress rows
  ``0/299  3.53G  0.1187  0.07285  0.04193  0.2335  36  640: 100%|███| 10/10 [...]`` (tqdm's bar; Ultralytics
  8.3+ its own, ``64: 50% ━━━━━━────── 1/2 2.8it/s 0.4s<0.4s``) whose values are running means over the epoch:
  the epoch's last row is its point; the validation table after it (``Class Images Instances P R mAP50
  mAP50-95`` then ``all 128 929 0.577 0.525 0.577 0.363``) gives eval scores at that epoch; a second validation
  table at the same epoch is Ultralytics' validation of ``best.pt`` after training (``Validating .../best.pt...``):
  a test evaluation. A header pasted without its ``Epoch`` column still names its row (a point without a
  position);

- a pandas ``DataFrame`` of metrics printed with its index (``print(pd.DataFrame(history.history))``): a header of
  metric names only (``loss  accuracy  val_loss  val_accuracy``), rows ``0  0.6931  0.50  0.6900  0.55``: the
  index is the epoch (from 0); ``...`` rows are skipped.

- the Hugging Face Trainer's notebook table (``transformers.utils.notebook``), copied as text: tab-separated
  ``Step  Training Loss  Validation Loss  Accuracy`` (``Epoch`` first with per-epoch evaluation), rows
  ``500  0.693100  0.690000  0.550000``, ``No log`` where no value was logged yet.

Rows must have as many cells as the header; cells that are not numbers (``3.53G``) are not read. A row
that repeats the position (step or epoch) of the previous row replaces it (a progress bar's updates).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.read.logs import yolo
from advisor.read.logs.records import Collector
from advisor.read.logs.keys import EPOCH_KEYS, STEP_KEYS, classify_key, parse_number

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

#: a column name (``mAP@.5:.95`` holds a colon; ``key: value`` has a blank after it)
_WORD_RE = re.compile(r"^[A-Za-z][\w.\-()/@:]*$")
#: a progress bar after the row's cells: tqdm's ``: 100%|`` or Ultralytics' own ``: 50% ━━━``
_BAR_RE = re.compile(r": {0,3}\d{1,3}% ")
MAX_COLUMNS = 24


class TableState:
    def __init__(self) -> None:
        self.columns: list[str] | None = None
        self.roles: list[str | None] = []  # "step", "epoch", "metric" or None per column
        self.is_val = False  # a YOLOv5 validation table (Class Images ... mAP50-95)
        self.pending: tuple[dict[str, float], int, float | None, float | None, str | None] | None = None
        self.last_epoch: float | None = None
        self.validated: float | None = None  # the epoch of the last validation row
        self.indexed = False  # a pandas DataFrame print: an index column before the header's
        self.tabs = False  # cells separated by tabs (a notebook's table, copied)

    def finish(self, col: Collector) -> None:
        flush(self, col)


def _head(line: str) -> str:
    """The line without a progress bar after it (``640: 100%|███| 10/10 [00:05<00:00, 1.9it/s]``,
    ``64: 0% ──────────── 0/2  0.3s``)."""
    if "%|" in line or "it/s" in line or "s/it" in line:
        return line.split(": ", 1)[0] if ": " in line else line.split("|", 1)[0]
    if "% " in line:
        m = _BAR_RE.search(line)
        if m is not None:
            return line[: m.start()]
    return line


def _cells(line: str, tabs: bool = False) -> list[str]:
    if tabs:
        return [c.strip() for c in line.strip().split("\t")]
    return _head(line).split()


def read_header(r: Reading, state: TableState, line: str, low: str, lineno: int) -> bool:
    """A table's header line (``header``); not a line of ``key: value`` pairs, unless a progress bar follows it."""
    return (": " not in line or "%|" in line or "% " in line) and header(line, state)


def header(line: str, state: TableState) -> bool:
    """Take the line as a table header when it is one; True if so."""
    head = _head(line)
    if "=" in head or ": " in head or head.rstrip().endswith(":") or "," in head:
        return False
    tabs = "\t" in head.strip()  # a table copied from a notebook: cells of several words
    cells = ["_".join(c.split()) for c in head.strip().split("\t")] if tabs else head.split()
    if not 2 <= len(cells) <= MAX_COLUMNS or not all(_WORD_RE.match(c) for c in cells):
        return False
    low = [c.lower() for c in cells]
    is_yolo = "gpu_mem" in low
    if low[0] == "class":
        cells = yolo.val_names(cells)
    roles: list[str | None] = []
    names = []
    for c, lc in zip(cells, low):
        name = yolo.HEADER_NAMES.get(lc, c) if is_yolo else c
        names.append(name)
        if lc in STEP_KEYS:
            roles.append("step")
        elif lc in EPOCH_KEYS:
            roles.append("epoch")
        else:
            info = classify_key(name)
            roles.append("metric" if info is not None else None)
    if tabs and "validation_loss" in low:  # the Trainer's notebook table: the other metrics are eval metrics
        names = [
            f"eval_{n}" if r == "metric" and not n.lower().startswith(("training", "validation")) else n
            for n, r in zip(names, roles)
        ]
    is_val = low[0] == "class" and "metric" in roles
    has_pos = "step" in roles or "epoch" in roles or is_yolo  # (a YOLO header pasted without its Epoch column)
    indexed = not has_pos and not is_val and roles.count("metric") >= 2 and None not in roles
    if not (has_pos and "metric" in roles) and not is_val and not indexed:
        return False
    flush(state, None)
    state.columns, state.roles, state.is_val, state.tabs = names, roles, is_val, tabs
    if indexed:  # pandas prints a DataFrame with its index first: the epoch (Keras history.history)
        state.columns, state.roles = ["epoch", *names], ["epoch", *roles]
        state.indexed = True
    else:
        state.indexed = False
    return True


def flush(state: TableState, col: Collector | None) -> None:
    if state.pending is not None and col is not None:
        values, lineno, step, epoch, split = state.pending
        col.add_record(values, lineno, step=step, epoch=epoch, split=split)  # type: ignore[arg-type]
        col.read.formats.add("table")
    state.pending = None


def row(line: str, lineno: int, col: Collector, state: TableState) -> bool:
    """Read a row of the current table; False (and the table is closed) when the line is not one."""
    cols = state.columns
    if cols is None:
        return False
    cells = _cells(line, state.tabs)
    if state.indexed and cells and all(c.strip(".") == "" for c in cells):
        return True  # the rows pandas leaves out of a long frame
    if len(cells) != len(cols):
        if cells:
            flush(state, col)
            state.columns = None
        return not cells
    if state.is_val and any(parse_number(c) is None for c in cells[1:]):
        state.columns = None  # a new header (the next epoch's), not a row
        return False
    values: dict[str, float] = {}
    step = epoch = None
    for i, (cell, role) in enumerate(zip(cells, state.roles)):
        if role is None:
            if i == 0 and state.is_val and cell != "all":
                return True  # a per-class row of the validation table
            continue
        if role == "epoch" and "/" in cell:
            cell = cell.split("/", 1)[0]  # YOLO "3/299": epoch 3 of 0..299
        v = parse_number(cell)
        if v is None and state.tabs and role == "metric":
            continue  # "No log": the Trainer had no value for that column yet
        if v is None:
            flush(state, col)
            state.columns = None
            return False
        if role == "step":
            step = v
        elif role == "epoch":
            epoch = v
        else:
            values[cols[i]] = v
    if state.is_val:
        flush(state, col)
        again = state.last_epoch is not None and state.validated == state.last_epoch
        state.validated = state.last_epoch
        col.add_record(values, lineno, epoch=state.last_epoch, split="test" if again else "eval")
        col.read.formats.add("table")
        return True
    pend = state.pending
    if pend is not None and (pend[2], pend[3]) != (step, epoch):
        flush(state, col)
    state.pending = (values, lineno, step, epoch, None)
    if epoch is not None:
        state.last_epoch = epoch
    return True
