"""YAML configuration files -> Python values, safely (the YAML half of read/hparams.py).

A ``yaml.SafeLoader`` subclass only (tags that would build Python objects are refused), with an alias cap
against "billion laughs" anchor bombs and a nesting cap. One Python tag is read, as the list it holds:
``!!python/tuple``, which Lightning's ``save_hyperparameters`` writes for any tuple (``betas: !!python/tuple
[0.9, 0.999]``); building a list of plain values runs no code. Kept apart from read/hparams.py so that PyYAML is
imported only when a run has a YAML file: a run of JSON configs and logs does not load it.
"""

from __future__ import annotations

from typing import Any

import yaml

from advisor.read.hparam_limits import MAX_ALIASES, MAX_DEPTH, MAX_NODES, HparamReadError
from advisor.read.safe import yaml_int


def load_yaml(text: str, notes: list[str] | None = None, lines: dict[str, int] | None = None) -> Any:
    """The first document of ``text``; raises HparamReadError for a refused tag, invalid YAML, deep nesting
    or an anchor bomb (other errors, such as a value no constructor can build, propagate to the caller)."""
    try:
        return _safe_load(text, notes, lines)
    except yaml.constructor.ConstructorError as exc:
        raise HparamReadError(
            f"YAML tag refused ({exc.problem}); only plain mappings, lists and scalars are read"
        ) from None
    except yaml.YAMLError as exc:
        if "flow level" in str(exc):  # PyYAML >= 6.0.4 caps flow nesting itself ("while increasing flow level")
            raise HparamReadError(f"nested more than {MAX_DEPTH} levels deep; not a hyper-parameter file") from None
        raise HparamReadError(f"not valid YAML: {str(exc).splitlines()[0]}") from None


def _construct_tuple(self, node):  # type: ignore[no-untyped-def]
    """``!!python/tuple`` as a list of its (safely constructed) items."""
    return self.construct_sequence(node, deep=True)


_TUPLE_TAG = "tag:yaml.org,2002:python/tuple"


def _construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
    """As SafeLoader (the last of a duplicated key wins), noting each duplicated key with its line."""
    seen: set = set()
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            if key_node.value in seen:
                self.notes.append(
                    f"key '{key_node.value}' appears twice (line {key_node.start_mark.line + 1} "
                    "wins, as YAML loaders do)"
                )
            seen.add(key_node.value)
    return yaml.SafeLoader.construct_mapping(self, node, deep=deep)


def _flatten_mapping(self, node):  # type: ignore[no-untyped-def]
    """As SafeLoader (merge keys ``<<: [*a, *a]`` copy the merged pairs into the mapping), refusing a mapping whose
    merges make it more than MAX_NODES pairs: merges of merges multiply like aliases (a merge-key bomb)."""
    yaml.SafeLoader.flatten_mapping(self, node)
    if len(node.value) > MAX_NODES:
        raise HparamReadError(
            f"a mapping of more than {MAX_NODES} keys once its merge keys ('<<') are expanded (an anchor bomb?)"
        )


class _CountingLoader(yaml.SafeLoader):
    """SafeLoader that refuses documents with many aliases (anchor bombs)."""

    def compose_node(self, parent, index):  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            self._aliases = getattr(self, "_aliases", 0) + 1
            if self._aliases > MAX_ALIASES:
                raise HparamReadError(f"more than {MAX_ALIASES} YAML aliases (an anchor bomb?)")
        return super().compose_node(parent, index)

    construct_mapping = _construct_mapping  # type: ignore[assignment]
    flatten_mapping = _flatten_mapping  # type: ignore[assignment]


_CountingLoader.add_constructor("tag:yaml.org,2002:int", yaml_int)  # beyond the float range: +-inf, noted
_CountingLoader.add_constructor(_TUPLE_TAG, _construct_tuple)

_CLoader = getattr(yaml, "CSafeLoader", None)  # libyaml's parser and composer, when PyYAML was built with it

if _CLoader is not None:

    class _FastLoader(_CLoader):  # type: ignore[valid-type,misc]
        """libyaml's safe loader (several times faster), used only on a text ``_checked_shallow`` has passed:
        its composer recurses in C, where a deeply nested document would crash the process."""

        construct_mapping = _construct_mapping  # type: ignore[assignment]
        flatten_mapping = _flatten_mapping  # type: ignore[assignment]

    _FastLoader.add_constructor("tag:yaml.org,2002:int", yaml_int)
    _FastLoader.add_constructor(_TUPLE_TAG, _construct_tuple)


def _checked_shallow(text: str) -> None:
    """Walk the first document's events with libyaml's parser (iterative: no recursion, nothing built);
    raise HparamReadError for nesting deeper than MAX_DEPTH or more than MAX_ALIASES aliases."""
    parser = _CLoader(text)  # type: ignore[misc]
    depth = aliases = 0
    try:
        while True:
            event = parser.get_event()
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise HparamReadError(f"nested more than {MAX_DEPTH} levels deep; not a hyper-parameter file")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise HparamReadError(f"more than {MAX_ALIASES} YAML aliases (an anchor bomb?)")
            elif isinstance(event, (yaml.DocumentEndEvent, yaml.StreamEndEvent)):
                return
    finally:
        parser.dispose()


def _safe_load(text: str, notes: list[str] | None = None, lines: dict[str, int] | None = None) -> Any:
    """``yaml.safe_load`` (no object-building tags), refusing anchor bombs and deep nesting.

    With libyaml, the first document's events are checked first (depth, aliases), then it is loaded by
    libyaml; without it, by the pure-Python loader that counts aliases as it composes. The text is
    composed once: ``lines`` (when given) receives the line of each dotted key from the same nodes.
    Of a stream of several documents only the first is read (the MindSpore model zoo writes the values,
    then a document of help texts and one of choices, separated by ``---``).
    """
    if _CLoader is not None:
        _checked_shallow(text)
        loader = _FastLoader(text)
    else:
        loader = _CountingLoader(text)
    loader.notes = notes if notes is not None else []
    try:
        node = loader.get_node() if loader.check_node() else None
        if node is None:
            return None
        try:
            more = loader.check_node()
        except yaml.YAMLError:
            more = True
        if more:  # the first document's node ends where the next document's '---' is
            loader.notes.append(
                f"only the first YAML document is read (more follow from line {node.end_mark.line + 1})"
            )
        data = loader.construct_document(node)
        if lines is not None:
            _yaml_key_lines(node, "", lines)
        return data
    finally:
        loader.dispose()


def _yaml_key_lines(node: Any, prefix: str, out: dict[str, int]) -> None:
    """The line of each dotted key of ``node``'s mappings. A key reached through aliases is named once per path, as
    ``flatten`` names it: past MAX_NODES names, HparamReadError (an anchor bomb)."""
    stack = [(node, prefix)]
    named = 0
    while stack:
        node, prefix = stack.pop()
        if not isinstance(node, yaml.MappingNode):
            continue
        inner = []
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                named += 1
                if named > MAX_NODES:
                    raise HparamReadError(
                        f"expands to more than {MAX_NODES} values once aliases are expanded (an anchor bomb?)"
                    )
                name = f"{prefix}{key_node.value}"
                out[name] = key_node.start_mark.line + 1  # a duplicated key: the last one, as its value
                inner.append((value_node, name + "."))
        stack += reversed(inner)  # walked in the file's order: a later duplicated key's lines win
