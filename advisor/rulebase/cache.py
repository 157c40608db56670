"""A cache of the checked built-in rule base, as JSON in the user's cache folder.

Parsing and checking the ~180 shipped YAML files is most of a small diagnosis's
time; their checked form is the same on every run until a rule file or advisor
changes. ``load_builtin(folder, parse)`` returns the rules and diagnostics of the
folder from ``<cache dir>/rules-<key>.json`` when it is there, and otherwise
calls ``parse`` and stores what it returned.

- The key is a SHA-256 of advisor's version, the names and contents of the rule
  files and the sources of the modules that decide what a rule becomes
  (``rulebase/load.py``, its YAML loaders ``rule_yaml.py`` and ``positions.py``, ``schema.py``, this file,
  ``causes.py``, ``facts/``): any
  edit to one of them gives a new key.
- The cache is JSON, read back by the code below into the same dataclasses; it is
  never unpickled or evaluated. Test facts are rebuilt with ``model_construct``
  from the fields their model validated when the cache was written (the others
  take their defaults again).
- The cache folder is ``$ADVISOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/advisor``, else
  ``~/.cache/advisor``, never the run folder. ``ADVISOR_NO_CACHE=1`` turns it off.
  A cache that cannot be read or written is skipped without a word (the rules
  are then parsed as without it).
- A cache is read only where this user alone could have written it (``trusted``,
  ``read_trusted``): the folder and the file belong to this user, no one else may
  write to them, neither is a symbolic link, and the file is a regular file of at
  most ``MAX_CACHE_FILE_BYTES``; files are written private (0600, ``write_private``).
  What is read is then checked field by field (a foreign or damaged entry is built
  again). The template cache holds code (``marshal``): it is also signed with a
  per-user key (``user_key``), so a file of this user's that advisor did not write
  is not run either (report/templates.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import threading
from collections import UserList
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from advisor.errors import Diagnostic
from advisor.rulebase import schema as S

FORMAT = 4
_DATACLASSES: dict[str, type] = {
    c.__name__: c for c in (S.Literal_, S.Param, S.Ref, S.Condition, S.Pattern, S.Not, S.AnyOf, S.TestCase, S.Rule)
}

Loaded = tuple[list[S.Rule], list[Diagnostic]]


def cache_dir() -> Path | None:
    """Where the cache lives, or None when it is turned off."""
    if os.environ.get("ADVISOR_NO_CACHE", "").strip() not in ("", "0"):
        return None
    explicit = os.environ.get("ADVISOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "advisor"
    try:
        return Path.home() / ".cache" / "advisor"
    except RuntimeError:  # no home folder known
        return None


#: a cache file larger than this is not read (the rule base's is about 2 MB)
MAX_CACHE_FILE_BYTES = 64 * 1024 * 1024
#: the per-user key that signs cached code: its file, and its length in bytes
KEY_FILE = "signing.key"
KEY_BYTES = 32
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _mine_alone(st: os.stat_result, secret: bool = False) -> bool:
    """Whether a file or folder with this status belongs to this user and no one else may write to it
    (``secret``: nor read it)."""
    if not hasattr(os, "getuid"):  # Windows: per-user profile folders, no POSIX modes to check
        return True
    others = stat.S_IRWXG | stat.S_IRWXO if secret else stat.S_IWGRP | stat.S_IWOTH
    return st.st_uid == os.getuid() and not st.st_mode & others


def trusted(path: Path) -> bool:
    """Whether a cache folder or file may be trusted: a real folder or regular file (not a symbolic link, a
    FIFO, a device) that belongs to this user and that no one else can write to (jinja's own bytecode cache
    checks its default folder's owner, kind and mode, and nothing of its files). A cache another user can write
    into is a way to make this process load what they wrote; such a cache is not used (compiling and parsing
    from source are the fallback)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except (OSError, ValueError):
        return False
    return (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)) and _mine_alone(st)


