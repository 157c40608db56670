"""A comparison's work items on a Dask cluster (``pip install "accuracy-advisor[dask]"``).

``--scheduler ADDRESS`` connects to a running scheduler (``tcp://host:8786``);
``--scheduler local`` starts a ``distributed.LocalCluster`` of ``--workers``
single-threaded processes (at most this machine's cores) for the run and closes
it after. Workers open the dump files themselves (a shared file system on a real
cluster): a task carries tensor records (paths, dtypes, shapes) and returns small
accumulators, never tensor data. Small items are batched so a task holds about
``TASK_BYTES`` of tensors (the scheduler's cost per task, about a millisecond,
stays small next to its compute; benchmarks/dask_bench.py); a big tensor's
ranges are tasks of their own. A task whose worker is lost is retried by Dask
(``RETRIES``); one that still fails gives its items a ``DumpReadError`` that
names the failure, so the pair's rows say "not compared" and the rest goes on.

A Dask cluster runs code and sends pickles back (docs/cluster.md): only a
cluster the user controls may be named. What advisor checks before and while
it uses one:

- the address (``check_address``): ``tcp://`` or ``tls://`` or a bare
  ``HOST:PORT``, or ``local``; anything else is a usage error before Dask sees
  it. An address off this machine without TLS needs ``trusted`` (the CLI's
  ``--trust-scheduler``).
- the server (``probe``): its first message must be a Dask handshake of at
  most ``MAX_HANDSHAKE_BYTES``, within the timeout; a server that speaks HTTP,
  sends garbage, announces a huge frame or says nothing is refused before
  Dask's own reader (which allocates what the frame header announces) sees it.
- every call: the connection, the handshake and each request run under the
  timeout (``_within``); a scheduler that stops answering during a run leaves
  its remaining tasks to this process, with a note (``notes``).

``ClusterRunner`` connects on first use and falls back to this process's
threads, with a note, when the cluster cannot be used.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from advisor.compare.runner import Item, Progress, ThreadRunner, run_batch
from advisor.read.dumps import DumpReadError
from advisor.read.safe import shown

#: tensor bytes per task (both sides) before a batch of small items is closed
TASK_BYTES = 64 << 20
#: items per task at most (10^5 tiny tensors: ~1,000 tasks, not 10^5)
TASK_ITEMS = 256
#: times Dask reruns a task whose worker died
RETRIES = 2
#: seconds for the connection, the handshake and each call to the cluster
TIMEOUT = 10.0
#: a scheduler's handshake is about 60 bytes; a first message above this is not a Dask scheduler's
MAX_HANDSHAKE_BYTES = 64 << 10
#: the parallelism a cluster may claim (it sizes the split of big tensors)
MAX_PARALLELISM = 4096
#: the address of a LocalCluster started for the run
LOCAL = "local"
#: where distributed documents TLS and its settings
TLS_DOCS = "https://distributed.dask.org/en/stable/tls.html"


class DaskUnavailable(RuntimeError):
    """The cluster cannot be used (not installed, not reachable, not a Dask scheduler, refused)."""


class SchedulerAddressError(DaskUnavailable, ValueError):
    """--scheduler's value is not a Dask address advisor accepts: a usage error, never a connection attempt."""


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise DaskUnavailable('the Dask engine needs dask.distributed: pip install "accuracy-advisor[dask]"') from None
    return distributed


def batches(sizes: list[int], task_bytes: int = TASK_BYTES, task_items: int = TASK_ITEMS) -> list[list[int]]:
    """Item indexes grouped into tasks, in item order: a batch closes at ``task_bytes`` or ``task_items``."""
    out: list[list[int]] = []
    cur: list[int] = []
    held = 0
    for k, n in enumerate(sizes):
        if cur and (held + n > task_bytes or len(cur) >= task_items):
            out.append(cur)
            cur, held = [], 0
        cur.append(k)
        held += n
    if cur:
        out.append(cur)
    return out


# --------------------------------------------------------------------------- the address
#: the characters of a Dask address advisor accepts (host names, IPv4, [IPv6], the scheme, the port)
_ADDRESS_CHARS = re.compile(r"^[A-Za-z0-9.:/\[\]-]+$")
_HOST_NAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)
_FORM = "tcp://HOST:PORT, tls://HOST:PORT, HOST:PORT or local"


def _q(value: str) -> str:
    """``value`` quoted for a one-line message: control characters (a newline) shown as ``\\xNN``."""
    return "'" + shown(value, newlines=False) + "'"


