"""The YAML loaders of rule files: positions kept, duplicate keys, anchor bombs and deep nesting refused.

Imported by the rules' parser (rulebase/load.py) when it parses a rule file, so that a diagnosis whose rules
come from the rule cache does not import PyYAML.
"""

from __future__ import annotations

import yaml

from advisor.read.safe import yaml_int
from advisor.rulebase import schema as S
from advisor.rulebase.positions import PosDict, PosList

MAX_ALIASES = 50
MAX_NESTING = 40  # mapping/list levels in a user's rule file


def _mark(node: yaml.Node) -> S.Pos:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


class TooManyRules(yaml.MarkedYAMLError):
    """The file holds more rules than the loader was told to read (raised at the first rule past the limit)."""


class Loader(yaml.SafeLoader):
    """SafeLoader that keeps positions, refuses duplicate keys and anchor bombs, and counts the rules (the items
    of a top-level list) as it composes them: past ``max_rules`` it stops with TooManyRules, before the rest of
    the file is parsed."""

    def __init__(self, stream: str, max_rules: int | None = None) -> None:
        super().__init__(stream)
        self.problems: list[tuple[S.Pos, str, str]] = []
        self._alias_count = 0
        self.max_rules = max_rules
        #: rules composed so far (a file holding one mapping: 0 until it is parsed; the caller counts it as 1)
        self.rule_count = 0

    def compose_node(self, parent, index):  # type: ignore[override]
        if isinstance(parent, yaml.SequenceNode) and getattr(self, "_depth", 0) == 1:  # an item of the top list
            self.rule_count += 1
            if self.max_rules is not None and self.rule_count > self.max_rules:
                raise TooManyRules(
                    problem=f"more than {self.max_rules:,} rules", problem_mark=self.peek_event().start_mark
                )
        if self.check_event(yaml.AliasEvent):
            self._alias_count += 1
            if self._alias_count > MAX_ALIASES:
                raise yaml.YAMLError(f"more than {MAX_ALIASES} aliases (an anchor bomb?)")
        self._depth = getattr(self, "_depth", 0) + 1
        try:  # a bounded nesting depth: a rule has a handful of levels, recursion would crash at ~1000
            if self._depth > MAX_NESTING:
                raise yaml.MarkedYAMLError(
                    problem=f"nested more than {MAX_NESTING} levels deep", problem_mark=self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _construct_map(loader: Loader, node: yaml.MappingNode):
    loader.flatten_mapping(node)
    data = PosDict()
    data.start = _mark(node)
    yield data
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, (str, int, float, bool)) or key is None:
            loader.problems.append((_mark(key_node), "yaml", f"keys must be plain names, got {key!r}"))
            continue
        if key in data:
            loader.problems.append((_mark(key_node), "yaml", f"duplicate key '{key}'"))
        data[key] = loader.construct_object(value_node, deep=True)
        data.key_pos[key] = _mark(key_node)
        data.val_pos[key] = _mark(value_node)


def _construct_seq(loader: Loader, node: yaml.SequenceNode):
    data = PosList()
    data.start = _mark(node)
    yield data
    for child in node.value:
        data.append(loader.construct_object(child, deep=True))
        data.pos.append(_mark(child))


Loader.add_constructor("tag:yaml.org,2002:map", _construct_map)
Loader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)
Loader.add_constructor("tag:yaml.org,2002:int", yaml_int)  # 5000 digits: +-inf, not a ValueError


def count_rules(text: str, limit: int) -> tuple[int, S.Pos | None]:
    """The rules (items of the top-level list, or the file's one mapping) of a file, counted from libyaml's
    events before any is built:
    (count, None) when they are at most ``limit``; (limit + 1, position of the first rule past it) otherwise.
    About ten times faster than composing the file with ``Loader``; text libyaml refuses (or no libyaml) gives
    (0, None), and the full parse reports it and counts again."""
    c_loader = getattr(yaml, "CSafeLoader", None)
    if c_loader is None:  # pragma: no cover - PyYAML built without libyaml: Loader counts as it composes
        return 0, None
    depth = count = 0
    try:
        for event in yaml.parse(text, Loader=c_loader):
            if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
                continue
            if (depth == 1 and isinstance(event, _ITEM_EVENTS)) or (  # an item of the top list, or a file
                depth == 0 and isinstance(event, yaml.MappingStartEvent)  # that is one rule
            ):
                count += 1
                if count > limit:
                    return count, _event_pos(event)
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
    except yaml.YAMLError:
        return 0, None
    return count, None


_ITEM_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.ScalarEvent, yaml.AliasEvent)


def _event_pos(event: yaml.Event) -> S.Pos:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark else (1, 1)


_CSafeLoader = getattr(yaml, "CSafeLoader", None)
if _CSafeLoader is not None:

    class FastLoader(_CSafeLoader):  # type: ignore[misc, valid-type]
        """libyaml's parser with the same position-keeping constructors.

        Used for the built-in rule base only (about 10x faster than the pure-Python
        parser); user files keep Loader, which also counts aliases against bombs.
        """

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.problems: list[tuple[S.Pos, str, str]] = []

    FastLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
    FastLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)
else:  # pragma: no cover - PyYAML built without libyaml
    FastLoader = Loader  # type: ignore[misc]
