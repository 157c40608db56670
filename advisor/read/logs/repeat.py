"""Templates of lines already read: a later line of the same shape is read with one regex match.

Most of a training log is the same print again and again with other numbers
(``step 120 loss 0.4312 lr 0.01``). When the text reader has read such a line
through the whole family chain and found a plain record (values with a step or
an epoch, no state of a stateful family involved), ``learn`` turns the line into
a *template*: a regex that is the line's text literally, except that

- each number the key/value scan read becomes a group of the same spelling
  class (``0.4312`` -> ``\\d+\\.\\d+``, ``1e-05`` -> ``\\d+e-\\d+``; captured only
  when the record uses it), and
- each other stand-alone run of digits (a clock, a counter's total) becomes ``\\d+``.

A later line that the template matches in full has the same keys, separators
and punctuation as the learned one, and its digits sit in runs of the same
classes, so every substring test, regex and branch of the reader (none of which
looks at which digits a number has, only at where digit runs are) takes the
same path for it: the record is the learned one's with the new numbers. Digits
inside words (``top1``, ``lr/pg0``) stay literal, as the key they belong to
decides how it is named; lines that a family reads statefully, or whose
reading depends on something beyond the line (``Test ...`` after Keras output,
a ``{`` dict, an overflow message, a phrase such as ``learning rate``, a tqdm
bar, a fraction ``9837/10000 (98%)``, colour codes, very long lines, an error
line naming NaN or a loss scale, which the reader tells by how many characters
apart its words are) are never learned.

Three more kinds: a printed metrics dict (``learn_dict``), a line that had no
effect at all (``learn_inert``: skipped), and a Keras epoch, its ``Epoch k/N``
header and the bar's last line (``learn_keras``: the two lines as one template,
whose effect on the Keras state is written out in ``template_rows.py``).
Every digit class is possessive (``\\d++``: a digit run is always followed by a
non-digit, so nothing changes but the speed), and each template is compiled
twice, the second time for ASCII text (``re.ASCII``: the same matches on a block
without other characters, faster). A template is only learned from a line that
ends with a newline, so that it matches whole lines of a block.

``template_rows.py`` matches templates on blocks of lines and records the
matched lines.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from advisor.read.logs import metriclogger
from advisor.read.logs.keyvalue import DICT_ITEM_RE, KV_RE, PHRASES, key_role
from advisor.read.logs.keys import Split, parse_number

#: the longest line a template is learned from or matched on (the text reader rewrites digit runs of more
#: than 320 characters; a line this short cannot hold one)
MAX_CHARS = 300
#: templates kept (several prints interleave: train and eval lines), and of lines without effect
MAX_TEMPLATES = 4
MAX_INERT = 2
#: text that makes a line's reading depend on more than the line, or on a family's state
_NEVER = ("{", "#", "%)", "%|", "it/s", "s/it", "\x1b", "\x00", "\x08")
_DIGITS_RE = re.compile(r"\d+")
#: the finite spellings of the key/value scan's numbers
_FINITE_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")

Kind = Literal["record", "inert", "keras"]


@dataclass(frozen=True)
class Template:
    pattern: str  # the regex, for any text (``regex``) and for ASCII text (``ascii``)
    #: (key, group index, is a percentage) of each value, in the order the line gives them
    values: tuple[tuple[str, int, bool], ...]
    step: int | None  # group of the step, if any
    epoch: int | None  # (of a Keras template: of its header's epoch)
    split: Split | None
    fmt: str  # the format family a kept record adds ("keyvalue", "mindspore", "keras", or the position prefix's)
    #: the line has a framework logger's position prefix (metriclogger.py): its step and epoch come from that
    position: bool = False
    kind: Kind = "record"
    #: the same pattern for ASCII text (``re.ASCII``)
    ascii: re.Pattern[str] | None = None
    #: the literal text every matched line starts with
    prefix: str = ""
    #: groups of the position prefix's epoch, iteration and iterations per epoch (``Epoch: [3]  [120/500]``), and
    #: the epoch the prefix counts from; None: the position is read from the line (``metriclogger.position``)
    where: tuple[int, int, int, int] | None = None
    #: of a Keras template: the groups of the bar's counter and total
    counter: tuple[int, int] | None = None

    @functools.cached_property
    def regex(self) -> re.Pattern[str]:
        """The pattern for any text, compiled when first needed (the blocks of most logs are ASCII: ``ascii``)."""
        return re.compile(self.pattern)

    @property
    def inert(self) -> bool:
        """A line that records nothing and changes nothing (``learn_inert``): skipped."""
        return self.kind == "inert"


def _compiled(pattern: str, **fields) -> Template:
    return Template(pattern, ascii=re.compile(pattern, re.ASCII), **fields)


def _fullmatch(tpl: Template, text: str) -> re.Match[str] | None:
    """``tpl``'s regex matched on the whole of ``text`` (the ASCII one on ASCII text: the same match)."""
    return (tpl.ascii if text.isascii() else tpl.regex).fullmatch(text)  # type: ignore[union-attr]


