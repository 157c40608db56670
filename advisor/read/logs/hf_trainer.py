"""Hugging Face Trainer: the dict prints of the console and ``trainer_state.json``.

Console: ``{'loss': 2.31, 'grad_norm': 5.1, 'learning_rate': 5e-05, 'epoch': 0.1}`` and
``{'eval_loss': 1.9, 'eval_accuracy': 0.61, 'epoch': 1.0}``; the final summary
``{'train_runtime': ..., 'train_loss': 2.0, ...}`` is a run average, not a point, and is skipped.
``trainer_state.json``: ``log_history`` entries with ``step`` and ``epoch``. A ``trainer.evaluate()`` called
after ``train()`` (the transformers example scripts' ``do_eval``) logs the evaluation of the last epoch's
weights again, at the same step with the same loss (only its timings differ): it is kept once, so the last
evaluation is not taken for a second one that failed to improve.
A dict printed after its position, as the accelerate examples print their evaluation
(``accelerator.print(f"epoch {epoch}:", eval_metric)``: ``epoch 0: {'accuracy': 0.64, 'f1': 0.78}``), is at that
position, and an evaluation when it holds scores only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.read.logs import fairseq, repeat
from advisor.read.logs.keyvalue import DICT_ITEM_RE, parse_pairs, split_record
from advisor.read.logs.records import Collector, LogRead
from advisor.read.logs.keys import Split, classify_key, holds_logged_values, parse_number
from advisor.read.safe import loads_json

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

MAX_STATE_BYTES = 300_000_000


def read_line(r: Reading, state: None, line: str, low: str, lineno: int) -> bool:
    """A printed metrics dict (``parse_print``); a dict of a plain shape becomes a template (``repeat.learn_dict``)."""
    record: list[tuple[dict[str, float], float | None, float | None]] = []
    if not parse_print(line, lineno, r.col, record):
        return False
    if record and r.earn(0.005):
        r.keep(repeat.learn_dict(line, low, *record[0]))
    return True


def parse_print(
    line: str,
    lineno: int,
    col: Collector,
    record: list[tuple[dict[str, float], float | None, float | None]] | None = None,
) -> bool:
    """A printed metrics dict; True when the line was one. ``record``: gets the (values, step, epoch) recorded."""
    start = line.find("{")
    if start < 0 or (line.find("'", start) < 0 and line.find('"', start) < 0):
        return False
    items = DICT_ITEM_RE.findall(line, start)
    if not items:
        return False
    values: dict[str, float] = {}
    step = epoch = None
    for key, raw in items:
        val = parse_number(raw)
        if val is None:
            continue
        if key == "step" or key == "global_step":
            step = val
        elif key == "epoch":
            epoch = val
        else:
            values[key] = val
    if "train_runtime" in values or not values:
        return bool(values)
    fairseq_json = fairseq.json_record(values, epoch) if "num_updates" in values or "_num_updates" in line else None
    if fairseq_json is not None:
        values, step, epoch = fairseq_json
    split: Split | None = None
    if step is None and epoch is None and start and ("poch" in line[:start] or "tep" in line[:start]):
        _, step, epoch, _ = split_record(parse_pairs(line[:start]))  # "epoch 0: {'accuracy': 0.64}"
        if (step is not None or epoch is not None) and _is_unsplit_score(values):
            split = "eval"
    if step is None and epoch is None and not holds_logged_values(values):
        return False  # a settings dict ({'lr': 3e-05, ...}), not logged values
    if step is None and epoch is None and col.before_change is not None:
        col.before_change()  # rows held back first: they set the last step
    last = col.read.last_step
    if step is None and epoch is None and last is not None and last == last and _is_unsplit_score(values):
        # a bare dict of scores after training steps: what an evaluation returns (MindSpore ``Model.eval``:
        # {'Accuracy': 0.94}), an eval point at the last step
        split, step = "eval", last
    if col.add_record(values, lineno, step=step, epoch=epoch, split=split):
        col.read.formats.add("hf_trainer_print")
        if record is not None:
            record.append((values, step, epoch))
        return True
    return False


def _is_unsplit_score(values: dict[str, float]) -> bool:
    """Some key is a score, none is a loss (a dict with the loss is more likely a train summary, such as the
    ``logs`` of a Keras ``on_epoch_end``) and none names a split of its own (``eval_``, ``train_``, ``val_``)."""
    infos = [classify_key(k) for k in values]
    return any(i is not None and i.metric == "score" for i in infos) and all(
        i is None or (i.metric != "loss" and i.series.split("/", 1)[0] == "train" and not k.lower().startswith("train"))
        for k, i in zip(values, infos)
    )


def read_state(path: Path, shown: str) -> LogRead:
    """``trainer_state.json`` -> series by step."""
    size = path.stat().st_size
    if size > MAX_STATE_BYTES:
        col = Collector(shown, "hf_trainer_state")
        col.read.problem = f"trainer_state.json is {size} bytes, above the {MAX_STATE_BYTES}-byte limit"
        return col.read
    return read_state_bytes(path.read_bytes(), shown)


def read_state_bytes(data: bytes, shown: str, parsed: Any = None) -> LogRead:
    """``trainer_state.json`` already read (``data``, at most MAX_STATE_BYTES), and parsed when ``parsed`` is not
    None (the same JSON parsed by another reader: then ``data`` is not parsed again) -> series by step."""
    col = Collector(shown, "hf_trainer_state")
    if parsed is not None:
        state = parsed
    else:
        try:
            state = loads_json(data.decode("utf-8"))  # depth-limited (advisor.read.safe)
        except UnicodeDecodeError as exc:
            col.read.problem = f"not UTF-8 text (byte {exc.start})"
            return col.read
        except ValueError as exc:
            col.read.problem = f"not valid JSON: {exc}"
            return col.read
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        col.read.problem = "JSON without a 'log_history' list (not a Hugging Face trainer_state.json)"
        return col.read
    last_eval: tuple[Any, Any] | None = None
    for i, entry in enumerate(history, 1):
        if not isinstance(entry, dict) or "train_runtime" in entry:
            continue
        if "eval_loss" in entry:
            key = (entry.get("step"), entry.get("eval_loss"))
            if key == last_eval:
                continue  # the same weights evaluated again at the same step (evaluate() after train())
            last_eval = key
        values = {
            k: float(v)
            for k, v in entry.items()
            if k not in ("step", "epoch") and isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        step = entry.get("step")
        epoch = entry.get("epoch")
        col.add_record(
            values,
            i,
            step=step if isinstance(step, (int, float)) else None,
            epoch=epoch if isinstance(epoch, (int, float)) else None,
        )
        col.read.lines = i
    return col.read
