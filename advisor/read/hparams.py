"""Hyper-parameter files (hparams/config/args .yaml/.json) -> flat key/value dicts.

YAML is read by read/yaml_mapping.py (a ``yaml.SafeLoader`` subclass only: tags
that would build Python objects are refused), with a size cap, an alias cap
against "billion laughs" anchor bombs and a nesting cap (read/hparam_limits.py). JSON and YAML nesting deeper than
``MAX_DEPTH`` is refused with a reason instead of recursing.
"""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path
from typing import Any

from advisor.read.hparam_limits import MAX_BYTES, MAX_DEPTH, MAX_NODES, HparamReadError
from advisor.read.safe import UnsafeInput, loads_json

HPARAM_FILE_NAMES = (
    "advisor_hparams.json",  # what advisor's capture hook and callbacks recorded (advisor/capture/settings.py)
    "hparams.yaml",
    "hparams.yml",
    "hparams.json",
    "config.yaml",
    "config.yml",
    "config.json",
    "args.json",
    "args.yaml",
    "training_args.json",
    "training_args.bin",  # Hugging Face Trainer's torch.save(args): read without unpickling (read/pickled_settings.py)
    # MindSpore model zoo (resnet50_cifar10_config.yaml, default_config.yaml), DeepSpeed (ds_config_zero2.json)
    "*_config.yaml",
    "*_config.yml",
    "ds_config*.json",
    "deepspeed*.json",
    "*.summary.*_lineage",  # MindSpore SummaryCollector's lineage (read.mindinsight)
)

#: reading order: what the framework held (advisor's capture) first, files named for hyper-parameters next, model
#: configs last
PRIORITY = {"advisor_hparams": -1, "hparams": 0, "training_args": 1, "args": 2, "config": 4}
#: file name families -> (priority, dialect): what a key means can depend on the file it is in
_FAMILIES = ((("ds_config", "deepspeed"), 3, "deepspeed"),)


def _json_pairs(notes: list[str]):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                notes.append(f"key '{k}' appears twice (the last one wins, as JSON parsers do)")
            out[k] = v
        return out

    return hook


_JSON_KEY = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"\s*:')


def _json_key_lines(text: str, data: Any, out: dict[str, int]) -> None:
    """Lines of the keys of parsed JSON (JSON parsers keep no positions).

    The keys are met in the text in the order the parser returned them, so each key is looked for
    from where the previous one was found: one pass, linear in the size of the file.
    """
    found = _json_keys_by_line(text)
    pos = 0

    def walk(node: Any, prefix: str | None) -> None:
        nonlocal pos
        items = node.items() if isinstance(node, dict) else ((None, v) for v in node) if isinstance(node, list) else ()
        for key, value in items:
            if key is not None:
                want = str(key)
                j, end = pos, min(len(found), pos + 1000)
                while j < end and _json_unescape(found[j][0]) != want:
                    j += 1
                if j == end:
                    continue  # not met in order (a duplicated key): no line for it
                pos = j + 1
                if prefix is not None:
                    out[f"{prefix}{key}"] = found[j][1]
            # keys inside lists are not named by ``flatten``: walked past, not recorded
            walk(value, f"{prefix}{key}." if prefix is not None and key is not None else None)

    walk(data, "")


def _json_keys_by_line(text: str) -> list[tuple[str, int]]:
    """(key, line) of every ``"key":`` in a large text, counting lines as it goes."""
    out: list[tuple[str, int]] = []
    for i, line in enumerate(text.split("\n")):
        out.extend((m.group(1), i + 1) for m in _JSON_KEY.finditer(line))
    return out


def _json_unescape(raw: str) -> str:
    if "\\" not in raw:
        return raw
    try:
        return json.loads(f'"{raw}"')
    except ValueError:
        return raw