def read_trusted(path: Path, max_bytes: int = MAX_CACHE_FILE_BYTES, secret: bool = False) -> bytes | None:
    """The bytes of a cache file that this user alone can write (``secret``: and read), or None: opened without
    following a symbolic link and without blocking (a FIFO), then checked on the open file, so that the file
    checked is the file read; a file above ``max_bytes`` is not read."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) and _mine_alone(st, secret) and st.st_size <= max_bytes):
            return None
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks) if size <= max_bytes else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_private(path: Path, data: bytes, replace: bool = True) -> None:
    """``data`` to ``path`` whole, readable and writable by this user only (0600, whatever the umask): a
    temporary file beside it, then renamed over it (``replace=False``: linked to it, FileExistsError when the
    file is there). Raises OSError when it cannot be written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def user_key(folder: Path) -> bytes | None:
    """This user's key for signing cached code, kept in ``folder/KEY_FILE`` (0600, made on first use); None
    when it can be neither read nor made. A key file another user could read or write is replaced."""
    path = folder / KEY_FILE
    key = _read_key(path)
    if key is not None:
        return key
    fresh = secrets.token_bytes(KEY_BYTES)
    try:
        write_private(path, fresh, replace=False)  # never over the key another process has just made
        return fresh
    except FileExistsError:
        key = _read_key(path)  # that process's key
        if key is not None:
            return key
    except OSError:
        return None
    try:  # a key file that is not usable (another user's, open to others, damaged): replaced
        write_private(path, fresh)
    except OSError:
        return None
    return fresh


def _read_key(path: Path) -> bytes | None:
    key = read_trusted(path, KEY_BYTES, secret=True)
    return key if key is not None and len(key) == KEY_BYTES else None


def usable_cache_dir(sub: str = "") -> Path | None:
    """The cache folder (``sub`` below it), created private (0700) when missing; None when the cache is off or
    the folder (or the cache root above it) is not this user's alone."""
    root = cache_dir()
    if root is None:
        return None
    folder = root / sub if sub else root
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    return folder if trusted(root) and trusted(folder) else None


def _code_files() -> list[Path]:
    pkg = Path(__file__).resolve().parent.parent  # advisor/
    rulebase = ("load.py", "rule_yaml.py", "positions.py", "schema.py", "cache.py")
    files = [pkg / "rulebase" / n for n in rulebase] + [pkg / "causes.py"]
    return files + sorted((pkg / "facts").glob("*.py"))


def cache_key(folder: Path, files: list[Path]) -> str:
    """SHA-256 of advisor's version, the rule files (names and contents) and the code that checks them."""
    from advisor.version import __version__

    h = hashlib.sha256(f"advisor {__version__} format {FORMAT}\n".encode())
    for label, paths in (("rule", files), ("code", _code_files())):
        for f in paths:
            data = f.read_bytes()
            name = f.relative_to(folder).as_posix() if label == "rule" else f.name
            h.update(f"{label} {name} {len(data)}\n".encode())
            h.update(data)
    return h.hexdigest()


def load_builtin(folder: Path, files: list[Path], parse: Callable[[], Loaded]) -> Loaded:
    """The rule base of ``folder`` (its rule ``files``): from the cache when it holds it, else ``parse()``."""
    where = usable_cache_dir()
    if where is None:
        return parse()
    try:
        key = cache_key(folder, files)
    except OSError:
        return parse()
    path = where / f"rules-{key[:32]}.json"
    cached = _read_rule_base(path, key)
    if cached is not None:
        return _remember(cached[0], key), cached[1]
    rules, diags = parse()
    _store(path, key, rules, diags)
    return _remember(rules, key), diags


def _read_rule_base(path: Path, key: str) -> Loaded | None:
    """The rules and diagnostics a trusted cache file holds for ``key``; None for an absent, foreign or damaged
    file (then parsed and written again)."""
    raw = read_trusted(path)
    if raw is None:
        return None
    try:  # line 1: the rules; then one line of JSON per test-case list, read when first used
        head, _, rest = raw.decode("utf-8").partition("\n")
        lazy = rest.split("\n") if rest else []
        data = json.loads(head, object_hook=_decoder(lazy))  # the rules built as the JSON is read
        if not (isinstance(data, dict) and data.get("key") == key and data.get("format") == FORMAT):
            return None
        rules, diags = data["rules"], data["diagnostics"]
        if len(lazy) != data["lazy_lines"] or not isinstance(rules, list) or not isinstance(diags, list):
            return None
        if not all(type(r) is S.Rule for r in rules) or not all(isinstance(d, dict) for d in diags):
            return None
        return rules, [Diagnostic(**d) for d in diags]
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError):
        return None


def _store(path: Path, key: str, rules: list[S.Rule], diags: list[Diagnostic]) -> None:
    lazy: list[str] = []
    try:
        head = {
            "format": FORMAT,
            "key": key,
            "rules": [_encode(r, lazy) for r in rules],
            "diagnostics": [d.model_dump() for d in diags],
        }
        text = "\n".join([json.dumps({**head, "lazy_lines": len(lazy)}), *lazy])
    except (TypeError, ValueError):  # a value JSON cannot hold: no cache, the rules are fine
        return
    try:
        write_private(path, text.encode("utf-8"))
        for old in path.parent.glob("rules-*.json"):  # rule bases of older versions
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        return


