"""The families of log lines the text reader knows, in the order they look at a line: ``FAMILIES``.

Each row is one reader of a line: the family's module holds the reader (and its state, if it keeps one); the row
declares the cheap trigger a line must pass to reach the reader (``words`` it holds, ``first`` characters it may
start with) and the stage of the line loop (``text.py``) it belongs to. For each line read in full, ``read_text``
tries the rows in this order and stops at the first reader that takes the line (returns True): the order is the
precedence. A line no row took before reaches the last row, the key/value reader, which takes every line.

Stages: ``EVERY_LINE`` rows see every line read in full (colour codes and NUL bytes removed); ``WORDS`` rows only
lines holding one of ``text.TRIGGER_WORDS`` (the others are remembered as dead lines and skipped); ``SHOWN`` rows
those lines as the terminal shows them (the text after the last backspace). Before the first row, the line loop
itself gives an open traceback its body and an open table its rows, and ends a Keras bar at its total at any
line that is not Keras output (those states are looked at on every line: a reader call there would cost more than
the test; the templates must not take those lines either).

A family's state is created for each file, one per state class: rows with the same class share it (the Keras bar
and its ``Test loss:`` line). States that hold lines until the file has been read record them at its end
(``finish``), in the order of ``AT_END``. The table is compiled once (``TABLE``): the rows a line passes through,
by its first character.

Adding a family: its module, and one row here (CONTRIBUTING.md, "Adding a log family").
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from advisor.read.logs import (
    bare,
    caffe,
    hf_trainer,
    keras,
    keyvalue_record,
    megatron,
    mindspore,
    mixed_precision,
    mxnet,
    progress_bar,
    table,
    timm,
    tracebacks,
)

if TYPE_CHECKING:
    from advisor.read.logs.reading import Reading

#: (reading, the family's state (None without one), line, line lower-cased, line number) -> the line was taken
LineReader = Callable[["Reading", Any, str, str, int], bool]

EVERY_LINE, WORDS, SHOWN = 0, 1, 2


@dataclass(frozen=True)
class Family:
    """One row of the table: a family's reader of a line and the trigger a line must pass to reach it."""

    name: str
    read: LineReader
    #: the line holds one of these (an empty tuple: any line)
    words: tuple[str, ...] = ()
    #: ``words`` are looked for in the lower-cased line
    lower: bool = False
    #: the line's first character is one of these (None: any)
    first: Collection[str] | None = None
    stage: int = SHOWN
    #: the class of the family's state (one instance per file, shared by the rows naming it); None: no state
    state: type | None = None


FAMILIES: tuple[Family, ...] = (
    # every line: readers of lines that may hold no trigger word
    Family("bare", bare.read_line, first=bare.FIRST_CHARS, stage=EVERY_LINE, state=bare.BareState),
    Family(
        "validation_bar",
        progress_bar.read_validation_bar,
        words=("Validat",),
        first=progress_bar.FIRST_CHARS,
        stage=EVERY_LINE,
        state=progress_bar.BarState,
    ),
    # lines with a trigger word, as written
    Family(
        "traceback",
        tracebacks.read_start,
        words=("Traceback",),
        first="T",
        stage=WORDS,
        state=tracebacks.TracebackState,
    ),
    Family(
        "exception",
        tracebacks.read_exception,
        words=("error", "exception"),
        lower=True,
        stage=WORDS,
        state=tracebacks.TracebackState,
    ),
    Family("crash_dict", tracebacks.read_crash_dict, words=("{",), stage=WORDS, state=tracebacks.TracebackState),
    # lines with a trigger word, as the terminal shows them
    Family("mixed_precision", mixed_precision.read_line, words=("overflow",), lower=True),
    Family("mindspore_overflow", mindspore.read_overflow_flag, words=("overflow",), lower=True),
    Family("hf_trainer", hf_trainer.read_line, words=("{",)),
    Family("keras", keras.read_line, first=keras.FIRST_CHARS, state=keras.KerasState),
    Family("keras_test", keras.read_test, words=("Test",), first="T", state=keras.KerasState),
    Family("caffe", caffe.read_line, words=("Iteration ", "net output #"), state=caffe.CaffeState),
    Family("mxnet", mxnet.read_line, words=("Epoch[",)),
    Family("timm", timm.read_line, words=("Train: ", "Test: ["), state=timm.TimmState),
    Family("megatron", megatron.read_line, words=("loss at ",)),
    Family("table", table.read_header, words=(" ", "\t"), state=table.TableState),
    Family("keyvalue", keyvalue_record.read_line, state=keyvalue_record.KeyValueState),  # (takes every line)
)

