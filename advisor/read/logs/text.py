"""The line loop over a text log: every format family on every line, in bounded memory.

Lines are read in blocks (``blocks.py``) with a length cap (``MAX_LINE``): a file
without newlines (binary garbage, a truncated dump) cannot make one huge string.
Carriage returns end lines too, so progress bars give one line per update. A
cheap trigger test skips lines that cannot hold anything we read. At each line
start of a block, runs of lines with the shape of a line read before are taken
by templates, and lines without a trigger word seen before are skipped
(``template_rows.py``, ``repeat.py``); the other lines go through every family.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import BinaryIO

from advisor.read.logs import (
    bare,
    caffe,
    fairseq,
    hf_trainer,
    keras,
    megatron,
    metriclogger,
    mindspore,
    mixed_precision,
    mxnet,
    repeat,
    table,
    template_rows,
    timm,
)
from advisor.read.logs.blocks import blocks
from advisor.read.logs.keyvalue import is_settings_print, parse_pairs, split_record, unreadable_loss
from advisor.read.logs.records import Collector, LogEvent, LogRead, classify_key
from advisor.read.safe import clean_log_line

MAX_LINE = 65536
#: lines without trigger words remembered (to skip them when they come again), and the longest remembered
MAX_DEAD = 1024
MAX_DEAD_CHARS = 300
#: a line without one of these (lower-cased) cannot hold anything we read
TRIGGER_WORDS = (
    "loss",
    "lr",
    "learn",
    "acc",
    "overflow",
    "scale",
    "norm",
    "epoch",
    "step",
    "iter",
    "nan",
    "inf",
    "traceback",
    "{",
    "top1",
    "top5",
    "map",
    "f1",
    "wer",
    "bleu",
    "precision",
    "recall",
    "perplex",
    "ppl",
    "auc",
    "iou",
    "dice",
    "error",
    "gpu_mem",  # YOLO's training table header, pasted without its Epoch column
)
_EVAL_LINE_RE = re.compile(
    r"\bvalid(?:ation)? on\b|\|\s*valid\s*\||\b(?:evaluation|eval)\b:|^\s*(?:val|valid|eval|test)\b", re.I
)
_EXC_RE = re.compile(r"^(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Interrupt|Exit)\b")
_NONFINITE_MSG_RE = re.compile(
    r"\b(?:loss|gradient|grad)s?\b.{0,60}\b(?:nan|infinite|non-finite|inf)\b"
    r"|\b(?:nan|non-finite|infinite)\b.{0,40}\bloss\b"
    r"|\binvalid loss, terminating",
    re.I,
)  # Keras TerminateOnNaN
_AT_ITER_RE = re.compile(r"(?:iteration|iter|step)\s*[=:]?\s*(\d+)", re.I)
#: the epoch a message's step is counted in (``In epoch: 2 step: 1``)
_IN_EPOCH_RE = re.compile(r"\bepoch\s*[=:]?\s*(\d+)\s*,?\s*(?:iteration|iter|step)\b", re.I)
#: the loss scaler gave up (apex/fairseq ``FloatingPointError: Minimum loss scale reached (0.0001)``,
#: DeepSpeed ``Current loss scale already at minimum - cannot decrease scale anymore``)
_MIN_SCALE_RE = re.compile(r"minimum loss scale reached|loss scale already at minimum", re.I)
#: a count out of a total with its percentage after it: ``Accuracy: 9837/10000 (98%)``
_FRACTION_RE = re.compile(r"\b([A-Za-z_]\w*)\s*[:=]\s*(\d+)/(\d+)\s*\(")
#: terminal colour and cursor codes (Keras 3, rich, tqdm nested bars)
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: a printed dict of losses at a crash (detectron2 ``loss_dict = {'loss_cls': tensor(nan, device='cuda:0'), ...}``)
_CRASH_DICT_RE = re.compile(r"\b\w*loss\w*\s*=\s*\{", re.I)


#: a run of digits longer than any float's (1.8e308 has 309) and its cheap length pre-check
_LONG_DIGITS_MIN = 320
_LONG_DIGITS_RE = re.compile(r"\d{%d,}" % _LONG_DIGITS_MIN)


def read_text(path: Path, shown: str, encoding: str = "utf-8", stream: BinaryIO | None = None) -> LogRead:
    """A text log -> series and events. ``stream``: the file, already open in binary mode at its start (then
    ``path`` is not opened again)."""
    col = Collector(shown)
    read = col.read
    read.encoding = encoding
    kstate = keras.KerasState()
    cstate = caffe.CaffeState()
    tstate = table.TableState()
    bar = _Bar()
    mstate = timm.TimmState()
    bstate = bare.BareState()
    tb_line = 0  # line of a pending "Traceback (most recent call last):"
    exc_line = -2  # line of the last exception read
    epoch_ctx: float | None = None
    lineno = 0
    rows = template_rows.Rows(col, kstate)  # lines with the shape of a line read before (repeat.py)
    credit = 8.0  # template compilations allowed before they pay off (each costs ~10 lines' reading)
    dict_record: list[tuple[dict[str, float], float | None, float | None]] = []  # what a dict print recorded
    dead = rows.dead  # lines read in full that hold no trigger word: skipped when seen again
    header: tuple[int, str] = (0, "")  # line number and text of the last Keras epoch header read in full
    with (
        path.open("r", encoding=encoding, errors="replace", newline=None)
        if stream is None
        else io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline=None)
    ) as fh:
        pieces = blocks(fh, MAX_LINE)
        block = ""
        cur = size = 0
        overlong = False
        ahead: tuple[str, bool] | None = None  # the next piece, read before its turn
        while True:
            if cur >= size:
                piece = ahead if ahead is not None else next(pieces, None)
                ahead = None
                if piece is None:
                    break
                block, overlong = piece
                cur, size = 0, len(block)
                rows.ascii = block.isascii()
                if overlong:  # (a line cut at MAX_LINE comes alone)
                    read.overlong_lines += 1
            if not tb_line and tstate.columns is None and (dead or rows.templates):  # (see template_rows.py)
                nxt, now = rows.take(block, cur, lineno)
                if nxt != cur:
                    credit = min(8.0, credit + 0.05 * (now - lineno))
                    cur, lineno = nxt, now
                    continue
            end = block.find("\n", cur) + 1 or size
            if (
                end == size
                and rows.epochs
                and not overlong
                and ahead is None
                and not tb_line
                and tstate.columns is None
            ):
                ahead = next(pieces, None)  # the block's last line: joined to the next block, where a Keras epoch
                if ahead is not None and not ahead[1]:  # that starts with it may be matched whole
                    block, ahead = block[cur:] + ahead[0], None
                    cur, size = 0, len(block)
                    rows.ascii = block.isascii()
                    continue
            line = block[cur:end]
            cur = end
            lineno += 1
            raw = line
            if "\x1b" in line or "\x00" in line:  # colour codes and NUL padding are not part of the values
                line = clean_log_line(line)
            if len(line) > _LONG_DIGITS_MIN and _LONG_DIGITS_RE.search(line):
                # a number of hundreds of digits is beyond any float: read it as inf (int() of thousands of
                # digits would raise, and every parser below would have to guard it)
                line = _LONG_DIGITS_RE.sub("inf", line)
            if tb_line:
                if line[:1] in (" ", "\t", "\n") or line.startswith("During handling") or line.startswith("The above"):
                    continue
                text = line.strip()
                if _EXC_RE.match(text):
                    _exception(col, tb_line, lineno, text)
                    tb_line, exc_line = 0, lineno
                    continue
                tb_line = 0
            if "\x1b" in line:
                line = _ANSI_RE.sub("", line)
            if tstate.columns is not None and table.row(line, lineno, col, tstate):
                continue
            if kstate.phase == "tail" and line[:1] not in keras.FIRST_CHARS:
                keras.other_line(kstate)
            if line[:1] in bare.FIRST_CHARS and bare.take(line, lineno, col, bstate):
                continue  # a row of bare numbers (held until they are named), or a YOLO results.txt row
            if line[:1] in "V \n" and _VALIDATION_BAR_RE.match(line) and "|" in line:
                bar.validated = True  # a validation loop's bar: the eval values the epoch's bar shows next are new
                continue
            low = line.lower()
            for word in TRIGGER_WORDS:
                if word in low:
                    break
            else:
                if len(line) <= MAX_DEAD_CHARS and len(dead) < MAX_DEAD and line is raw:
                    dead.add(line)  # (nothing of it was read, whatever the state but the Keras tail's)
                continue
            if line.startswith("Traceback (most recent call last)"):
                tb_line = lineno
                continue
            if (
                ("nan" in low or "inf" in low or "scale" in low)
                and ("error" in low or "exception" in low)
                and _EXC_RE.match(line)
                and (_NONFINITE_MSG_RE.search(line) or _MIN_SCALE_RE.search(line))
            ):
                _exception(col, lineno, lineno, line.strip())  # the exception line without its traceback
                exc_line = lineno
                continue
            if (
                "{" in line
                and ("nan" in low or "inf" in low)
                and _CRASH_DICT_RE.search(line)
                and _NONFINITE_MSG_RE.search(line.replace("{", " loss ", 1))
            ):
                if lineno != exc_line + 1:  # not the second line of the exception just read (detectron2)
                    _nonfinite_message(col, lineno, line)  # a crash's loss dict: not a logged point
                continue
            if "\x08" in line:  # what the terminal shows: the text after the last backspace (Keras 3 erases
                line = line.rstrip("\r\n").rstrip("\x08").rsplit("\x08", 1)[-1] + "\n"  # at the end)
            if "overflow" in low:
                rows.flush()  # (the loss-scale readers look at the series and the last step)
                if mixed_precision.parse(line, lineno, col):
                    continue
                mindspore.parse(line, lineno, col)
            if "{" in line and hf_trainer.parse_print(line, lineno, col, dict_record):
                if dict_record:
                    credit = min(8.0, credit + 0.005)
                    if credit >= 1.0:
                        if rows.keep(repeat.learn_dict(line, low, *dict_record[0])):
                            credit -= 1.0
                    dict_record.clear()
                continue
            if (line[:1] in keras.FIRST_CHARS) and keras.parse(line, lineno, col, kstate):
                pend = kstate.pending
                if pend is None:
                    if kstate.phase == "fit" and not kstate.last_n:
                        header = (lineno, line)  # (a header, or a bar without values: learn_keras tells)
                elif pend[1] == lineno and header[0] == lineno - 1 and kstate.phase == "tail" and credit >= 1.0:
                    if rows.keep(repeat.learn_keras(header[1], line, pend[0])):
                        credit -= 1.0
                continue
            if kstate.seen and line.startswith("Test") and keras.parse_test(line, lineno, col, kstate):
                continue
            if ("Iteration " in line or "net output #" in line) and caffe.parse(line, lineno, col, cstate):
                continue
            if "Epoch[" in line and mxnet.parse(line, lineno, col):
                continue
            if ("Train: " in line or "Test: [" in line) and timm.parse(line, lineno, col, mstate):
                continue
            if "loss at " in line and megatron.parse(line, lineno, col):
                continue
            if (
                (" " in line or "\t" in line)
                and (": " not in line or "%|" in line or "% " in line)  # (a progress bar after the header)
                and table.header(line, tstate)
            ):
                continue
            pos = (
                metriclogger.position(line)
                if ("Epoch" in line or "Iter(" in line or "it/s" in line or "s/it" in line)
                else None
            )
            values, step, epoch, strong = split_record(parse_pairs(line, low))
            if values and pos is None and is_settings_print(line):
                continue  # the run's arguments (Ultralytics' "engine/trainer: amp=False, epochs=3, iou=0.7, ...")
            if values and " | " in line:
                values = fairseq.simple_record(line, values)  # (its epoch means, its best loss so far)
            split = None
            if pos is not None:
                pstep, pepoch, split, fam = pos
                read.formats.add(fam)
                step = pstep if pstep is not None else step
                epoch = pepoch if pepoch is not None else epoch
                strong = strong or bool(values)
                if fam == "pytorch_example":
                    epoch_ctx = epoch  # the epoch of the "Test set:" line that follows
                if fam in ("tqdm", "rich") and values:
                    if not step:  # no batch done yet: the postfix still shows the last epoch's,
                        bar.end_of_epoch(values)  # with the validation run after it
                        continue
                    if bar.pending is not None and bar.pending[2:4] != (step, epoch):
                        bar.flush(col)
                    bar.pending = (values, lineno, step, epoch)
                    continue
                if fam == "rich" and step:
                    # a rich bar whose metrics all wrapped onto the next lines (only ``v_num`` left on its own
                    # line): they take this frame's position
                    if bar.pending is not None and bar.pending[2:4] != (step, epoch):
                        bar.flush(col)
                    bar.pending = ({}, lineno, step, epoch)
                    continue
            elif values and ("val" in low or "test" in low) and _EVAL_LINE_RE.search(line):
                split = "eval"
            if values and "%)" in line:
                for m in _FRACTION_RE.finditer(line):  # "Accuracy: 9837/10000 (98%)": the ratio
                    if m.group(1) in values and int(m.group(3)):
                        values[m.group(1)] = int(m.group(2)) / int(m.group(3))
            if (
                pos is None
                and values
                and bar.pending is not None
                and line[:1] in " \t"
                and step is None
                and epoch is None
            ):
                bar.pending[0].update(values)  # a bar's metrics wrapped onto the next line (rich, narrow terminal)
                continue
            if not strong and "loss" in low:
                token = unreadable_loss(line)
                if token is not None:
                    col.bad(lineno, f"could not read a loss value in {line.strip()[:80]!r} ({token!r})")
                    continue
            if not values:
                if epoch is not None and step is None:
                    epoch_ctx = epoch
                elif pos is None and credit >= 1.0:
                    # a line that had no effect at all (INFO lines, which pass the trigger words by "inf"):
                    # lines of its shape are skipped from now on
                    if rows.keep(repeat.learn_inert(line, low)):
                        credit -= 1.0
                if ("nan" in low or "inf" in low or "invalid loss" in low) and _NONFINITE_MSG_RE.search(line):
                    _nonfinite_message(col, lineno, line)
                continue
            if not strong and step is None and epoch is None:
                rows.flush()
                last = read.last_step
                if mindspore.is_scale_line(line) and last is not None and last == last:
                    col.add_record(values, lineno, step=last)  # the loss scale of the step just logged
                continue  # e.g. "Namespace(lr=0.01, ...)": a setting, not a logged value
            if epoch is None and step is None:
                epoch = epoch_ctx
            elif step is None and "it/s" in line:
                epoch_ctx = epoch  # a rich progress bar (Lightning): its wrapped metrics line has no epoch
            fmt = "mindspore" if "loss is" in low else "keyvalue"
            if col.add_record(values, lineno, step=step, epoch=epoch, split=split) and pos is None:
                read.formats.add(fmt)
            if strong and (pos is None or pos[3] not in ("tqdm", "rich", "pytorch_example")):
                credit = min(8.0, credit + 0.005)
                if credit >= 1.0:
                    learnt = (
                        repeat.learn(line, low, values, step, epoch, split, pos[3], position=True)
                        if pos is not None
                        else repeat.learn(line, low, values, step, epoch, split, fmt)
                    )
                    if rows.keep(learnt):
                        credit -= 1.0
        rows.flush()
        read.lines = lineno
    keras.flush(col, kstate)
    bar.flush(col)
    table.flush(tstate, col)
    bare.finish(col, bstate)
    if tb_line:
        col.add_event(LogEvent(kind="traceback", line=tb_line, text="Traceback (truncated: no exception line)"))
    return read


#: a validation loop's own tqdm bar: Lightning's ``Validation DataLoader 0:``, ``Validation:`` (older: ``Validating:``),
#: with tqdm's bar and its timing bracket (``| 1/2 [00:00<00:00, 688.38it/s]``), so that a metrics line of a loop's own
#: (``Validation | loss: 0.41``) is still read
_VALIDATION_BAR_RE = re.compile(r"\s*Validat(?:ion|ing)\b[^|\n]*\|.*\|.*\[\d+:\d+<")


class _Bar:
    """A tqdm bar with a metrics postfix: each update prints a line, often twice per batch (before and after
    the postfix is set), and eval values (``val_loss``) stay on every line until the next validation. One
    point per batch counter: the counter's last line; an eval value only when it changes."""

    def __init__(self) -> None:
        self.pending: tuple[dict[str, float], int, float | None, float | None] | None = None
        self.last_eval: dict[str, float] = {}
        #: a validation bar (Lightning's ``Validation DataLoader 0: 100%|...| 2/2``) ran since the last eval values
        #: were kept: the next ones are a new evaluation even when they repeat the last (a model that stopped moving)
        self.validated = False

    def end_of_epoch(self, values: dict[str, float]) -> None:
        """A bar's first line of an epoch (counter 0): eval values new there are the validation run at the end of
        the epoch before: they join that epoch's last point."""
        if self.pending is None:
            return
        for k, v in values.items():
            info = classify_key(k)
            if info is not None and info.split == "eval" and (self.validated or self.last_eval.get(k) != v):
                self.pending[0][k] = v

    def flush(self, col: Collector) -> None:
        if self.pending is None:
            return
        values, lineno, step, epoch = self.pending
        self.pending = None
        evals = [k for k in values if (info := classify_key(k)) is not None and info.split == "eval"]
        for key in evals:
            if self.last_eval.get(key) == values[key] and not self.validated:
                del values[key]  # the same value shown again: not a new evaluation
            else:
                self.last_eval[key] = values[key]
        if evals:
            self.validated = False
        if values:
            col.add_record(values, lineno, step=step, epoch=epoch)


def _exception(col: Collector, tb_line: int, lineno: int, text: str) -> None:
    col.add_event(LogEvent(kind="traceback", line=tb_line, text=text[:300]))
    if _NONFINITE_MSG_RE.search(text) or _MIN_SCALE_RE.search(text):
        _nonfinite_message(col, lineno, text)


def _nonfinite_message(col: Collector, lineno: int, text: str) -> None:
    m = _AT_ITER_RE.search(text)
    step = float(m.group(1)) if m else None
    e = _IN_EPOCH_RE.search(text) if step is not None else None
    if step is not None and e is not None:  # MindSpore LossMonitor: "In epoch: 2 step: 1, loss is NAN or INF"
        step = col.step_in_run(step, float(e.group(1)))  # counts steps inside each epoch
    col.add_event(LogEvent(kind="nonfinite_message", line=lineno, text=text.strip()[:300], step=step))