def learn(
    line: str,
    low: str,
    values: dict[str, float],
    step: float | None,
    epoch: float | None,
    split: Split | None,
    fmt: str,
    position: bool = False,
) -> Template | None:
    """The template of a line the reader took as a plain key/value record, or None when it cannot have one.
    ``position``: the line has a position prefix, of family ``fmt`` (not a progress bar's or the PyTorch
    examples', whose reading keeps state)."""
    if len(line) > MAX_CHARS or not line.endswith("\n") or line.startswith("Test") or "overflow" in low:
        return None
    if step is None and epoch is None:
        return None
    if any(s in line for s in _NEVER) or any(p in low for p in PHRASES):
        return None
    if ("error" in low or "exception" in low) and ("nan" in low or "inf" in low or "scale" in low):
        return None  # an exception line is told by how far words are apart (text.py): numbers' lengths count
    pairs = _pairs(line, 0)
    if pairs is None:
        return None
    keys, values_at, found = pairs
    out_values, step_i, epoch_i = _outputs(found)
    used = {i for _, i, _ in out_values} | {i for i in (step_i, epoch_i) if i is not None}
    where_spans: list[tuple[int, int]] = []
    base = 0
    if position:
        m = metriclogger.EPOCH_ITER_RE.search(line)
        if m is not None:
            where_spans = [m.span(2), m.span(4), m.span(5)]
            base = 0 if fmt == "metriclogger" else 1
    pattern, groups, run_groups, prefix = _pattern(line, values_at, keys, used, where_spans)
    where = None
    if where_spans:
        at = {values_at[i - 1][0]: g for i, g in groups.items()} | run_groups
        if all(a in at for a, _ in where_spans):
            where = (at[where_spans[0][0]], at[where_spans[1][0]], at[where_spans[2][0]], base)
    tpl = _compiled(
        pattern,
        values=tuple((k, groups[i], pct) for k, i, pct in out_values),
        step=None if step_i is None else groups[step_i],
        epoch=None if epoch_i is None else groups[epoch_i],
        split=split,
        fmt=fmt,
        position=position,
        prefix=prefix,
        where=where,
    )
    check = _fullmatch(tpl, line)
    if check is None or _as_items(read_row(tpl, check.groups(), line)) != _as_items((values, step, epoch)):
        return None  # not the reader's own record of the line: never replay it
    return tpl


def _pairs(
    line: str, start: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[str, int, bool]]] | None:
    """Spans of the keys and values the key/value scan reads in ``line[start:]``, and (key, value index, pct) of each
    pair; None when a value is spelled otherwise than as a finite number (nan, 1.#INF)."""
    found: list[tuple[str, int, bool]] = []
    values_at: list[tuple[int, int]] = []
    keys: list[tuple[int, int]] = []
    for m in KV_RE.finditer(line[start:]):  # (on the text from start: what precedes it is not looked at)
        if not _FINITE_RE.fullmatch(m.group(2)):
            return None
        keys.append((m.start(1) + start, m.end(1) + start))
        values_at.append((m.start(2) + start, m.end(2) + start))
        found.append((m.group(1), len(values_at), bool(m.group(3))))
    return keys, values_at, found


def _outputs(found: list[tuple[str, int, bool]]) -> tuple[list[tuple[str, int, bool]], int | None, int | None]:
    """Which value gives each output, as split_record takes them (the first of each key wins): (key, value index,
    pct) of the values, and the value index of the step and of the epoch."""
    out_values: list[tuple[str, int, bool]] = []
    seen: set[str] = set()
    step_i = epoch_i = None
    for key, i, pct in found:
        role = key_role(key)
        if role is None:
            continue
        if role == "step":
            step_i = i if step_i is None else step_i
        elif role == "epoch":
            epoch_i = i if epoch_i is None else epoch_i
        elif key not in seen:
            seen.add(key)
            out_values.append((key, i, pct))
    return out_values, step_i, epoch_i