#: the states that hold lines until the end of the file, in the order they record them there (the bare rows last:
#: they are named by the records near them, all of which must be recorded by then)
AT_END: tuple[type, ...] = (
    keras.KerasState,
    progress_bar.BarState,
    table.TableState,
    bare.BareState,
    tracebacks.TracebackState,
)

#: a row of the table compiled: (words, lower, reader, slot: where the reader's state is in a file's ``slots``); a
#: row without a reader marks where the stage named by its slot starts (``WORDS``, ``SHOWN``)
Row = tuple[tuple[str, ...], bool, LineReader | None, int]


@dataclass(frozen=True)
class Compiled:
    """A table of families compiled for the line loop: the rows a line passes through, by its first character."""

    #: the classes of the families' states, in table order
    state_classes: tuple[type, ...]
    #: for each first character a row names, the rows of a line starting with it, in order (their first characters
    #: tested here, once)
    by_first: dict[str, tuple[Row, ...]]
    #: the rows of a line starting with any other character
    others: tuple[Row, ...]
    at_end: tuple[type, ...]

    def new_states(self) -> dict[type, Any]:
        """A fresh state of each class the table names, for one file, in table order."""
        return {cls: cls() for cls in self.state_classes}

    @staticmethod
    def slots(states: dict[type, Any]) -> list[Any]:
        """The states of a file where the compiled rows find them (slot 0: None, for the rows without a state)."""
        return [None, *states.values()]


def compile_table(families: tuple[Family, ...], at_end: tuple[type, ...]) -> Compiled:
    """The table compiled; ValueError when it breaks its rules: rows in stage order, a name once, the last row one
    that takes every line, ``at_end`` the states with a ``finish``, each once."""
    if [f.stage for f in families] != sorted(f.stage for f in families):
        raise ValueError("the rows are not in stage order")
    if len({f.name for f in families}) != len(families):
        raise ValueError("two rows of one name")
    last = families[-1]
    if last.stage != SHOWN or last.words or last.first is not None:
        raise ValueError(f"the last row ({last.name}) must take every line")
    state_classes = tuple(dict.fromkeys(f.state for f in families if f.state is not None))
    finishing = [cls for cls in state_classes if hasattr(cls, "finish")]
    if sorted(map(id, finishing)) != sorted(map(id, at_end)):
        raise ValueError("at_end must list each state class with a finish, once")
    compiled: list[tuple[frozenset[str] | None, Row]] = []
    stage = EVERY_LINE
    for f in families:
        while stage < f.stage:
            stage += 1
            compiled.append((None, ((), False, None, stage)))
        first = None if f.first is None else frozenset(f.first)  # (a string would hold "": any line's [:1])
        slot = 0 if f.state is None else state_classes.index(f.state) + 1
        compiled.append((first, (f.words, f.lower, f.read, slot)))

    def passing(c: str) -> tuple[Row, ...]:
        return tuple(row for first, row in compiled if first is None or c in first)

    chars = {c for first, _ in compiled if first is not None for c in first}
    return Compiled(state_classes, {c: passing(c) for c in chars}, passing(""), at_end)


#: what ``read_text`` reads with
TABLE = compile_table(FAMILIES, AT_END)
