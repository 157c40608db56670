"""The durable-rules back-end: the one module that imports durable-rules.

durable-rules is imported when this back-end is first used (``load()``), so
the module imports on every Python; ``backends.py`` falls back to the built-in
matcher (matcher.py) where durable-rules does not import (Python 3.13+).

What it works around (measured; each is pinned by a test in tests/rulebase/test_engine.py):

- one ruleset holds ~60 rules at most: the rule base is split into chunks;
- numbers in exponent form (``1e-05``), ``inf`` and ``nan`` are rejected, and
  integers beyond int64 are misread: every number is written in positional
  form with a decimal point by our own JSON encoder (``encode_json``), and
  non-finite values are left out (the field then only matches ``exists: false``);
- a fact that no rule matches completely makes the batch raise, or corrupts
  the engine's heap (measured: segfaults): each ruleset has a catch-all rule
  that fires a no-op action for every fact;
- identical facts raise: every fact gets a unique ``_fid``;
- a ruleset name can be registered once per process: compiled rulesets are
  registered once, under a name derived from a hash of their content;
- a ruleset's memory is never all given back (about 0.6 MB of each ruleset made
  stays after ``delete_ruleset``): the least recently used beyond
  MAX_REGISTERED are deleted (half of it comes back), and parameter values never
  make a ruleset (backends.DurableBackend matches overridden rules in Python);
- the stock host runs actions on background timer threads: we use a host
  without them, so every action runs synchronously inside ``assert_facts``;
- negation (``$not``) is decided when a fact arrives and never revised, so
  it is not used (see compile.py); chained findings are computed in rounds
  to a fixed point, each round in a fresh session (``sid``) deleted
  afterwards, so two diagnoses never share state.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import traceback
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: durable-rules' fixed-size stack fails somewhere between 60 and 80 rules
MAX_RULES_PER_RULESET = 40
#: magnitudes are clamped here (beyond it the C parser misreads numbers)
MAX_MAGNITUDE = 1e15
#: magnitudes below this are written as 0 (keeps the positional form short)
MIN_MAGNITUDE = 1e-30
#: fields the engine reserves for itself; fact fields of these names are renamed
RESERVED = {"id": "f_id", "sid": "f_sid"}
CATCH_ALL = "__catch_all"


def field_name(name: str) -> str:
    return RESERVED.get(name, name)


def numeric_field(name: str) -> str:
    """The numeric twin of a field: present only when the value is a finite number.

    Ordering operators compare against it, guarded by ``$ex``: durable-rules
    compares a string or a boolean with a number without complaint (``"x" > 100``
    holds) and crashes on an ordering test of an absent field.
    """
    return field_name(name) + "__n"


def encode_number(x: float | int) -> str:
    """A number as JSON the engine accepts: positional, with a decimal point."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError("non-finite numbers cannot enter the engine")
    x = max(-MAX_MAGNITUDE, min(MAX_MAGNITUDE, x))
    if abs(x) < MIN_MAGNITUDE:
        return "0.0"
    # shortest round-trip digits, never in exponent form; always with a decimal point
    return np.format_float_positional(x, unique=True, trim="0")


def encode_json(obj: Any) -> str:
    """JSON with numbers in the engine's accepted form (see ``encode_number``)."""
    if isinstance(obj, bool) or obj is None:
        return json.dumps(obj)
    if isinstance(obj, (int, float)):
        return encode_number(obj)
    if isinstance(obj, str):
        return json.dumps(obj, ensure_ascii=False)
    if isinstance(obj, dict):
        return (
            "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{encode_json(v)}" for k, v in obj.items()) + "}"
        )
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(encode_json(v) for v in obj) + "]"
    raise TypeError(f"cannot encode {type(obj).__name__} for the rule engine")


def encode_json_fast(obj: Any) -> str:
    """``encode_json`` of a value whose dict keys are all strings (ruleset definitions, facts), in one pass.

    One ``json.dumps`` of the whole value, then each number token rewritten by ``encode_number``: the
    same text as ``encode_json``'s walk (json.dumps writes an int's digits and a float's repr, which
    ``float()`` reads back exactly). A value this cannot write as the walk would (a non-finite number,
    an unknown type) goes to ``encode_json``, which writes it or fails as it always did.
    """
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)
        return _BEFORE_NUMBER.sub(_rewrite, text)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return encode_json(obj)


#: JSON strings and other characters, then a number token (group 2) or the end: json.dumps writes a
#: digit or a '-' outside a string only at the start of a number. Every match starts where the one
#: before ended (the last one runs to the end), so none starts inside a string.
_BEFORE_NUMBER = re.compile(r'((?:"(?:[^"\\]|\\.)*"|[^"\d\-])*)(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)?')
_NUMBERS: dict[str, str] = {}  # number token -> its positional form (the same few recur: 1, 0, thresholds)


