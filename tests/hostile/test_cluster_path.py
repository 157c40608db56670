"""The cluster path (issue #50): --scheduler values that are not a Dask address, servers on loopback that are
not a Dask scheduler (garbage, HTTP, a frame header announcing terabytes, silence), a cluster that stops
working during the run, and --workers beyond the machine. Each is one line and exit 2, or a comparison made in
this process with a note, within the timeout; never a traceback, an allocation of what a server announces, or
a hang."""

from __future__ import annotations

import functools
import json
import operator
import os
import socket
import struct
import threading
import time

import pytest

from advisor.compare import dask_runner
from advisor.compare.dask_runner import ClusterRunner, SchedulerAddressError, check_address, parse_address
from tests.hostile.conftest import npy_dump

pytest.importorskip("distributed")

BAD_ADDRESSES = [
    "http://127.0.0.1:8786",
    "file:///etc/passwd",
    "inproc://x",
    "ucx://127.0.0.1:8786",
    "[::1",
    "[::1]",
    "tcp://[::1:8786",
    "127.0.0.1",
    "tcp://127.0.0.1:0",
    "tcp://127.0.0.1:65536",
    "tcp://127.0.0.1:99999999999",
    "tcp://127.0.0.1:8786/path",
    "a;b:8786",
    "tcp://host:8786;rm -rf x",
    "tcp://h\nx:8786",
    "tcp://`id`:8786",
    "tcp://$(id):8786",
    "tcp://user@host:8786",
    "tcp://-host:8786",
    "",
    "x" * 400,
]


@pytest.fixture
def dumps(tmp_path):
    npy_dump(tmp_path / "run" / "dump")
    npy_dump(tmp_path / "base" / "dump")
    return tmp_path / "run", tmp_path / "base"


@pytest.fixture
def short_timeout(monkeypatch):
    """The cluster timeout at 1 s (the CLI states 10 s) so that a silent server costs a second."""
    monkeypatch.setattr(dask_runner, "TIMEOUT", 1.0)


def _one_line_usage(code, err):
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("advisor: error:"), err
    assert "Traceback" not in err


@pytest.mark.parametrize("address", BAD_ADDRESSES, ids=range(len(BAD_ADDRESSES)))
def test_a_value_that_is_not_a_dask_address_is_one_line(dumps, cli, address):
    run, base = dumps
    start = time.monotonic()
    code, _out, err = cli("compare", run, base, "--scheduler", address)
    _one_line_usage(code, err)
    assert "--scheduler" in err and time.monotonic() - start < 3
    code, _out, err = cli("diagnose", run, "--scheduler", address, "-f", "json")
    _one_line_usage(code, err)