@dataclass(frozen=True)
class Address:
    scheme: str  # "tcp" or "tls"
    host: str  # a name, an IPv4 address, or an IPv6 address without brackets
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def loopback(self) -> bool:
        """The address is this machine's: ``localhost`` or a loopback IP (no name is looked up)."""
        if self.host.lower() == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_address(value: str) -> Address:
    """``tcp://HOST:PORT``, ``tls://HOST:PORT`` or ``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> an ``Address``;
    SchedulerAddressError saying what is wrong otherwise."""
    if not value or len(value) > 300 or not _ADDRESS_CHARS.match(value):
        bad = next((c for c in value if not _ADDRESS_CHARS.match(c)), "") if value and len(value) <= 300 else ""
        why = f"holds {bad!r}, which no Dask address holds" if bad else "is not an address"
        raise SchedulerAddressError(f"{_q(value)} {why}: give {_FORM}")
    scheme, sep, rest = value.partition("://")
    if not sep:
        scheme, rest = "tcp", value
    elif scheme.lower() not in ("tcp", "tls"):
        raise SchedulerAddressError(f"{_q(value)}: '{scheme}://' is not a Dask scheduler's scheme: give {_FORM}")
    if "/" in rest:
        raise SchedulerAddressError(f"{_q(value)}: an address holds no path: give {_FORM}")
    host, port = _host_port(value, rest)
    return Address(scheme.lower(), host, port)


def _host_port(value: str, rest: str) -> tuple[str, int]:
    if rest.startswith("["):
        inner, closed, tail = rest[1:].partition("]")
        if not closed:
            raise SchedulerAddressError(f"{_q(value)}: the IPv6 address has no closing ']' (e.g. [::1]:8786)")
        try:
            host = str(ipaddress.IPv6Address(inner))
        except ValueError:
            raise SchedulerAddressError(f"{_q(value)}: '{inner}' is not an IPv6 address") from None
        if not tail.startswith(":"):
            raise SchedulerAddressError(f"{_q(value)}: no port after the address (e.g. [{inner}]:8786)")
        return host, _port(value, tail[1:])
    host, sep, port = rest.rpartition(":")
    if not sep:
        raise SchedulerAddressError(f"{_q(value)}: no port (e.g. {rest}:8786)")
    if ":" in host:
        raise SchedulerAddressError(f"{_q(value)}: an IPv6 address needs brackets (e.g. [::1]:8786)")
    if not _HOST_NAME.match(host):
        raise SchedulerAddressError(f"{_q(value)}: '{host}' is not a host name or an IP address")
    return host, _port(value, port)


def _port(value: str, port: str) -> int:
    if not port.isdigit() or len(port) > 5 or not 1 <= int(port) <= 65535:
        raise SchedulerAddressError(f"{_q(value)}: the port must be a number from 1 to 65535, got '{port}'")
    return int(port)


def check_address(value: str, trusted: bool = False) -> str:
    """--scheduler's value checked before Dask sees it: ``local``, or the address written out in full.

    An address off this machine without TLS is refused unless ``trusted`` (--trust-scheduler): whoever answers
    there runs code and sends back pickles that advisor loads (docs/cluster.md)."""
    if value == LOCAL:
        return value
    address = parse_address(value)
    if address.scheme == "tcp" and not address.loopback and not trusted:
        raise SchedulerAddressError(
            f"{_q(value)} is not on this machine and not tls://: a Dask cluster runs code and returns pickles, so "
            "only a cluster you control may be named; use tls:// (" + TLS_DOCS + ") or say --trust-scheduler"
        )
    return str(address)


def worker_count(requested: int | None) -> tuple[int, str]:
    """The processes of a LocalCluster (or threads here): ``requested`` up to this machine's cores, and a
    note when it was cut."""
    cores = os.cpu_count() or 1
    if requested is None:
        return 1, ""
    if requested > cores:
        return cores, f"--workers {requested} is more than this machine's {cores} cores: {cores} used"
    return max(1, requested), ""


# --------------------------------------------------------------------------- the server's first words
def probe(address: Address, timeout: float = TIMEOUT) -> None:
    """Check that a Dask scheduler answers at ``address`` within ``timeout``: its first message (the handshake
    Dask sends on every connection) must come, be small and be a msgpack mapping. DaskUnavailable otherwise."""
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((address.host, address.port), timeout=timeout)
    except OSError as exc:
        raise DaskUnavailable(f"cannot reach the Dask scheduler at '{address}': {exc.strerror or exc}") from None
    try:
        if address.scheme == "tls":
            sock = _tls(sock, address)
        _read_handshake(sock, address, deadline)
    finally:
        sock.close()