def _pattern(
    line: str,
    values_at: list[tuple[int, int]],
    keys: list[tuple[int, int]],
    used: set[int],
    runs: list[tuple[int, int]] = (),  # type: ignore[assignment]
    word_digits: bool = False,
) -> tuple[str, dict[int, int], dict[int, int], str]:
    """The line as a regex: each value span a group of its spelling class (captured when its index is in ``used``),
    other free digit runs ``\\d++`` (captured when they are in ``runs``), the rest literal; value index (1-based) ->
    group, start of a captured run -> group, and the literal text before the first digit."""
    spans = [(a, b, True) for a, b in values_at]
    for d in _DIGITS_RE.finditer(line):
        at = d.start()
        if any(a <= at < b for a, b in values_at) or any(a <= at < b for a, b in keys):
            continue  # inside a value (handled with it) or a key (literal: the key's name)
        if not word_digits and at and (line[at - 1].isalpha() or line[at - 1] == "_"):
            continue  # part of a word: literal (it may name a key)
        spans.append((at, d.end(), False))
    spans.sort()
    parts: list[str] = []
    pos = 0
    group = 0
    groups: dict[int, int] = {}
    run_groups: dict[int, int] = {}
    order = {a: i + 1 for i, (a, _) in enumerate(values_at)}
    captured_runs = {a for a, _ in runs}
    for start, end, is_value in spans:
        parts.append(re.escape(line[pos:start]))
        if is_value:
            cls = _DIGITS_RE.sub(r"\\d++", re.escape(line[start:end]))
            if order[start] in used:
                group += 1
                groups[order[start]] = group
                parts.append("(" + cls + ")")
            else:
                parts.append("(?:" + cls + ")")
        elif start in captured_runs:
            group += 1
            run_groups[start] = group
            parts.append(r"(\d++)")
        else:
            parts.append(r"\d++")
        pos = end
    parts.append(re.escape(line[pos:]))
    return "".join(parts), groups, run_groups, line[: spans[0][0]] if spans else line


def learn_dict(
    line: str, low: str, values: dict[str, float], step: float | None, epoch: float | None
) -> Template | None:
    """The template of a printed metrics dict (``{'loss': 0.4, 'epoch': 1.2}``) the reader recorded, or None."""
    if len(line) > MAX_CHARS or not line.endswith("\n") or "overflow" in low or "nan" in low or "inf" in low:
        return None  # (a crash's loss dict is told by how far words are apart)
    if any(s in line for s in _NEVER if s != "{") or (("error" in low or "exception" in low) and "scale" in low):
        return None
    start = line.find("{")
    items = list(DICT_ITEM_RE.finditer(line, start))
    names = [m.group(1) for m in items]
    if len(set(names)) != len(names):
        return None  # a key twice: the last value, at the first one's place
    values_at: list[tuple[int, int]] = []
    keys: list[tuple[int, int]] = []
    outputs: list[tuple[str, int]] = []  # (name, value index) of each number
    for m in items:
        keys.append(m.span(1))
        if _FINITE_RE.fullmatch(m.group(2)):
            values_at.append(m.span(2))
            outputs.append((m.group(1), len(values_at)))
        elif parse_number(m.group(2)) is not None:
            return None  # a number spelled otherwise ('0.5', tensor(0.5), nan)
    pattern, groups, _, prefix = _pattern(line, values_at, keys, {i for _, i in outputs})
    step_g = epoch_g = None
    out_values: list[tuple[str, int, bool]] = []
    for name, i in outputs:
        if name in ("step", "global_step"):
            step_g = groups[i]
        elif name == "epoch":
            epoch_g = groups[i]
        else:
            out_values.append((name, groups[i], False))
    tpl = _compiled(
        pattern, values=tuple(out_values), step=step_g, epoch=epoch_g, split=None, fmt="hf_trainer_print", prefix=prefix
    )
    check = _fullmatch(tpl, line)
    if check is None or _as_items(read_row(tpl, check.groups(), line)) != _as_items((values, step, epoch)):
        return None
    return tpl