def test_addresses_advisor_accepts():
    assert check_address("local") == "local"
    assert check_address("127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert check_address("tcp://localhost:1") == "tcp://localhost:1"
    assert check_address("TCP://[::1]:65535") == "tcp://[::1]:65535"
    assert check_address("tls://10.0.0.12:8786") == "tls://10.0.0.12:8786"
    assert parse_address("tcp://node-3.cluster.example:8786").host == "node-3.cluster.example"


def test_an_address_off_this_machine_needs_tls_or_trust(dumps, cli):
    for value in ("tcp://10.0.0.12:8786", "10.0.0.12:8786", "tcp://node-3.example:8786", "tcp://[2001:db8::1]:1"):
        with pytest.raises(SchedulerAddressError, match="--trust-scheduler"):
            check_address(value)
        assert check_address(value, trusted=True).startswith("tcp://")
    run, base = dumps
    code, _out, err = cli("compare", run, base, "--scheduler", "tcp://10.0.0.12:8786")
    _one_line_usage(code, err)
    assert "runs code and returns pickles" in err and "tls.html" in err
    code, _out, err = cli("diagnose", run, "--scheduler", "10.0.0.12:8786")
    _one_line_usage(code, err)


def test_help_names_the_trust_flag(cli, capsys):
    from advisor.cli import main

    for sub in ("compare", "diagnose"):
        with pytest.raises(SystemExit):
            main([sub, "--help"])
        assert "--trust-scheduler" in capsys.readouterr().out


# -- servers on loopback that are not a Dask scheduler ------------------------------------------------------


class Server:
    """A TCP server on 127.0.0.1 whose every connection gets ``answer(conn)``; stopped by ``close``."""

    def __init__(self, answer):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.answer = answer
        self.conns: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            try:
                self.answer(conn)
            except OSError:
                pass

    def close(self):
        self.stop.set()
        self.thread.join(2)
        for c in self.conns:
            c.close()
        self.sock.close()


def _http(conn):
    conn.settimeout(0.3)
    try:
        conn.recv(65536)
    except OSError:
        pass
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


SERVERS = {
    "garbage": lambda conn: conn.sendall(b"\xff\xfe garbage \x00" * 8),
    "huge-frame": lambda conn: conn.sendall(struct.pack("Q", 1 << 42)),  # 4 TiB announced
    "huge-frame-list": lambda conn: conn.sendall(struct.pack("QQQ", 16, 1, 1 << 40)),
    "http": _http,
    "silent": lambda conn: None,  # accepts and never answers
    "closes": lambda conn: conn.close(),
}


@pytest.fixture(params=sorted(SERVERS))
def hostile_server(request):
    server = Server(SERVERS[request.param])
    yield request.param, server
    server.close()


def test_compare_with_a_server_that_is_not_a_scheduler_runs_here(dumps, cli, short_timeout, hostile_server):
    kind, server = hostile_server
    run, base = dumps
    start = time.monotonic()
    code, out, err = cli("compare", run, base, "--scheduler", f"tcp://127.0.0.1:{server.port}")
    elapsed = time.monotonic() - start
    assert code == 0, err
    assert "Traceback" not in err and "compared in this process" in err, err
    assert "2 pass" in out
    assert elapsed < 4, f"{kind}: {elapsed:.1f} s"


def test_the_first_message_is_checked_before_dask_reads_it(short_timeout):
    """What each server says is refused by advisor's own check: Dask's reader (which allocates what the frame
    header announces) never sees it."""
    expected = {
        "garbage": "announces",
        "huge-frame": "announces 4,398,046,511,104 bytes",
        "huge-frame-list": "not a Dask handshake",
        "http": "HTTP",
        "silent": "within",
        "closes": "closed the connection",
    }
    for kind, answer in SERVERS.items():
        server = Server(answer)
        try:
            with pytest.raises(dask_runner.DaskUnavailable, match=expected[kind]):
                dask_runner.probe(parse_address(f"tcp://127.0.0.1:{server.port}"), timeout=1.0)
        finally:
            server.close()


def test_diagnose_with_a_silent_server_goes_on_with_a_note(dumps, cli, short_timeout):
    server = Server(SERVERS["silent"])
    run, base = dumps
    try:
        start = time.monotonic()
        code, out, err = cli("diagnose", run, "-b", base, "--scheduler", f"127.0.0.1:{server.port}", "-f", "json")
        elapsed = time.monotonic() - start
    finally:
        server.close()
    assert code == 0, err
    assert elapsed < 6
    notes = [n for c in json.loads(out)["checks"] for n in c["notes"]]
    assert any("compared in this process" in n for n in notes), notes
    assert "advisor: note:" in err


def test_the_stated_timeout_is_ten_seconds():
    assert dask_runner.TIMEOUT == 10.0
    assert ClusterRunner("local").timeout == 10.0


def test_a_cluster_that_stops_working_leaves_its_tasks_to_this_process():
    """A scheduler with no worker: no task ends within the timeout, the scheduler says it has no worker, and
    the items run here, with a note."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=None, host="127.0.0.1", protocol="tcp") as c:
        with dask_runner.DaskRunner(c.scheduler_address, timeout=1.0) as runner:
            got = runner.run([functools.partial(operator.add, 1, 2)] * 3, [1, 1, 1])
            assert got == [3, 3, 3]
            assert runner.lost and "no worker left" in runner.notes[0] and "in this process" in runner.notes[0]
            assert runner.run([functools.partial(operator.mul, 2, 3)], [1]) == [6]  # no second wait


# -- --workers -----------------------------------------------------------------------------------------------


def test_workers_are_capped_by_the_machine(dumps, cli, monkeypatch):
    import distributed

    asked = {}

    def fake_cluster(**kw):
        asked.update(kw)
        raise OSError("no cluster in this test")

    monkeypatch.setattr(distributed, "LocalCluster", fake_cluster)
    run, base = dumps
    code, _out, err = cli("compare", run, base, "--scheduler", "local", "--workers", "1000000")
    assert code == 0, err
    assert asked["n_workers"] <= (os.cpu_count() or 1)
    assert "--workers 1000000 is more than this machine's" in err and "compared in this process" in err
    code, _out, err = cli("compare", run, base, "--workers", "1000000")
    assert code == 0 and "more than this machine's" in err
    for bad in ("0", "-3"):
        code, _out, err = cli("compare", run, base, "--workers", bad)
        _one_line_usage(code, err)