def _rewrite(m: re.Match[str]) -> str:
    token = m.group(2)
    if token is None:
        return m.group(0)
    number = _NUMBERS.get(token)
    if number is None:
        if "." in token or "e" in token or "E" in token:
            number = encode_number(float(token))  # a float's repr, which float() reads back exactly
        else:
            number = encode_number(int(token))  # an int: as the walk does, float() of it
        if len(_NUMBERS) < 4096:
            _NUMBERS[token] = number
    return m.group(1) + number


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8_safe(text: str) -> str:
    """``text`` with each lone surrogate (a name read from bytes that were not UTF-8, a JSON ``"\\ud800"``) as
    U+FFFD: the engine takes UTF-8 and refuses the whole batch over one such character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def engine_fact(fid: int, fact: dict[str, Any]) -> dict[str, Any]:
    """A fact dict as the engine sees it: scalars only, non-finite dropped, reserved names renamed."""
    out: dict[str, Any] = {"_fid": fid}
    for key, value in fact.items():
        if isinstance(value, bool) or isinstance(value, str):
            out[field_name(key)] = value
        elif isinstance(value, (int, float)):
            if math.isfinite(value):
                out[field_name(key)] = value
                out[numeric_field(key)] = value
        # None, lists and nested objects (source) do not enter the engine
    return out


_DR: Any = None  # durable.engine, once imported
_DRE: Any = None  # durable_rules_engine (the C extension), once imported


def load() -> None:
    """Import durable-rules; raises what its import raises (ImportError on Python 3.13+)."""
    global _DR, _DRE
    if _DRE is None:
        import durable_rules_engine
        from durable import engine as dr

        _DR, _DRE = dr, durable_rules_engine


_HOST: Any = None
_REGISTERED: dict[str, "_Registered"] = {}
_LOCK = threading.RLock()
#: registered rulesets kept (least recently used freed beyond it) and how many evaluations use each now
MAX_REGISTERED = 32
_IN_USE: dict[str, int] = {}
#: sid -> list of (rule_id, {alias: engine fact dict}) collected by the actions
_COLLECT: dict[str, list[tuple[str, dict[str, Any]]]] = {}


def _host() -> Any:
    global _HOST
    if _HOST is None:
        load()

        class _QuietHost(_DR.Host):  # type: ignore[name-defined,misc]
            """A durable host without the background dispatch threads."""

            def _run(self) -> None:  # no timers
                return None

        _HOST = _QuietHost()
    return _HOST


@dataclass
class _Registered:
    name: str
    ruleset: Any


def _run_actions(rs: Any, rule_ids: frozenset[str], state_handle: Any) -> None:
    """Run the actions durable-rules has queued for a state, as ``Ruleset.do_actions`` does (the same
    engine calls in the same order: ``start_action_for_state``, then for each action ``update_state``
    with the state and ``complete_and_start_action``), without its per-action Closure and Promise
    objects: an action here only notes (rule name, matched facts) for the state's session
    (``_COLLECT``); the catch-all's does nothing."""
    result = _DRE.start_action_for_state(rs._handle, state_handle)
    if not result:
        return
    state = json.loads(result[0])
    state_text = json.dumps(state, ensure_ascii=False)  # what do_actions writes back: our actions leave it as is
    sid = str(state.get("sid"))
    message = json.loads(result[1])
    while True:
        action_name, matched = next(iter(message.items()))
        if action_name not in rule_ids:
            raise KeyError(action_name)
        if action_name != CATCH_ALL:
            facts = {
                k: dict(v) for k, v in (matched if isinstance(matched, dict) else {}).items() if isinstance(v, dict)
            }
            with _LOCK:
                bucket = _COLLECT.get(sid)
                if bucket is not None:
                    bucket.append((action_name, facts))
        try:
            _DRE.update_state(rs._handle, state_text)
            new = _DRE.complete_and_start_action(rs._handle, state_handle)
        except BaseException as exc:  # as do_actions: logged, the action abandoned, the error raised
            _DR.logger.exception(
                "base exception type %s, value %s, traceback %s",
                type(exc),
                str(exc),
                traceback.format_tb(exc.__traceback__),
            )
            _DRE.abandon_action(rs._handle, state_handle)
            raise
        if not new:
            return
        message = json.loads(new)


