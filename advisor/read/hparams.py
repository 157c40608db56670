"""Hyper-parameter files (hparams/config/args .yaml/.json) -> flat key/value dicts.

YAML is read with a ``yaml.SafeLoader`` subclass only (tags that would build
Python objects are refused), with a size cap, an alias cap against "billion
laughs" anchor bombs and a nesting cap. JSON and YAML nesting deeper than
``MAX_DEPTH`` is refused with a reason instead of recursing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from advisor.read.safe import UnsafeInput, loads_json, yaml_int

MAX_BYTES = 5_000_000
MAX_ALIASES = 100
MAX_DEPTH = 32
MAX_NODES = 100_000  # values after expanding aliases: a config has hundreds

HPARAM_FILE_NAMES = (
    "hparams.yaml", "hparams.yml", "hparams.json", "config.yaml", "config.yml", "config.json",
    "args.json", "args.yaml", "training_args.json",
)

#: reading order: files named for hyper-parameters first, model configs last
PRIORITY = {"hparams": 0, "training_args": 1, "args": 2, "config": 3}


class HparamReadError(ValueError):
    pass


class _CountingLoader(yaml.SafeLoader):
    """SafeLoader that refuses documents with many aliases (anchor bombs)."""

    def compose_node(self, parent, index):  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            self._aliases = getattr(self, "_aliases", 0) + 1
            if self._aliases > MAX_ALIASES:
                raise HparamReadError(f"more than {MAX_ALIASES} YAML aliases (an anchor bomb?)")
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):  # type: ignore[override]
        """As SafeLoader (the last of a duplicated key wins), noting each duplicated key with its line."""
        seen: set = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    self.notes.append(f"key '{key_node.value}' appears twice (line {key_node.start_mark.line + 1} "
                                      "wins, as YAML loaders do)")
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


#: an integer of thousands of digits is read as +-inf with a note (not a ValueError for the whole file)
_CountingLoader.add_constructor("tag:yaml.org,2002:int", yaml_int)


def _safe_load(text: str, notes: list[str] | None = None) -> Any:
    """``yaml.safe_load`` with the alias-counting SafeLoader subclass (no object-building tags)."""
    loader = _CountingLoader(text)
    loader.notes = notes if notes is not None else []
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _json_pairs(notes: list[str]):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                notes.append(f"key '{k}' appears twice (the last one wins, as JSON parsers do)")
            out[k] = v
        return out
    return hook


def _yaml_key_lines(node: Any, prefix: str, out: dict[str, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                name = f"{prefix}{key_node.value}"
                out[name] = key_node.start_mark.line + 1  # a duplicated key: the last one, as its value
                _yaml_key_lines(value_node, name + ".", out)


def _json_key_lines(text: str, data: Any, prefix: str, start: int, out: dict[str, int]) -> None:
    """Lines of the keys of parsed JSON, found in order in the text (JSON parsers keep no positions)."""
    if not isinstance(data, dict):
        return
    lines = text.split("\n")
    for key, value in data.items():
        needle = json.dumps(str(key)) + ":"
        for i in range(start, len(lines)):
            if needle in lines[i].replace('": ', '":').replace('" :', '":'):
                out[f"{prefix}{key}"] = i + 1
                _json_key_lines(text, value, f"{prefix}{key}.", i, out)
                break


def load_mapping(path: Path, notes: list[str] | None = None, lines: dict[str, int] | None = None) -> dict[str, Any]:
    """The file's top-level mapping. Raises HparamReadError with a reason.

    ``notes`` collects what a reader should know but that does not stop it (duplicated keys);
    ``lines`` receives the line of each (dotted, as ``flatten`` names them) key.
    """
    notes = notes if notes is not None else []
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise HparamReadError(f"file is {size} bytes, larger than the {MAX_BYTES}-byte limit for a config file")
    text = path.read_bytes().decode("utf-8", errors="strict")
    try:
        if path.suffix.lower() == ".json":
            data = loads_json(text, notes, object_pairs_hook=_json_pairs(notes))
        else:
            data = _safe_load(text, notes)
    except HparamReadError:
        raise
    except UnsafeInput as exc:
        raise HparamReadError(str(exc)) from None
    except RecursionError:
        raise HparamReadError(f"nested deeper than Python can parse (over {MAX_DEPTH} levels)") from None
    except yaml.constructor.ConstructorError as exc:
        raise HparamReadError(f"YAML tag refused ({exc.problem}); only plain mappings, lists and scalars are read") from None
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise HparamReadError(f"not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: "
                              f"{str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise HparamReadError(f"expected a mapping of names to values at the top, got {type(data).__name__}")
    nodes = _expanded_size(data, 0, {})
    if nodes > MAX_NODES:
        raise HparamReadError(f"expands to {nodes} values (limit {MAX_NODES}); YAML aliases multiplying "
                              "a structure (an anchor bomb?)")
    if lines is not None:
        try:
            if path.suffix.lower() == ".json":
                _json_key_lines(text, data, "", 0, lines)
            else:
                loader = _CountingLoader(text)
                loader.notes = []
                try:
                    _yaml_key_lines(loader.get_single_node(), "", lines)
                finally:
                    loader.dispose()
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


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings -> dotted keys: {'optimizer': {'lr': 1}} -> {'optimizer.lr': 1}."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"  # non-string keys (YAML ints, bools) become text
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def file_priority(name: str) -> int:
    """Sort key: hparams.* before training_args.json before args.* before config.*."""
    stem = name.lower().rsplit(".", 1)[0]
    return PRIORITY.get(stem, len(PRIORITY))