class LazyCases(UserList):
    """A rule's test cases, decoded from the cache's JSON text on first use (they are only needed by
    ``advisor rules test``, the rule docs and the test suite; a diagnosis never reads them). Compares equal
    to the list of the same cases."""

    def __init__(self, initial: str | Iterable[Any] = ()) -> None:
        self._raw: str | None = initial if isinstance(initial, str) else None
        self._data: list[Any] | None = None if self._raw is not None else list(initial)  # type: ignore[arg-type]

    @property  # type: ignore[override]
    def data(self) -> list[Any]:
        if self._data is None:
            self._data = json.loads(self._raw or "[]", object_hook=_decoder([]))
            self._raw = None
        return self._data

    @data.setter
    def data(self, value: list[Any]) -> None:
        self._data, self._raw = value, None


# -- JSON <-> rule dataclasses ---------------------------------------------------------------
def _encode(obj: Any, lazy: list[str]) -> Any:
    """``obj`` as JSON values; a rule's test cases go to ``lazy`` (one line of JSON each)."""
    from pydantic import BaseModel

    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    name = type(obj).__name__
    if type(obj) is S.Rule:  # its test cases as JSON text, read when first used (a diagnosis never does)
        fields = {k: _encode(v, lazy) for k, v in vars(obj).items() if k not in ("fires", "quiet")}
        for k in ("fires", "quiet"):
            lazy.append(json.dumps(_encode(list(getattr(obj, k)), lazy)))
            fields[k] = {"$lazy": len(lazy) - 1}
        return {"$dc": name, "f": fields}
    if name in _DATACLASSES and type(obj) is _DATACLASSES[name]:
        return {"$dc": name, "f": {k: _encode(v, lazy) for k, v in vars(obj).items()}}
    if isinstance(obj, BaseModel):  # a test case's fact (or its source), as its model validated it
        from advisor.facts import FACT_KINDS, Source

        kind = getattr(obj, "kind", None)
        if type(obj) is Source:
            tag = "$source"
        elif isinstance(kind, str) and FACT_KINDS.get(kind) is type(obj):
            tag = "$fact"
        else:
            raise TypeError(f"cannot cache a {name}")
        # the fields given: the others hold their defaults, which model_construct fills in again
        return {tag: kind or "", "f": {k: _encode(getattr(obj, k), lazy) for k in sorted(obj.model_fields_set)}}
    if isinstance(obj, tuple):
        return {"$tuple": [_encode(v, lazy) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, lazy) for v in obj]
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj):
            if any(k.startswith("$") for k in obj):
                return {"$dict": [[k, _encode(v, lazy)] for k, v in obj.items()]}
            return {k: _encode(v, lazy) for k, v in obj.items()}
        return {"$dict": [[_encode(k, lazy), _encode(v, lazy)] for k, v in obj.items()]}
    raise TypeError(f"cannot cache a {name}")


def _decoder(lazy: list[str]) -> Callable[[dict[str, Any]], Any]:
    """The ``object_hook`` that turns ``_encode``'s JSON objects back into the values they stand for
    (json calls it on each object once its members are decoded, innermost first)."""

    def decode(obj: dict[str, Any]) -> Any:
        if "$dc" in obj:
            return _DATACLASSES[obj["$dc"]](**obj["f"])
        if "$fact" in obj or "$source" in obj:
            from advisor.facts import FACT_KINDS, Source

            model = Source if "$source" in obj else FACT_KINDS[obj["$fact"]]
            return model.model_construct(**obj["f"])
        if "$lazy" in obj:
            return LazyCases(lazy[obj["$lazy"]])
        if "$tuple" in obj:
            return tuple(obj["$tuple"])
        if "$dict" in obj:
            return {k: v for k, v in obj["$dict"]}
        return obj

    return decode


# -- the built-in rules compiled for durable-rules ---------------------------------------------
# What a rule becomes for the engine (compile.py's conditions, encoded by engine.encode_json) depends
# only on the rule, its parameters and the code of compile.py and engine.py. For the built-in rules,
# as their default parameters compile, it is kept in <cache dir>/compiled-<key>.json (JSON text, one
# entry per rule: [[name, condition text, string needs], ...]), next to the rule base it was compiled
# from; a rule a parameter override touches, and every user rule, is compiled again on each run.

