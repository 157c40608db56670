"""Caches are not a door (issue 50): a template or rule-base cache planted under ``ADVISOR_CACHE_DIR`` is never
run or read unless this user's advisor wrote it, and an entry of the wrong type is built again, never a crash."""

from __future__ import annotations

import builtins
import hashlib
import hmac
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.report import templates
from advisor.rulebase import builtin_rules_dir, cache
from advisor.rulebase.load import load_rules, rule_files

ROOT = Path(__file__).resolve().parents[2]
posix_only = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
root_only = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
PLANTED = "builtins.ADVISOR_PLANTED = True\ndef root(context, missing=None, environment=None):\n    yield 'planted'\n"
SOURCE = "{{ 6 * 7 }}"


@pytest.fixture()
def cache_at(tmp_path, monkeypatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(where))
    monkeypatch.delenv("ADVISOR_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "_COMPILED", {})
    monkeypatch.delattr(builtins, "ADVISOR_PLANTED", raising=False)
    return where


def _render() -> str:
    """One template through a fresh environment and the template cache (read back when it holds the template)."""
    from jinja2 import DictLoader, Environment

    env = Environment(loader=DictLoader({"t.txt": SOURCE}), bytecode_cache=templates.template_code_cache())
    return env.get_template("t.txt").render()


def _code_file(cache_at: Path) -> Path:
    assert _render() == "42"  # compiled and written
    (code,) = (cache_at / "templates").glob("*.code")
    return code


def _planted(parts: list[bytes], body: bytes, key: bytes | None = None) -> bytes:
    """A cache file of this format for the same template, holding ``body``: signed with ``key``, or with a
    made-up signature (what someone without the key can write)."""
    header, checksum = parts[0], parts[1]
    mac = hmac.new(key, b"\n".join([header, checksum, body]), hashlib.sha256).hexdigest() if key else "0" * 64
    return b"\n".join([header, checksum, mac.encode(), body])


def test_planted_template_code_of_this_user_is_not_run(cache_at: Path):
    code = _code_file(cache_at)
    parts = code.read_bytes().split(b"\n", 3)
    evil = marshal.dumps(compile(PLANTED, "<planted>", "exec"))
    code.write_bytes(_planted(parts, evil))  # right header and checksum, this user's file, mode 0644
    assert _render() == "42" and not hasattr(builtins, "ADVISOR_PLANTED")
    assert code.read_bytes().split(b"\n", 3)[3] != evil  # compiled again and written over


def test_a_signed_entry_that_is_not_code_is_built_again(cache_at: Path):
    code = _code_file(cache_at)
    parts = code.read_bytes().split(b"\n", 3)
    key = (cache_at / "templates" / cache.KEY_FILE).read_bytes()
    for body in (marshal.dumps(42), marshal.dumps({"root": None}), b"\x00not marshal data"):
        code.write_bytes(_planted(parts, body, key))
        assert _render() == "42"  # no AttributeError: rebuilt


@posix_only
def test_the_signing_key_is_private_and_replaced_when_others_can_read_it(cache_at: Path):
    code = _code_file(cache_at)
    key_file = cache_at / "templates" / cache.KEY_FILE
    assert key_file.stat().st_mode & 0o777 == 0o600 and code.stat().st_mode & 0o777 == 0o600
    old = key_file.read_bytes()
    key_file.chmod(0o644)  # others could have read it, and signed what they planted
    assert _render() == "42"
    assert key_file.read_bytes() != old and key_file.stat().st_mode & 0o777 == 0o600


@posix_only
def test_a_linked_cache_folder_is_not_used(cache_at: Path, tmp_path: Path, monkeypatch):
    _code_file(cache_at)
    link = tmp_path / "link"
    link.symlink_to(cache_at, target_is_directory=True)
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(link))
    assert cache.usable_cache_dir("templates") is None and templates.template_code_cache() is None
    assert _render() == "42"


@root_only
def test_template_code_of_another_user_is_not_run(cache_at: Path):
    code = _code_file(cache_at)
    parts = code.read_bytes().split(b"\n", 3)
    key = (cache_at / "templates" / cache.KEY_FILE).read_bytes()
    code.write_bytes(_planted(parts, marshal.dumps(compile(PLANTED, "<planted>", "exec")), key))
    os.chown(code, 65534, 65534)  # even signed with the key: the file is not this user's
    assert _render() == "42" and not hasattr(builtins, "ADVISOR_PLANTED")
    os.chown(cache_at / "templates", 65534, 65534)
    assert templates.template_code_cache() is None


