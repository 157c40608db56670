"""-o of diagnose and compare (issue #50): a FIFO, a device or a socket is refused before anything opens it
(opening a FIFO for writing blocks until a reader comes), and a read-only report is named, never replaced.
Run names in a sweep's table are escaped in every format."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import time

import pytest

from advisor.atomic import target_problem, write_text_atomic
from tests.hostile.conftest import HEALTHY, npy_dump


@pytest.fixture
def dumps(tmp_path):
    npy_dump(tmp_path / "run" / "dump")
    npy_dump(tmp_path / "base" / "dump")
    return tmp_path / "run", tmp_path / "base"


def _one_line_usage(code, err, *words):
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("advisor: error:"), err
    for w in words:
        assert w in err, err


def _argv(cmd, run, base, target):
    if cmd == "diagnose":
        return ["diagnose", run, "-o", target, "-f", "json"]
    return ["compare", run, base, "-o", target]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("cmd", ["diagnose", "compare"])
def test_a_fifo_is_refused_not_opened(dumps, tmp_path, cli, cmd):
    run, base = dumps
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)  # opening it for writing would block until a reader comes
    start = time.monotonic()
    code, _out, err = cli(*_argv(cmd, run, base, fifo))
    _one_line_usage(code, err, "FIFO", str(fifo))
    assert time.monotonic() - start < 10 and stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("cmd", ["diagnose", "compare"])
def test_a_device_or_a_socket_is_refused(dumps, tmp_path, cli, cmd):
    run, base = dumps
    sock_path = tmp_path / "s.json"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    try:
        code, _out, err = cli(*_argv(cmd, run, base, sock_path))
        _one_line_usage(code, err, "socket")
    finally:
        server.close()
    if cmd == "diagnose" and os.path.exists("/dev/null"):
        code, _out, err = cli(*_argv(cmd, run, base, "/dev/null"))
        _one_line_usage(code, err, "device")


@pytest.mark.parametrize("cmd", ["diagnose", "compare"])
def test_a_read_only_report_is_not_replaced(dumps, tmp_path, cli, cmd):
    run, base = dumps
    old = tmp_path / "old.json"
    old.write_text("the old report\n")
    old.chmod(0o444)
    code, _out, err = cli(*_argv(cmd, run, base, old))
    _one_line_usage(code, err, "read-only", str(old))
    assert old.read_text() == "the old report\n" and stat.S_IMODE(os.stat(old).st_mode) == 0o444
    old.chmod(0o644)  # writable: replaced as before
    code, _out, err = cli(*_argv(cmd, run, base, old))
    assert code == 0, err
    assert old.read_text() != "the old report\n"


def test_the_atomic_writer_refuses_what_is_not_a_regular_file(tmp_path):
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
        with pytest.raises(OSError, match="FIFO"):
            write_text_atomic(tmp_path / "fifo", "x")
    assert target_problem(tmp_path / "missing.json") is None
    (tmp_path / "ok.json").write_text("{}")
    assert target_problem(tmp_path / "ok.json") is None


# -- run names in a sweep's table ---------------------------------------------------------------------------

EVIL_RUN_NAMES = ("<img src=x onerror=alert(1)>", "[click](javascript:alert(1))", "a | b", "nl\nx", "esc\x1b[2J")


@pytest.fixture
def evil_runs(tmp_path):
    runs = []
    for name in EVIL_RUN_NAMES:
        shutil.copytree(HEALTHY, tmp_path / name)
        runs.append(tmp_path / name)
    return runs


def test_sweep_names_are_escaped_in_every_format(evil_runs, cli):
    code, md, err = cli("diagnose", *evil_runs, "-f", "md", "-q")
    assert code == 0, err
    assert "<img" not in md and "&lt;img" in md
    assert not re.search(r"(?<!\\)\[click(?<!\\)\]\(", md) and "\\[click\\](javascript:" in md  # no live link
    assert "a \\| b" in md and "\x1b" not in md
    assert len(md.splitlines()) == 2 + len(EVIL_RUN_NAMES)  # a newline in a name breaks no row
    code, text, err = cli("diagnose", *evil_runs, "-q")
    assert code == 0, err
    assert "\x1b" not in text and len(text.splitlines()) == 1 + len(EVIL_RUN_NAMES)
    code, out, err = cli("diagnose", *evil_runs, "-f", "json", "-q")
    assert code == 0, err
    assert [r["run"].rsplit("/", 1)[-1] for r in json.loads(out)["runs"]] == list(EVIL_RUN_NAMES)
