"""``training_args.bin`` -> the settings it holds, read without unpickling.

Hugging Face ``Trainer`` saves its ``TrainingArguments`` with ``torch.save(args, "training_args.bin")`` in
the output folder and in every ``checkpoint-N/``: a zip archive whose ``<name>/data.pkl`` is a pickle of
the dataclass. Unpickling it would import and call whatever the file names (pickle's ``GLOBAL`` and
``REDUCE``), and ``torch.load(weights_only=True)`` refuses the class. So the opcodes are walked with
``pickletools.genops``, which only parses, over a stack of plain values:

- text, numbers, booleans, ``None``, lists, tuples and dicts are rebuilt as they are;
- a class or function the file names is kept as its dotted name, never imported;
- calling one (``REDUCE``, ``NEWOBJ``) with one text or number argument gives that argument: an enum
  member such as ``SchedulerType('linear')`` or ``IntervalStrategy('epoch')`` becomes ``'linear'``,
  ``'epoch'``, the value ``TrainingArguments.to_dict()`` writes for it; any other call gives an object
  whose ``BUILD`` state (a dict) is kept, or nothing;
- the object at the top is the mapping returned: ``TrainingArguments``' fields by name, less its private
  state and, as ``TrainingArguments.to_dict()`` masks them, access tokens (``hub_token``).

Sizes are capped (the archive, the pickle member, the number of opcodes); anything else, a legacy
(non-zip) ``torch.save`` file or an opcode outside the pickle protocols, is refused with a reason.
"""

from __future__ import annotations

import io
import pickletools
import zipfile
from typing import Any

#: a TrainingArguments pickle is ~4 KB with ~700 opcodes
MAX_PICKLE_BYTES = 1_000_000
MAX_OPS = 200_000


class PickledSettingsError(ValueError):
    pass


class _Mark:
    pass


_MARK = _Mark()


class _Name:
    """A class or function named by the pickle (``module qualname``); never imported."""

    def __init__(self, dotted: str) -> None:
        self.dotted = dotted


class _Obj:
    """An object the pickle would build: its class name and the state ``BUILD`` gives it."""

    def __init__(self, cls: Any) -> None:
        self.cls = cls.dotted if isinstance(cls, _Name) else None
        self.state: Any = None


def read_training_args(data: bytes) -> dict[str, Any]:
    """The fields of a ``torch.save``'d object (``training_args.bin``) as a plain mapping.

    Raises PickledSettingsError with a reason."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise PickledSettingsError(
            "not a zip archive as torch.save writes (a legacy torch.save file is not read)"
        ) from None
    with archive:
        members = [i for i in archive.infolist() if i.filename.endswith("data.pkl") and i.filename.count("/") <= 1]
        if len(members) != 1:
            raise PickledSettingsError("no single data.pkl in the archive (not written by torch.save)")
        info = members[0]
        if info.file_size > MAX_PICKLE_BYTES:
            raise PickledSettingsError(
                f"{info.filename} is {info.file_size} bytes, above the {MAX_PICKLE_BYTES}-byte limit for settings"
            )
        with archive.open(info) as fh:
            pickled = fh.read(MAX_PICKLE_BYTES + 1)
    top = _plain(_walk(pickled))
    if not isinstance(top, dict):
        raise PickledSettingsError(f"the saved object is a {type(top).__name__}, not a mapping of settings")
    # what TrainingArguments.to_dict() leaves out or masks: private state and access tokens
    return {k: v for k, v in top.items() if not k.startswith("_") and not k.endswith("_token")}


def _walk(pickled: bytes) -> Any:
    """Run the pickle's opcodes over plain values; the object it would return."""
    stack: list[Any] = []
    memo: dict[int, Any] = {}
    try:
        for n, (op, arg, _pos) in enumerate(pickletools.genops(pickled)):
            if n > MAX_OPS:
                raise PickledSettingsError(f"more than {MAX_OPS} pickle opcodes; not a settings object")
            name = op.name
            if name == "STOP":
                return stack.pop()
            _step(name, arg, stack, memo)
    except PickledSettingsError:
        raise
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        raise PickledSettingsError(f"pickle cannot be read: {exc}") from None
    raise PickledSettingsError("pickle ends without STOP")


_SCALARS = {
    "INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT", "STRING", "BINSTRING",
    "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES",
    "BINBYTES8", "BYTEARRAY8",
}  # fmt: skip
_IGNORED = {"PROTO", "FRAME"}


def _pop_mark(stack: list[Any]) -> list[Any]:
    items: list[Any] = []
    while True:
        value = stack.pop()
        if value is _MARK:
            items.reverse()
            return items
        items.append(value)