# -- the rule base's caches ---------------------------------------------------------------------------------
def _rule_base_key() -> tuple[Path, list[Path], str]:
    folder = builtin_rules_dir()
    files, _ = rule_files([folder])
    return folder, files, cache.cache_key(folder, files)


@posix_only
def test_a_fifo_in_place_of_the_rule_cache_does_not_block(cache_at: Path):
    folder, files, key = _rule_base_key()
    cache_at.mkdir(mode=0o700)
    os.mkfifo(cache_at / f"rules-{key[:32]}.json", 0o600)  # opening it for reading would wait for a writer
    code = "from advisor.diagnosis import load_rule_set; rules, _ = load_rule_set(); print(len(rules))"
    env = dict(os.environ, PYTHONPATH=str(ROOT), ADVISOR_CACHE_DIR=str(cache_at))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and int(done.stdout) > 100, done.stderr[-2000:]


@posix_only
def test_cache_files_are_private_whatever_the_umask(cache_at: Path):
    folder, files, _ = _rule_base_key()
    old = os.umask(0o002)  # a umask that makes group-writable files
    try:
        cache.load_builtin(folder, files, lambda: load_rules([folder], display_root=folder.parent, trusted=True))
    finally:
        os.umask(old)
    (written,) = cache_at.glob("rules-*.json")
    assert written.stat().st_mode & 0o777 == 0o600
    calls = []
    cache.load_builtin(folder, files, lambda: calls.append(1) or ([], []))
    assert calls == []  # read back: the file it wrote is trusted


def _compiled_path(cache_at: Path, key: str) -> Path:
    return cache_at / f"compiled-{cache.compiled_key(key)[:32]}.json"


def _plant_compiled(path: Path, key: str, entries: object) -> None:
    rules = {"some-rule": entries}
    path.write_text(json.dumps({"format": cache.COMPILED_FORMAT, "key": cache.compiled_key(key), "rules": rules}))


@posix_only
def test_compiled_rules_in_a_folder_others_can_write_are_not_read(cache_at: Path):
    _, _, key = _rule_base_key()
    cache_at.mkdir()
    os.chmod(cache_at, 0o777)
    _plant_compiled(_compiled_path(cache_at, key), key, [["some-rule", '{"all": []}', None]])
    built = {"some-rule": [("some-rule", '{"all": [{"m": {"kind": "x"}}]}', None)]}
    rule = type("R", (), {"id": "some-rule"})()
    assert cache.compiled_rules(key, [rule], lambda missing: built) == built


@pytest.mark.parametrize(
    "entries",
    [
        "abc",  # a string unpacks into three one-letter values
        [["some-rule", "not JSON", None]],
        [["some-rule", "[1, 2]", None]],
        [["some-rule", '{"all": []}', [["kind"]]]],
        [["some-rule", '{"all": []}', None, "extra"]],
        {"some-rule": 1},
    ],
)
def test_compiled_entries_of_the_wrong_shape_are_built_again(cache_at: Path, entries):
    _, _, key = _rule_base_key()
    cache_at.mkdir(mode=0o700)
    _plant_compiled(_compiled_path(cache_at, key), key, entries)
    built = {"some-rule": [("some-rule", '{"all": [{"m": {"kind": "x"}}]}', None)]}
    rule = type("R", (), {"id": "some-rule"})()
    assert cache.compiled_rules(key, [rule], lambda missing: built) == built


def test_a_rule_cache_of_the_wrong_types_is_parsed_again(cache_at: Path):
    folder, files, key = _rule_base_key()
    cache_at.mkdir(mode=0o700)
    path = cache_at / f"rules-{key[:32]}.json"
    for head in (
        [1, 2],
        {"format": cache.FORMAT, "key": key, "lazy_lines": 0, "rules": [{"not": "a rule"}], "diagnostics": []},
        {"format": cache.FORMAT, "key": key, "lazy_lines": 0, "rules": "rules", "diagnostics": []},
        {"format": cache.FORMAT, "key": key, "lazy_lines": 0, "rules": [], "diagnostics": [1]},
    ):
        path.write_text(json.dumps(head))
        path.chmod(0o600)
        parsed: list[int] = []

        def parse(parsed: list[int] = parsed) -> tuple[list, list]:
            parsed.append(1)
            return [], []

        rules, _ = cache.load_builtin(folder, files, parse)
        assert parsed == [1] and rules == []