def learn_inert(line: str, low: str) -> Template | None:
    """The template of a line the whole chain read without any effect (no value, event, format or state: an
    ``INFO`` line passes the trigger words by its "inf"), or None when lines of its shape could have one."""
    if len(line) > MAX_CHARS or not line.endswith("\n") or line.startswith(("Test", "Traceback")):
        return None
    if any(s in line for s in _NEVER):
        return None
    if any(w in low for w in ("loss", "grad", "error", "exception", "overflow", "nan", "scale")):
        return None  # (words some reader looks at, or looks for how far apart they are)
    keys = [m.span(1) for m in KV_RE.finditer(line)]  # (their digits stay: 'top7: 0.5' is not 'top1: 0.5')
    pattern, _, _, prefix = _pattern(line, [], keys, set(), word_digits=True)  # model_5.pth, step_12.ckpt
    return _compiled(pattern, values=(), step=None, epoch=None, split=None, fmt="", kind="inert", prefix=prefix)


#: a Keras epoch header as the Keras reader takes it (keras._EPOCH_RE), and the counter of its bar
_KERAS_HEADER_RE = re.compile(r"^\s*Epoch (\d+)/\d+\s*$")
_KERAS_COUNTER_RE = re.compile(r"^\s*(\d+)/(\d+)")


def learn_keras(header: str, line: str, values: dict[str, float]) -> Template | None:
    """The template of a Keras epoch: its ``Epoch k/N`` header and the bar's last line right after it (the counter
    at its total, ``values`` read from it), or None when they cannot have one."""
    low = line.lower()
    if len(header) > MAX_CHARS or len(line) > MAX_CHARS or not header.endswith("\n") or not line.endswith("\n"):
        return None
    if not values:
        return None
    if any(s in header or s in line for s in _NEVER) or any(p in low for p in PHRASES) or "overflow" in low:
        return None
    if "Invalid loss" in line or (("error" in low or "exception" in low) and ("nan" in low or "inf" in low)):
        return None
    if ("error" in low or "exception" in low) and "scale" in low:
        return None
    h = _KERAS_HEADER_RE.match(header)
    c = _KERAS_COUNTER_RE.match(line)
    if h is None or c is None or c.group(1) != c.group(2):
        return None
    head_pattern, _, head_runs, prefix = _pattern(header, [], [], set(), [h.span(1)])
    pairs = _pairs(line, c.end(2))
    if pairs is None:
        return None
    keys, values_at, found = pairs
    out_values, _, _ = _outputs(found)
    shift = len(head_runs)
    line_pattern, groups, runs, _ = _pattern(
        line, values_at, keys, {i for _, i, _ in out_values}, [c.span(1), c.span(2)]
    )
    if len(runs) != 2:
        return None
    tpl = _compiled(
        head_pattern + line_pattern,
        values=tuple((k, groups[i] + shift, pct) for k, i, pct in out_values),
        step=None,
        epoch=head_runs[h.start(1)],
        split=None,
        fmt="keras",
        kind="keras",
        prefix=prefix,
        counter=(runs[c.start(1)] + shift, runs[c.start(2)] + shift),
    )
    check = _fullmatch(tpl, header + line)
    if check is None or list(read_row(tpl, check.groups(), "")[0].items()) != list(values.items()):
        return None
    return tpl


def _as_items(row: tuple[dict[str, float], float | None, float | None]) -> tuple:
    return list(row[0].items()), row[1], row[2]


def read_row(tpl: Template, groups: tuple[str, ...], line: str) -> tuple[dict[str, float], float | None, float | None]:
    """(values, step, epoch) of a matched line."""
    values = {}
    for key, g, pct in tpl.values:
        v = float(groups[g - 1])
        values[key] = v / 100.0 if pct else v
    step, epoch = position(tpl, groups, line)
    return values, step, epoch


def position(tpl: Template, groups: tuple[str, ...], line: str | None) -> tuple[float | None, float | None]:
    """(step, epoch) of a matched line (``line``: its text, for a template whose position is read from the line)."""
    step = float(groups[tpl.step - 1]) if tpl.step is not None else None
    epoch = float(groups[tpl.epoch - 1]) if tpl.epoch is not None else None
    if tpl.where is not None:
        e, i, n = (int(groups[g - 1]) for g in tpl.where[:3])
        base = tpl.where[3]
        if tpl.split == "eval":  # (no step from the prefix: the line's own, if any)
            return step, float(e)
        return float((e - base) * n + i), float(e)
    if tpl.position and line is not None:
        pos = metriclogger.position(line)
        if pos is not None:  # always, for a line of the template's shape
            step = pos[0] if pos[0] is not None else step
            epoch = pos[1] if pos[1] is not None else epoch
    return step, epoch
