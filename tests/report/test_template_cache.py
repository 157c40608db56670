"""The report templates' compiled code is kept in advisor's cache folder and read back (render.py).

Same output with and without the cache; a damaged or foreign cache file is compiled again; a cache folder that
cannot be written only means compiling from source; JSON output does not import jinja at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report.conftest import make_report

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ("text", "md", "html")

SCRIPT = """
import json, sys
from tests.report.conftest import make_report
from advisor.report.render import render
out = {fmt: render(make_report(), fmt) for fmt in sys.argv[1:]}
out["jinja2 imported"] = "jinja2" in sys.modules
print(json.dumps(out))
"""


def _render(cache: Path | None, *formats: str) -> dict:
    """Renders in a fresh interpreter (the environments are built once per process)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ADVISOR_NO_CACHE", None)
    if cache is None:
        env["ADVISOR_NO_CACHE"] = "1"
    else:
        env["ADVISOR_CACHE_DIR"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *formats], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout)


def test_cached_templates_render_the_same_text(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    plain = _render(None, *FORMATS)
    assert not cache.exists()
    first = _render(cache, *FORMATS)  # compiles and writes
    files = sorted((cache / "templates").glob("*.code"))
    assert len(files) >= len(FORMATS)  # one per template, the HTML partials too
    stamps = {f: f.stat().st_mtime_ns for f in files}
    second = _render(cache, *FORMATS)  # reads them back
    assert {f: f.stat().st_mtime_ns for f in files} == stamps  # read, not written again
    for fmt in FORMATS:
        assert plain[fmt] == first[fmt] == second[fmt]
    assert "Learning rate too high" in second["text"]


def test_a_damaged_cache_file_is_compiled_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    want = _render(cache, "text")["text"]
    (code,) = (cache / "templates").glob("*.code")
    head, checksum, _ = code.read_bytes().split(b"\n", 2)
    code.write_bytes(head + b"\n" + checksum + b"\n" + b"\x00not marshal data")
    assert _render(cache, "text")["text"] == want
    code.write_bytes(b"advisor-template 0 from another version\n" + checksum + b"\n")
    assert _render(cache, "text")["text"] == want
    assert code.read_bytes().split(b"\n", 1)[0] == head  # written again in this version's format


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a folder this user cannot write")
def test_a_cache_folder_that_cannot_be_written_only_means_compiling(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert _render(locked, "text")["text"] == make_report_text()
    finally:
        locked.chmod(0o700)


def test_a_cache_file_is_not_a_folder_problem(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "templates").write_text("a file where the folder would go")
    assert _render(cache, "text")["text"] == make_report_text()


def test_json_output_does_not_import_jinja(tmp_path: Path) -> None:
    out = _render(tmp_path / "cache", "json")
    assert json.loads(out["json"])["causes"][0]["id"] == "lr_too_high"
    assert out["jinja2 imported"] is False
    assert _render(tmp_path / "cache", "text")["jinja2 imported"] is True


def make_report_text() -> str:
    from advisor.report.render import render

    return render(make_report(), "text")


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_compiled_code_others_could_write_is_not_loaded(tmp_path: Path) -> None:
    # marshal data is code: a cache file another user could have written is compiled from source instead
    cache = tmp_path / "cache"
    want = _render(cache, "text")["text"]
    (code,) = (cache / "templates").glob("*.code")
    head, checksum, real = code.read_bytes().split(b"\n", 2)
    import marshal

    evil = marshal.dumps(compile("raise SystemExit('loaded foreign code')", "<evil>", "exec"))
    code.write_bytes(head + b"\n" + checksum + b"\n" + evil)
    code.chmod(0o666)  # as if another user wrote it
    assert _render(cache, "text")["text"] == want
    (cache / "templates").chmod(0o777)
    code.write_bytes(head + b"\n" + checksum + b"\n" + evil)
    code.chmod(0o644)
    assert _render(cache, "text")["text"] == want  # the folder is not trusted either