def load_mapping(
    path: Path, notes: list[str] | None = None, lines: dict[str, int] | None = None, raw: bytes | None = None
) -> dict[str, Any]:
    """The file's top-level mapping. Raises HparamReadError with a reason.

    ``notes`` collects what a reader should know but that does not stop it (duplicated keys);
    ``lines`` receives the line of each (dotted, as ``flatten`` names them) key; ``raw``: the file's bytes,
    already read by the caller (then ``path`` only names it and gives its suffix).
    """
    notes = notes if notes is not None else []
    size = path.stat().st_size if raw is None else len(raw)
    if size > MAX_BYTES:
        raise HparamReadError(f"file is {size} bytes, larger than the {MAX_BYTES}-byte limit for a config file")
    data_bytes = path.read_bytes() if raw is None else raw
    if path.name.endswith("_lineage"):  # the reader is imported only for such a file
        from advisor.read.mindinsight import is_lineage, lineage_settings
        from advisor.read.protobuf_wire import WireError

        if is_lineage(path.name):
            try:
                return lineage_settings(data_bytes, notes)
            except WireError as exc:
                raise HparamReadError(f"not a MindSpore lineage file: {exc}") from None
    if path.suffix.lower() == ".bin":
        from advisor.read.pickled_settings import PickledSettingsError, read_training_args

        try:
            return read_training_args(data_bytes)
        except PickledSettingsError as exc:
            raise HparamReadError(str(exc)) from None
    text = data_bytes.decode("utf-8", errors="strict")
    try:
        if path.suffix.lower() == ".json":
            data = loads_json(text, notes, object_pairs_hook=_json_pairs(notes))
        else:
            from advisor.read.yaml_mapping import load_yaml  # PyYAML is imported only for a YAML file

            data = load_yaml(text, notes, lines)
    except HparamReadError:
        raise
    except UnsafeInput as exc:
        raise HparamReadError(str(exc)) from None
    except RecursionError:
        raise HparamReadError(f"nested deeper than Python can parse (over {MAX_DEPTH} levels)") from None
    except json.JSONDecodeError as exc:
        raise HparamReadError(
            f"not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {str(exc).splitlines()[0]}"
        ) from None
    except (ValueError, OverflowError) as exc:  # a value no constructor can build: a date 2001-13-45
        raise HparamReadError(f"a value cannot be read: {str(exc).splitlines()[0][:200]}") from None
    if not isinstance(data, dict):
        raise HparamReadError(f"expected a mapping of names to values at the top, got {type(data).__name__}")
    nodes = _expanded_size(data, 0, {})
    if nodes > MAX_NODES:
        raise HparamReadError(
            f"expands to {nodes} values (limit {MAX_NODES}); YAML aliases multiplying a structure (an anchor bomb?)"
        )
    if lines is not None and path.suffix.lower() == ".json":
        try:
            _json_key_lines(text, data, lines)
        except Exception:  # noqa: BLE001 - positions are a courtesy; the values were read
            lines.clear()
    return data


def _expanded_size(value: Any, depth: int, memo: dict[int, int]) -> int:
    """Number of values once aliases are expanded; shared objects are counted once per use, walked once."""
    if depth > MAX_DEPTH:
        raise HparamReadError(f"nested more than {MAX_DEPTH} levels deep; not a hyper-parameter file")
    if not isinstance(value, (dict, list)):
        return 1
    key = id(value)
    if key not in memo:
        children = value.values() if isinstance(value, dict) else value
        memo[key] = 1 + sum(_expanded_size(v, depth + 1, memo) for v in children)
    return memo[key]


def flatten(data: dict[str, Any], prefix: str = "", keep_numbered: bool = False) -> dict[str, Any]:
    """Nested mappings -> dotted keys: {'optimizer': {'lr': 1}} -> {'optimizer.lr': 1}.

    ``keep_numbered``: a mapping whose keys are all numbers (Hugging Face ``id2label``) stays one value.
    """
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"  # non-string keys (YAML ints, bools) become text
        if isinstance(value, dict) and not (keep_numbered and numbered_mapping(value)):
            out.update(flatten(value, name + ".", keep_numbered))
        else:
            out[name] = value
    return out


def numbered_mapping(mapping: dict) -> bool:
    """A non-empty mapping whose keys are all numbers (``id2label``): one value, not sections."""
    return bool(mapping) and all(
        (isinstance(k, int) and not isinstance(k, bool)) or (isinstance(k, str) and k.isdigit()) for k in mapping
    )


def is_hparam_file(name: str) -> bool:
    """Whether a file of this name is read as hyper-parameters (HPARAM_FILE_NAMES holds shell patterns)."""
    return any(fnmatch.fnmatch(name.lower(), pattern) for pattern in HPARAM_FILE_NAMES)


def file_priority(name: str) -> int:
    """Sort key: hparams.* before training_args.json before args.* and a model zoo's *_config.yaml,
    then DeepSpeed's ds_config*.json, then config.* (often a model's own configuration)."""
    stem = name.lower().rsplit(".", 1)[0]
    if stem in PRIORITY:
        return PRIORITY[stem]
    for prefixes, priority, _ in _FAMILIES:
        if stem.startswith(prefixes):
            return priority
    return 2 if stem.endswith("_config") else len(PRIORITY) + 1


def file_dialect(name: str) -> str | None:
    """The tool whose conventions a config file follows, when its name says so ('deepspeed')."""
    stem = name.lower().rsplit(".", 1)[0]
    return next((d for prefixes, _, d in _FAMILIES if stem.startswith(prefixes)), None)
