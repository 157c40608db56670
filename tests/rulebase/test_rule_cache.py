"""The built-in rule base's JSON cache (advisor/rulebase/cache.py): same rules as a fresh parse, a new key when a
rule file changes, and silently skipped when it cannot be used."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from advisor.rulebase import builtin_rules_dir, cache
from advisor.rulebase.load import load_rules, rule_files


def _load(folder: Path):
    files, _ = rule_files([folder])
    calls = []

    def parse():
        calls.append(1)
        return load_rules([folder], display_root=folder.parent, trusted=True)

    rules, diags = cache.load_builtin(folder, files, parse)
    return rules, diags, len(calls)


@pytest.fixture()
def cache_at(tmp_path, monkeypatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(where))
    monkeypatch.delenv("ADVISOR_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "_COMPILED", {})  # what this process compiled before is not in this folder
    return where


def test_cached_rule_base_equals_a_fresh_parse(cache_at):
    folder = builtin_rules_dir()
    fresh, fresh_diags, parsed = _load(folder)
    assert parsed == 1
    written = list(cache_at.glob("rules-*.json"))
    assert len(written) == 1
    for line in written[0].read_text(encoding="utf-8").split("\n"):  # lines of plain JSON, nothing else
        json.loads(line)
    cached, cached_diags, parsed = _load(folder)
    assert parsed == 0
    assert len(cached) == len(fresh) > 100
    assert cached == fresh  # dataclasses compare field by field, test facts included
    assert cached_diags == fresh_diags
    for a, b in zip(cached, fresh):
        for x, y in zip(a.fires + a.quiet, b.fires + b.quiet):
            assert [type(f) for f in x.facts] == [type(f) for f in y.facts]
            assert [f.model_dump() for f in x.facts] == [f.model_dump() for f in y.facts]


def _copy_rules(tmp_path: Path) -> Path:
    folder = tmp_path / "rules"
    shutil.copytree(builtin_rules_dir() / "hyperparameters", folder / "hyperparameters")
    return folder


def test_a_changed_rule_file_is_parsed_again(cache_at, tmp_path):
    folder = _copy_rules(tmp_path)
    rules, _, parsed = _load(folder)
    assert parsed == 1
    f = sorted((folder / "hyperparameters").glob("*.yaml"))[0]
    rid = next(r for r in rules if r.path.endswith(f.name)).id
    text = f.read_text(encoding="utf-8")
    f.write_text(text.replace("title: ", "title: Changed ", 1), encoding="utf-8")
    again, _, parsed = _load(folder)
    assert parsed == 1
    assert next(r for r in again if r.id == rid).title.startswith("Changed ")
    assert len(list(cache_at.glob("rules-*.json"))) == 1  # the old entry was removed
    _, _, parsed = _load(folder)
    assert parsed == 0


def test_a_damaged_cache_file_is_replaced(cache_at, tmp_path):
    folder = _copy_rules(tmp_path)
    fresh, _, _ = _load(folder)
    (entry,) = cache_at.glob("rules-*.json")
    entry.write_text('{"format": 4, "key": "', encoding="utf-8")
    rules, _, parsed = _load(folder)
    assert parsed == 1 and rules == fresh
    _, _, parsed = _load(folder)
    assert parsed == 0


def test_turned_off_by_the_environment(cache_at, tmp_path, monkeypatch):
    monkeypatch.setenv("ADVISOR_NO_CACHE", "1")
    folder = _copy_rules(tmp_path)
    _load(folder)
    _, _, parsed = _load(folder)
    assert parsed == 1
    assert not cache_at.exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a folder this user cannot write")
def test_an_unwritable_cache_folder_is_skipped(tmp_path, monkeypatch):
    where = tmp_path / "ro"
    where.mkdir()
    where.chmod(0o500)
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(where / "advisor"))
    folder = _copy_rules(tmp_path)
    rules, _, parsed = _load(folder)
    assert parsed == 1 and rules


def test_a_cache_file_in_place_of_the_folder_is_skipped(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(blocker))
    folder = _copy_rules(tmp_path)
    rules, _, parsed = _load(folder)
    assert parsed == 1 and rules
    _, _, parsed = _load(folder)
    assert parsed == 1
    assert blocker.read_text(encoding="utf-8") == "not a folder"


def test_cache_folder_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("ADVISOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("ADVISOR_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "advisor"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "advisor"
    monkeypatch.setenv("ADVISOR_NO_CACHE", "1")
    assert cache.cache_dir() is None


# -- the compiled form of the built-in rules (compiled-<key>.json) -----------------------------
def _fires(rules, overrides=None, value=0.7) -> bool:
    from advisor.facts.hparams import Hyperparameter
    from advisor.rulebase.infer import RuleBase

    rb = RuleBase(rules, overrides, engine="durable")
    firings, _ = rb.infer([Hyperparameter(name="init_std", value=value, raw_key="initializer_range")])
    return "init-std-too-large" in {f.rule.id for f in firings}


@pytest.fixture()
def durable():
    from advisor.rulebase import backends

    if backends.durable_problem():
        pytest.skip(backends.durable_problem() or "")


def test_compiled_rules_are_what_the_rules_compile_to(cache_at, durable):
    from advisor.rulebase import engine
    from advisor.rulebase.compile import compile_rules
    from advisor.rulebase.infer import RuleBase

    folder = builtin_rules_dir()
    rules, _, _ = _load(folder)
    cached = RuleBase(rules, engine="durable").backend.compiled
    (written,) = cache_at.glob("compiled-*.json")
    data = json.loads(written.read_text(encoding="utf-8"))  # plain JSON, nothing else
    assert set(data["rules"]) == {r.id for r in rules}
    fresh = compile_rules(rules)
    assert cached.rules == {} and set(cached.texts) == set(fresh.rules)  # nothing compiled in this run
    for name, cond in fresh.rules.items():
        assert cached.text(name) == engine.encode_json(cond)
        assert cached.rule_needs(name) == engine.string_needs(cond)
    assert [cached.chunk_text(i) for i in range(len(cached.chunk_ids))] == [
        engine.encode_json(part) for part in engine.chunk(fresh.rules)
    ]
    cache._COMPILED.clear()  # a new process: read back from the file
    again = RuleBase(rules, engine="durable").backend.compiled
    assert again.texts == cached.texts and again.needs == cached.needs


def test_a_changed_rule_compiles_again(cache_at, tmp_path, durable):
    folder = _copy_rules(tmp_path)
    rules, _, _ = _load(folder)
    assert _fires(rules)  # 0.7 > max_std 0.5
    f = folder / "hyperparameters" / "init-std-too-large.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace("max_std: 0.5", "max_std: 0.9"), encoding="utf-8")
    rules, _, parsed = _load(folder)
    assert parsed == 1 and not _fires(rules)
    assert len(list(cache_at.glob("compiled-*.json"))) == 1  # the old entry was removed
    cache._COMPILED.clear()
    rules, _, parsed = _load(folder)
    assert parsed == 0 and not _fires(rules) and _fires(rules, value=1.0)


def test_a_parameter_override_compiles_the_rule_it_touches(cache_at, tmp_path, durable):
    folder = _copy_rules(tmp_path)
    rules, _, _ = _load(folder)
    assert _fires(rules)
    assert not _fires(rules, {"init-std-too-large.max_std": 0.9})
    assert not _fires(rules, {"max_std": 0.9})
    assert _fires(rules, {"other-rule.max_std": 0.9})
    assert _fires(rules)  # the cached form is unchanged


def test_a_changed_compiler_compiles_again(cache_at, tmp_path, durable, monkeypatch):
    folder = _copy_rules(tmp_path)
    rules, _, _ = _load(folder)
    assert _fires(rules)
    (first,) = cache_at.glob("compiled-*.json")
    key = next(iter({cache.origin(r) for r in rules}))
    before = cache.compiled_key(key)
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: real(p) + (b"# edited" if p.name == "compile.py" else b""))
    assert cache.compiled_key(key) != before
    assert _fires(rules)
    assert [p.name for p in cache_at.glob("compiled-*.json")] != [first.name]


def test_user_rules_are_compiled_every_time(cache_at, tmp_path, durable):
    folder = _copy_rules(tmp_path)
    user = load_rules([folder])[0]  # the same files, loaded as a user's: not from the cache
    assert all(cache.origin(r) is None for r in user)
    assert _fires(user)
    assert not list(cache_at.glob("compiled-*.json"))


def test_a_damaged_compiled_file_is_written_again(cache_at, tmp_path, durable):
    folder = _copy_rules(tmp_path)
    rules, _, _ = _load(folder)
    assert _fires(rules[:3] + [r for r in rules if r.id == "init-std-too-large"])  # a few rules first
    (written,) = cache_at.glob("compiled-*.json")
    assert len(json.loads(written.read_text(encoding="utf-8"))["rules"]) == 4
    assert _fires(rules)  # the others are added
    assert len(json.loads(written.read_text(encoding="utf-8"))["rules"]) == len(rules)
    written.write_text('{"format": 1, "rules": {"init-std-too-large": [["x", "', encoding="utf-8")
    cache._COMPILED.clear()
    assert _fires(rules) and not _fires(rules, value=0.1)
    assert set(json.loads(written.read_text(encoding="utf-8"))["rules"]) == {r.id for r in rules}


def test_the_caches_go_to_the_cache_folder_not_the_run(cache_at, tmp_path, durable):
    from advisor import diagnosis
    from advisor.diagnosis import diagnose

    diagnosis._load_builtin.cache_clear()  # read the rule base again, into this cache folder
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "lr_too_high", run)

    def state():
        return sorted((p.relative_to(run).as_posix(), p.stat().st_mtime_ns) for p in run.rglob("*"))

    before = state()
    report = diagnose(run, engine="durable")  # (the compiled cache is durable-rules')
    assert report.causes and state() == before
    assert {p.name.split("-")[0] for p in cache_at.iterdir()} == {"rules", "compiled"}


def test_a_cache_others_can_write_to_is_not_used(cache_at):
    # a cache is code and data this process loads: one that another user can write is no cache (issue 29)
    folder = builtin_rules_dir()
    _, _, parsed = _load(folder)
    assert parsed == 1 and list(cache_at.glob("rules-*.json"))
    os.chmod(cache_at, 0o777)
    cache._COMPILED.clear()
    _, _, parsed = _load(folder)
    assert parsed == 1  # parsed again: the world-writable folder was not trusted
    os.chmod(cache_at, 0o700)
    [entry] = cache_at.glob("rules-*.json")
    os.chmod(entry, 0o666)
    cache._COMPILED.clear()
    _, _, parsed = _load(folder)
    assert parsed == 1  # a file others could have rewritten is not read


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a file away")
def test_a_cache_file_of_another_user_is_not_read(cache_at):
    folder = builtin_rules_dir()
    _load(folder)
    [entry] = cache_at.glob("rules-*.json")
    os.chown(entry, 65534, 65534)
    cache._COMPILED.clear()
    _, _, parsed = _load(folder)
    assert parsed == 1