def _step(name: str, arg: Any, stack: list[Any], memo: dict[int, Any]) -> None:  # noqa: C901 - one opcode table
    if name in _IGNORED:
        return
    if name in _SCALARS:
        stack.append(arg)
    elif name == "NONE":
        stack.append(None)
    elif name in ("NEWTRUE", "NEWFALSE"):
        stack.append(name == "NEWTRUE")
    elif name == "MARK":
        stack.append(_MARK)
    elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
        memo[int(arg)] = stack[-1]
    elif name == "MEMOIZE":
        memo[len(memo)] = stack[-1]
    elif name in ("BINGET", "LONG_BINGET", "GET"):
        stack.append(memo[int(arg)])
    elif name == "EMPTY_TUPLE":
        stack.append(())
    elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
        k = int(name[-1])
        items = stack[-k:]
        del stack[-k:]
        stack.append(tuple(items))
    elif name == "TUPLE":
        stack.append(tuple(_pop_mark(stack)))
    elif name == "EMPTY_LIST":
        stack.append([])
    elif name == "LIST":
        stack.append(_pop_mark(stack))
    elif name == "APPEND":
        value = stack.pop()
        _as(stack[-1], list).append(value)
    elif name == "APPENDS":
        items = _pop_mark(stack)
        _as(stack[-1], list).extend(items)
    elif name in ("EMPTY_SET", "FROZENSET"):
        stack.append([] if name == "EMPTY_SET" else _pop_mark(stack))
    elif name == "ADDITEMS":
        items = _pop_mark(stack)
        _as(stack[-1], list).extend(items)
    elif name == "EMPTY_DICT":
        stack.append({})
    elif name == "DICT":
        items = _pop_mark(stack)
        stack.append(_pairs({}, items))
    elif name == "SETITEM":
        value, key = stack.pop(), stack.pop()
        _pairs(_as(stack[-1], dict), [key, value])
    elif name == "SETITEMS":
        items = _pop_mark(stack)
        _pairs(_as(stack[-1], dict), items)
    elif name == "GLOBAL":
        stack.append(_Name(str(arg).replace(" ", ".")))
    elif name == "STACK_GLOBAL":
        qual, module = stack.pop(), stack.pop()
        stack.append(_Name(f"{module}.{qual}"))
    elif name in ("REDUCE", "NEWOBJ"):
        args, cls = stack.pop(), stack.pop()
        stack.append(_call(cls, args))
    elif name == "NEWOBJ_EX":
        _kwargs, args, cls = stack.pop(), stack.pop(), stack.pop()
        stack.append(_call(cls, args))
    elif name == "BUILD":
        state = stack.pop()
        if isinstance(stack[-1], _Obj):
            stack[-1].state = state
    elif name in ("BINPERSID", "PERSID"):
        if name == "BINPERSID":
            stack.pop()
        stack.append(_Obj(None))  # a tensor's storage: not a setting
    elif name == "POP":
        stack.pop()
    elif name == "POP_MARK":
        _pop_mark(stack)
    elif name == "DUP":
        stack.append(stack[-1])
    else:  # INST, OBJ, EXT*, buffers: not what torch.save writes for a settings object
        raise PickledSettingsError(f"pickle opcode {name} is not read")


def _as(value: Any, kind: type) -> Any:
    if isinstance(value, kind):
        return value
    if isinstance(value, _Obj):  # a list/dict subclass instance: its items are not settings
        return kind()
    raise PickledSettingsError(f"pickle adds items to a {type(value).__name__}")


def _pairs(target: dict, items: list[Any]) -> dict:
    for key, value in zip(items[::2], items[1::2]):
        if isinstance(key, (str, int, float, bool)) or key is None:
            target[key] = value
    return target


def _call(cls: Any, args: Any) -> Any:
    """What calling a named class gives: the value of an enum member, else an object to be given state."""
    if isinstance(args, tuple) and len(args) == 1 and isinstance(args[0], (str, int, float)) and cls is not None:
        if not isinstance(args[0], bool):
            return args[0]
    return _Obj(cls)


def _plain(value: Any, budget: list[int] | None = None, depth: int = 0) -> Any:
    """Plain values only: objects become their state mapping (or are left out), tuples lists. ``budget``: how
    many values may still be made (a value the pickle shares is copied at each use, so this bounds the copies)."""
    budget = budget if budget is not None else [MAX_OPS]
    budget[0] -= 1
    if budget[0] < 0 or depth > 32:
        raise PickledSettingsError("the saved object is nested or shared too deeply for a settings object")
    if isinstance(value, _Obj):
        return _plain(value.state, budget, depth + 1) if isinstance(value.state, dict) else None
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            p = _plain(v, budget, depth + 1)
            if p is not None or v is None:
                out[str(k)] = p
        return out
    if isinstance(value, (list, tuple)):
        return [p for p in (_plain(v, budget, depth + 1) for v in value) if p is not None]
    if isinstance(value, (bytes, bytearray, _Name)):
        return None
    return value