def _register(text: str, rule_ids: list[str]) -> _Registered:
    """Register a ruleset once per content: ``text`` is its definition (rule name -> {all: ...}) as
    ``encode_json`` writes it, ``rule_ids`` its rule names in that order."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    name = f"advisor_{digest}"
    with _LOCK:
        if name in _REGISTERED:
            _REGISTERED[name] = _REGISTERED.pop(name)  # most recently used last
            _IN_USE[name] = _IN_USE.get(name, 0) + 1
            return _REGISTERED[name]
        host = _host()
        rs = object.__new__(_DR.Ruleset)
        rs._actions = {}  # actions run in _run_actions, by name
        rs._names = frozenset(rule_ids)
        rs._name = name
        rs._host = host
        rs._handle = _DRE.create_ruleset(name, text)
        rs._definition = dict.fromkeys(rule_ids)  # the names only (durable reads it only in get_definition)
        host._ruleset_directory[name] = rs
        host._ruleset_list.append(rs)
        reg = _Registered(name=name, ruleset=rs)
        _REGISTERED[name] = reg
        _IN_USE[name] = _IN_USE.get(name, 0) + 1
        _evict()
        return reg


def _evict() -> None:
    """Free the least recently used rulesets beyond MAX_REGISTERED (user rules of many contents through the
    Python API would otherwise pile up, #17; parameter values make none, see backends.DurableBackend). Caller
    holds _LOCK."""
    host = _host()
    for old in [n for n in _REGISTERED if not _IN_USE.get(n)][: max(0, len(_REGISTERED) - MAX_REGISTERED)]:
        reg = _REGISTERED.pop(old)
        _IN_USE.pop(old, None)
        host._ruleset_directory.pop(old, None)
        if reg.ruleset in host._ruleset_list:
            host._ruleset_list.remove(reg.ruleset)
        try:
            _DRE.delete_ruleset(reg.ruleset._handle)
        except Exception:  # noqa: BLE001 - already gone
            pass


def _release(registered: list[_Registered]) -> None:
    with _LOCK:
        for reg in registered:
            if _IN_USE.get(reg.name):
                _IN_USE[reg.name] -= 1


class EngineError(RuntimeError):
    pass


@dataclass
class CompiledRuleset:
    """Engine-ready rules: rule id -> durable condition ({'all': [...]} or {'any': [...]}).

    ``texts`` and ``needs`` hold, for some rules, their condition already encoded (``encode_json``)
    and what its patterns ask by plain string equality (``string_needs``): the built-in rules come
    from the cache that way (cache.py) and need no condition in ``rules``; the others are encoded
    when first registered. The rules are registered in chunks of MAX_RULES_PER_RULESET (``chunk``).
    """

    rules: dict[str, dict[str, Any]]
    texts: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    needs: dict[str, tuple[tuple[tuple[str, str], ...], ...] | None] = field(
        default_factory=dict, repr=False, compare=False
    )
    chunk_ids: list[list[str]] = field(default_factory=list, repr=False, compare=False)
    _chunk_texts: dict[int, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        ids = sorted(set(self.rules) | set(self.texts))
        self.chunk_ids = [
            [*ids[i : i + MAX_RULES_PER_RULESET], CATCH_ALL] for i in range(0, len(ids), MAX_RULES_PER_RULESET)
        ]

    def text(self, rule_id: str) -> str:
        """``encode_json`` of the rule's condition."""
        text = self.texts.get(rule_id)
        if text is None:
            text = self.texts[rule_id] = encode_json_fast(self.rules[rule_id])
        return text

    def chunk_text(self, index: int) -> str:
        """``encode_json(chunk(...)[index])``: the chunk's rules' texts put together, once."""
        text = self._chunk_texts.get(index)
        if text is None:
            body = "".join(
                f"{json.dumps(rid, ensure_ascii=False)}:{self.text(rid)}," for rid in self.chunk_ids[index][:-1]
            )
            text = self._chunk_texts[index] = f"{{{body}{_CATCH_ALL_TEXT}}}"
        return text

    def rule_needs(self, rule_id: str) -> tuple[tuple[tuple[str, str], ...], ...] | None:
        if rule_id not in self.needs:
            self.needs[rule_id] = string_needs(self.rules[rule_id])
        return self.needs[rule_id]


def _catch_all() -> dict[str, Any]:
    # Fires (a no-op) for every fact. Measured: a fact that no rule matches *completely*
    # makes durable-rules raise or corrupt its heap (segfault / "free(): invalid pointer"),
    # even when it matches part of a rule, so every fact must complete one rule.
    return {"all": [{"m": {"$gte": {"_fid": 0}}}]}


_CATCH_ALL_TEXT = f"{json.dumps(CATCH_ALL)}:{encode_json(_catch_all())}"


def chunk(rules: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    ids = sorted(rules)
    chunks = []
    for i in range(0, len(ids), MAX_RULES_PER_RULESET):
        part = {rid: rules[rid] for rid in ids[i : i + MAX_RULES_PER_RULESET]}
        part[CATCH_ALL] = _catch_all()
        chunks.append(part)
    return chunks


def string_needs(condition: dict[str, Any]) -> tuple[tuple[tuple[str, str], ...], ...] | None:
    """Per pattern of a durable ``all`` condition, the (field, text) pairs it tests by plain equality
    (``{"kind": "loss_curve"}``, ``{"split": "train"}``: terms of its ``$and``); None for a condition of
    another shape (``any``: such a rule is always registered)."""
    items = condition.get("all") if isinstance(condition, dict) and len(condition) == 1 else None
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if not (isinstance(item, dict) and len(item) == 1):
            return None
        (pattern,) = item.values()
        terms = pattern.get("$and") if isinstance(pattern, dict) and len(pattern) == 1 else None
        if not isinstance(terms, list):
            return None
        out.append(
            tuple(
                (k, v)
                for t in terms
                if isinstance(t, dict) and len(t) == 1
                for k, v in t.items()
                if not k.startswith("$") and isinstance(v, str)
            )
        )
    return tuple(out)


def can_fire(compiled: CompiledRuleset, facts: list[dict[str, Any]]) -> list[str]:
    """The rules that may fire on ``facts`` (engine facts): all but those with a pattern that no fact
    can match because every fact holds another text in a field the pattern tests by equality (no
    ``loss_curve`` fact at all, no fact with ``split: eval``...).

    durable-rules matches a pattern only when every term of its ``$and`` holds, so such a rule cannot
    fire; a chunk of such rules only is not registered nor run (``evaluate``). A fact without the
    field, or with a value of another type, is taken as a possible match.
    """
    by_kind: dict[str, list[dict[str, Any]]] = {}
    odd: list[dict[str, Any]] = []  # facts without a text kind: a possible match for any pattern
    for f in facts:
        kind = f.get("kind")
        if isinstance(kind, str):
            by_kind.setdefault(kind, []).append(f)
        else:
            odd.append(f)
    seen: dict[tuple[tuple[str, str], ...], bool] = {}

    def possible(needs: tuple[tuple[str, str], ...]) -> bool:
        hit = seen.get(needs)
        if hit is None:
            kind = next((v for k, v in needs if k == "kind"), None)
            pool = facts if kind is None else by_kind.get(kind, []) + odd
            hit = seen[needs] = any(all(not isinstance(f.get(k), str) or f[k] == v for k, v in needs) for f in pool)
        return hit

    out = []
    for rid in (rid for ids in compiled.chunk_ids for rid in ids[:-1]):
        needs = compiled.rule_needs(rid)
        if needs is None or all(possible(n) for n in needs):
            out.append(rid)
    return out


def evaluate(compiled: CompiledRuleset, facts: list[dict[str, Any]]) -> list[tuple[str, dict[str, int]]]:
    """Run the rules over the facts once, in a fresh session.

    ``facts`` are plain dicts with ``kind``; returns (rule id, {alias: fact index})
    for every firing, sorted (deterministic whatever order actions ran in).
    """
    if not compiled.chunk_ids or not facts:
        return []
    sid = uuid.uuid4().hex
    payload = []
    for i in range(len(facts)):
        f = engine_fact(i, facts[i])
        f["sid"] = sid
        payload.append(f)
    live = set(can_fire(compiled, payload))
    # a chunk none of whose rules can fire is left out; the others are registered as they always were
    # (durable-rules' known failures depend on what a ruleset holds: the rulesets are not recomposed)
    chunks = [i for i, ids in enumerate(compiled.chunk_ids) if not live.isdisjoint(ids)]
    if not chunks:
        return []
    registered = [_register(compiled.chunk_text(i), compiled.chunk_ids[i]) for i in chunks]
    text = _utf8_safe(encode_json_fast(payload))
    with _LOCK:
        _COLLECT[sid] = []
    try:
        for reg in registered:
            rs = reg.ruleset
            try:
                _run_actions(rs, rs._names, rs._handle_result(_DRE.assert_facts(rs._handle, text), text))
            except Exception as exc:  # engine errors surface with the ruleset's rules named
                raise EngineError(f"rule engine failed on a ruleset of {len(rs._definition) - 1} rules: {exc}") from exc
        with _LOCK:
            raw = _COLLECT.pop(sid, [])
    finally:
        with _LOCK:
            _COLLECT.pop(sid, None)
        for reg in registered:
            try:
                reg.ruleset.delete_state(sid)
            except Exception:  # noqa: BLE001 - nothing left to free
                pass
        _release(registered)
    firings = set()
    for rule_id, matched in raw:
        binding = tuple(sorted((alias, int(f["_fid"])) for alias, f in matched.items() if "_fid" in f))
        firings.add((rule_id, binding))
    return [(rid, dict(b)) for rid, b in sorted(firings)]