def _tls(sock: socket.socket, address: Address) -> socket.socket:
    """The connection wrapped in the TLS settings of distributed's configuration."""
    distributed = _distributed()
    try:
        ctx = distributed.Security().get_connection_args("client").get("ssl_context")
    except Exception as exc:  # a certificate file that is missing or unreadable
        raise DaskUnavailable(f"tls:// at '{address}': distributed's TLS settings do not load ({exc})") from None
    if ctx is None:
        raise DaskUnavailable(
            f"tls:// at '{address}' needs distributed's TLS settings (distributed.comm.tls.ca-file, "
            f"client.cert, client.key; {TLS_DOCS})"
        )
    try:
        return ctx.wrap_socket(sock, server_hostname=address.host if ctx.check_hostname else None)
    except OSError as exc:
        raise DaskUnavailable(f"TLS with the Dask scheduler at '{address}' failed: {exc}") from None


def _read_handshake(sock: socket.socket, address: Address, deadline: float) -> None:
    head = _read_exactly(sock, 8, address, deadline)
    if head.startswith(b"HTTP/"):
        raise DaskUnavailable(f"'{address}' is not a Dask scheduler: it answers in HTTP (the dashboard's port?)")
    (size,) = struct.unpack("Q", head)  # native order, as distributed writes it
    if not 16 <= size <= MAX_HANDSHAKE_BYTES:
        raise DaskUnavailable(
            f"'{address}' is not a Dask scheduler: its first message announces {size:,} bytes "
            f"(a Dask handshake is under {MAX_HANDSHAKE_BYTES:,}; an HTTP server, the dashboard's port?)"
        )
    body = _read_exactly(sock, size, address, deadline)
    if not _is_handshake(body):
        raise DaskUnavailable(f"'{address}' is not a Dask scheduler: its first message is not a Dask handshake")


def _read_exactly(sock: socket.socket, n: int, address: Address, deadline: float) -> bytes:
    got = bytearray()
    while len(got) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DaskUnavailable(f"the server at '{address}' said nothing a Dask scheduler says within the timeout")
        sock.settimeout(left)
        try:
            chunk = sock.recv(n - len(got))
        except socket.timeout:
            continue
        except OSError as exc:
            raise DaskUnavailable(f"the server at '{address}' failed: {exc.strerror or exc}") from None
        if not chunk:
            raise DaskUnavailable(f"the server at '{address}' closed the connection: not a Dask scheduler")
        got += chunk
    return bytes(got)


def _is_handshake(body: bytes) -> bool:
    """Dask's frames (a count, their lengths, the frames) whose first frame is a msgpack mapping."""
    (count,) = struct.unpack_from("Q", body)
    if not 1 <= count <= 16 or len(body) < 8 * (1 + count):
        return False
    lengths = struct.unpack_from(f"{count}Q", body, 8)
    start = 8 * (1 + count)
    if start + sum(lengths) != len(body):
        return False
    try:
        import msgpack

        first = msgpack.unpackb(body[start : start + lengths[0]], raw=False, strict_map_key=False)
    except ImportError:  # pragma: no cover - msgpack comes with distributed
        return True
    except Exception:
        return False
    return isinstance(first, dict)