COMPILED_FORMAT = 1
#: id(rule) -> (the rule, the key of the built-in rule base it was loaded with)
_ORIGIN: dict[int, tuple[S.Rule, str]] = {}
#: compiled key -> rule id -> its entries, as read or built in this process
_COMPILED: dict[str, dict[str, list[tuple[str, str, Any]]]] = {}
_COMPILED_LOCK = threading.Lock()

CompiledEntries = list[tuple[str, str, Any]]  # (engine rule name, condition text, string needs)


def _remember(rules: list[S.Rule], key: str) -> list[S.Rule]:
    for r in rules:
        _ORIGIN[id(r)] = (r, key)
    return rules


def origin(rule: S.Rule) -> str | None:
    """The key of the built-in rule base ``rule`` was loaded with by ``load_builtin`` (None for any other rule)."""
    hit = _ORIGIN.get(id(rule))
    return hit[1] if hit is not None and hit[0] is rule else None


def compiled_key(key: str) -> str:
    """SHA-256 of the rule base's key and the code that compiles and encodes its rules."""
    pkg = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"compiled {COMPILED_FORMAT} {key}\n".encode())
    for f in (pkg / "rulebase" / "compile.py", pkg / "rulebase" / "engine.py"):
        data = f.read_bytes()
        h.update(f"code {f.name} {len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


def _needs(value: Any) -> Any:
    return None if value is None else tuple(tuple((k, v) for k, v in pattern) for pattern in value)


def compiled_rules(
    key: str, rules: list[S.Rule], build: Callable[[list[S.Rule]], dict[str, CompiledEntries]]
) -> dict[str, CompiledEntries]:
    """Rule id -> its compiled entries, for ``rules`` (built-in rules of the rule base ``key``, with
    their default parameters): from the cache file when it holds them, else ``build(missing rules)``,
    added to the file."""
    where = usable_cache_dir()
    try:
        ckey = compiled_key(key)
    except OSError:
        return build(rules)
    path = where / f"compiled-{ckey[:32]}.json" if where is not None else None
    with _COMPILED_LOCK:
        table = _COMPILED.get(ckey)
        if table is None:
            table = _COMPILED[ckey] = _read_compiled(path, ckey) if path is not None else {}
        missing = [r for r in rules if r.id not in table]
        if missing:
            table.update(build(missing))
            if path is not None:
                _store_compiled(path, ckey, table)
        return table


def _read_compiled(path: Path, ckey: str) -> dict[str, CompiledEntries]:
    """The compiled rules a trusted cache file holds for ``ckey``, each entry checked; {} for an absent, foreign
    or damaged file (compiled again and written)."""
    raw = read_trusted(path)
    try:
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (ValueError, RecursionError):
        return {}
    if not (isinstance(data, dict) and data.get("format") == COMPILED_FORMAT and data.get("key") == ckey):
        return {}
    table = data.get("rules")
    if not isinstance(table, dict):
        return {}
    out: dict[str, CompiledEntries] = {}
    for rid, entries in table.items():
        checked = _checked_entries(entries)
        if checked is None:
            return {}
        out[rid] = checked
    return out


def _checked_entries(entries: Any) -> CompiledEntries | None:
    """A rule's cached entries ``[[name, condition text, needs], ...]`` as ``compiled_rules`` gives them; None
    when one is not of that shape (a condition that is not a JSON object, needs that are not text pairs)."""
    if not isinstance(entries, list):
        return None
    out = []
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)):
            return None
        name, text, needs = entry
        if not (isinstance(text, str) and _is_json_object(text) and _needs_shape(needs)):
            return None
        out.append((name, text, _needs(needs)))
    return out


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def _needs_shape(needs: Any) -> bool:
    """None, or a list (per pattern) of lists of [field, text] pairs."""
    if needs is None:
        return True
    return isinstance(needs, list) and all(
        isinstance(pattern, list)
        and all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pattern)
        for pattern in needs
    )


def _store_compiled(path: Path, ckey: str, table: dict[str, CompiledEntries]) -> None:
    try:
        text = json.dumps({"format": COMPILED_FORMAT, "key": ckey, "rules": table}, ensure_ascii=False)
        write_private(path, text.encode("utf-8"))
        for old in path.parent.glob("compiled-*.json"):  # compiled forms of other rule bases or code
            if old != path:
                old.unlink(missing_ok=True)
    except (OSError, TypeError, ValueError):
        return