# --------------------------------------------------------------------------- calls under a hard timeout
def _within(seconds: float, what: str, call: Callable[[], Any], on_late: Callable[[Any], None] | None = None) -> Any:
    """``call()`` on a thread of its own, waited for ``seconds`` at most: DaskUnavailable when it takes longer
    (a name look-up or a Dask call with no timeout of its own). Its result, should it come later, goes to
    ``on_late`` (a Client to close)."""
    box: dict[str, Any] = {}
    late = threading.Event()

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:
            box["error"] = exc
            return
        if late.is_set() and on_late is not None:
            on_late(box["value"])

    thread = threading.Thread(target=target, name=f"advisor-dask-{what}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        late.set()
        if "value" in box and on_late is not None:  # it came between the wait and now (closing twice is harmless)
            on_late(box["value"])
        raise DaskUnavailable(f"{what}: no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _close_quietly(obj: Any, timeout: float) -> None:
    try:
        obj.close(timeout=timeout)
    except Exception:  # already gone: nothing left to close
        pass


# --------------------------------------------------------------------------- the runner
class DaskRunner:
    """Runs items on a Dask cluster: an existing one (``address``) or a LocalCluster (``"local"``).

    Connects when made; DaskUnavailable (SchedulerAddressError for a refused address) when it cannot."""

    in_process = False

    def __init__(
        self, address: str, workers: int | None = None, timeout: float = TIMEOUT, trusted: bool = False
    ) -> None:
        self.address = check_address(address, trusted)
        self.timeout = timeout
        #: what the user should know (workers capped, tasks run here after the scheduler stopped answering)
        self.notes: list[str] = []
        #: tasks that failed after their retries (their items hold a DumpReadError)
        self.failed_tasks = 0
        #: the cluster stopped answering: every item from then on runs in this process
        self.lost = False
        self.cluster: Any = None
        self.client: Any = None
        distributed = _distributed()
        with self._config():
            if self.address == LOCAL:
                self._start_local(distributed, workers)
            else:
                self._connect(distributed, parse_address(self.address))
            self.parallelism = self._parallelism()

    def _config(self) -> Any:
        """distributed's connection timeout set to ours while the cluster is reached (its TCP keep-alive timeout
        is left as it is: distributed needs 11 s or more there)."""
        import dask

        return dask.config.set({"distributed.comm.timeouts.connect": f"{self.timeout:g}s"})

    def _start_local(self, distributed: Any, workers: int | None) -> None:
        n, note = worker_count(workers)
        if note:
            self.notes.append(note)
        try:
            self.cluster = distributed.LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=50,  # logging.CRITICAL: no worker chatter (heartbeats failing at shut-down)
            )
            self.client = distributed.Client(self.cluster, timeout=self.timeout, set_as_default=False)
        except Exception as exc:  # no process can start (a read-only temporary folder, no ports)
            if self.cluster is not None:
                _close_quietly(self.cluster, self.timeout)
            raise DaskUnavailable(f"cannot start a local Dask cluster: {type(exc).__name__}: {exc}") from None

    def _connect(self, distributed: Any, address: Address) -> None:
        start = time.monotonic()
        _within(self.timeout, f"the Dask scheduler at '{address}'", lambda: probe(address, self.timeout))
        left = max(1.0, self.timeout - (time.monotonic() - start))
        try:
            self.client = _within(
                left,
                f"connecting to the Dask scheduler at '{address}'",
                lambda: distributed.Client(str(address), timeout=left, set_as_default=False),
                on_late=lambda client: _close_quietly(client, self.timeout),
            )
        except DaskUnavailable:
            raise
        except Exception as exc:  # refused, a failed handshake, a version clash, an assertion in distributed
            raise DaskUnavailable(
                f"cannot reach the Dask scheduler at '{address}': {type(exc).__name__}: {exc}"
            ) from None

    def _parallelism(self) -> int:
        try:
            nthreads = self.client.nthreads(callback_timeout=self.timeout)
            total = sum(int(n) for n in nthreads.values())
        except Exception as exc:
            self.close()
            raise DaskUnavailable(f"the Dask scheduler at '{self.address}' did not list its workers: {exc}") from None
        return max(1, min(MAX_PARALLELISM, total))

    def run(self, items: list[Item], sizes: list[int], progress: Progress | None = None) -> list[Any]:
        results: list[Any] = [None] * len(items)
        groups = batches(sizes)
        left = self._run_on_cluster(items, sizes, groups, results, progress) if not self.lost else groups
        if left:
            self._run_here(items, sizes, left, results, progress)
        return results

    def _run_on_cluster(
        self,
        items: list[Item],
        sizes: list[int],
        groups: list[list[int]],
        results: list[Any],
        progress: Progress | None,
    ) -> list[list[int]]:
        """The groups run on the cluster; those left when it stopped answering (they run here)."""
        distributed = _distributed()
        try:
            futures = {
                self.client.submit(run_batch, [items[k] for k in group], retries=RETRIES, pure=False): group
                for group in groups
            }
        except Exception as exc:
            return self._lose(groups, exc)
        pending = set(futures)
        while pending:
            try:
                with self.client.as_current():  # not made the default client: wait() is told which one
                    done, pending = distributed.wait(list(pending), timeout=self.timeout, return_when="FIRST_COMPLETED")
            except (TimeoutError, asyncio.TimeoutError):
                done = set()
            except Exception as exc:
                return self._lose([futures[f] for f in pending], exc)
            if not done:
                problem = self._silent()
                if problem:
                    return self._lose([futures[f] for f in pending], problem)
                continue
            for fut in done:
                self._collect(fut, futures[fut], results)
                if progress:
                    progress(sum(sizes[k] for k in futures[fut]))
        return []

    def _collect(self, fut: Any, group: list[int], results: list[Any]) -> None:
        try:
            got = fut.result(timeout=self.timeout)
        except Exception as exc:  # a lost worker after its retries, a worker that cannot import advisor
            self.failed_tasks += 1
            why = DumpReadError(f"not compared: its task failed on the Dask cluster ({type(exc).__name__}: {exc})")
            got = [why] * len(group)
        if not isinstance(got, list) or len(got) != len(group):
            why = DumpReadError("not compared: its task on the Dask cluster returned something else than results")
            got = [why] * len(group)
        for k, res in zip(group, got):
            results[k] = res
        fut.release()

    def _silent(self) -> Any:
        """Why the cluster is to be given up (None: it answers and has workers): no task ended within the
        timeout, so ask the scheduler who it is, under the timeout too."""
        try:
            ident = _within(
                self.timeout,
                f"the Dask scheduler at '{self.address}'",
                lambda: self.client.sync(self.client.scheduler.identity, callback_timeout=self.timeout),
            )
        except Exception as exc:
            return exc
        if isinstance(ident, dict) and not ident.get("workers"):
            return "it has no worker left"
        return None

    def _lose(self, groups: list[list[int]], why: Any) -> list[list[int]]:
        self.lost = True
        self.notes.append(
            f"the Dask cluster at '{self.address}' was given up during the run ({why}); "
            f"{len(groups)} of its tasks were compared in this process"
        )
        return groups

    def _run_here(
        self,
        items: list[Item],
        sizes: list[int],
        groups: list[list[int]],
        results: list[Any],
        progress: Progress | None,
    ) -> None:
        from advisor.compare.engine import default_workers

        ks = [k for group in groups for k in group]
        got = ThreadRunner(default_workers()).run([items[k] for k in ks], [sizes[k] for k in ks], progress)
        for k, res in zip(ks, got):
            results[k] = res

    def close(self) -> None:
        if self.client is not None:
            _close_quietly(self.client, self.timeout)
            self.client = None
        if self.cluster is not None:
            _close_quietly(self.cluster, self.timeout)
            self.cluster = None

    def __enter__(self) -> "DaskRunner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ClusterRunner:
    """A ``DaskRunner`` made on first use (a diagnosis whose run has no dumps starts no cluster); when the
    cluster cannot be used, the items run on this process's threads and ``notes`` says why. The address is
    checked when made: SchedulerAddressError (a usage error) for one advisor refuses."""

    def __init__(
        self, address: str, workers: int | None = None, trusted: bool = False, timeout: float | None = None
    ) -> None:
        self.address = check_address(address, trusted)
        self.workers, self.trusted = workers, trusted
        self.timeout = TIMEOUT if timeout is None else timeout
        self._notes: list[str] = []
        self._inner: DaskRunner | ThreadRunner | None = None

    def _runner(self) -> DaskRunner | ThreadRunner:
        if self._inner is None:
            try:
                self._inner = DaskRunner(self.address, self.workers, self.timeout, self.trusted)
            except DaskUnavailable as exc:
                from advisor.compare.engine import default_workers

                self._notes.append(f"{exc}; compared in this process")
                self._inner = ThreadRunner(default_workers())
        return self._inner

    @property
    def parallelism(self) -> int:
        return self._runner().parallelism

    @property
    def in_process(self) -> bool:
        return self._runner().in_process

    @property
    def notes(self) -> list[str]:
        inner = self._inner.notes if isinstance(self._inner, DaskRunner) else []
        return self._notes + inner

    def run(self, items: list[Item], sizes: list[int], progress: Progress | None = None) -> list[Any]:
        return self._runner().run(items, sizes, progress)

    def close(self) -> None:
        if isinstance(self._inner, DaskRunner):
            self._inner.close()

    def __enter__(self) -> "ClusterRunner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "DaskRunner",
    "ClusterRunner",
    "DaskUnavailable",
    "SchedulerAddressError",
    "Address",
    "parse_address",
    "check_address",
    "worker_count",
    "probe",
    "batches",
    "TASK_BYTES",
    "TASK_ITEMS",
    "RETRIES",
    "TIMEOUT",
]
