"""A comparison's work items on a Dask cluster (``pip install "accuracy-advisor[dask]"``).

``--scheduler ADDRESS`` connects to a running scheduler (``tcp://host:8786``);
``--scheduler local`` starts a ``distributed.LocalCluster`` of ``--workers``
single-threaded processes for the run and closes it after. Workers open the
dump files themselves (a shared file system on a real cluster): a task
carries tensor records (paths, dtypes, shapes) and returns small accumulators,
never tensor data. Small items are batched so a task holds about
``TASK_BYTES`` of tensors (the scheduler's cost per task, about a millisecond,
stays small next to its compute; benchmarks/dask_bench.py); a big tensor's
ranges are tasks of their own. A task whose worker is lost is retried by Dask
(``RETRIES``); one that still fails gives its items a ``DumpReadError`` that
names the failure, so the pair's rows say "not compared" and the rest goes on.
"""

from __future__ import annotations

from typing import Any

from advisor.compare.runner import Item, Progress, run_batch
from advisor.read.dumps import DumpReadError

#: tensor bytes per task (both sides) before a batch of small items is closed
TASK_BYTES = 64 << 20
#: items per task at most (10^5 tiny tensors: ~1,000 tasks, not 10^5)
TASK_ITEMS = 256
#: times Dask reruns a task whose worker died
RETRIES = 2


class DaskUnavailable(RuntimeError):
    pass


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


class DaskRunner:
    """Runs items on a Dask cluster: an existing one (``address``) or a LocalCluster (``"local"``)."""

    in_process = False

    def __init__(self, address: str, workers: int | None = None, timeout: float = 10.0) -> None:
        distributed = _distributed()
        self.cluster = None
        if address == "local":
            self.cluster = distributed.LocalCluster(
                n_workers=max(1, workers or 1),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=50,  # logging.CRITICAL: no worker chatter (heartbeats failing at shut-down)
            )
            self.client = distributed.Client(self.cluster, timeout=timeout)
        else:
            try:
                self.client = distributed.Client(address, timeout=timeout)
            except (OSError, TimeoutError) as exc:
                raise DaskUnavailable(f"cannot reach the Dask scheduler at '{address}': {exc}") from None
        self.parallelism = max(1, sum(self.client.nthreads().values()))
        #: tasks that failed after their retries (their items hold a DumpReadError)
        self.failed_tasks = 0

    def run(self, items: list[Item], sizes: list[int], progress: Progress | None = None) -> list[Any]:
        distributed = _distributed()
        groups = batches(sizes)
        futures = {
            self.client.submit(run_batch, [items[k] for k in group], retries=RETRIES, pure=False): group
            for group in groups
        }
        results: list[Any] = [None] * len(items)
        for fut in distributed.as_completed(list(futures)):
            group = futures[fut]
            try:
                got = fut.result()
            except Exception as exc:  # a lost worker after its retries, a worker that cannot import advisor
                self.failed_tasks += 1
                why = DumpReadError(f"not compared: its task failed on the Dask cluster ({type(exc).__name__}: {exc})")
                got = [why] * len(group)
            for k, res in zip(group, got):
                results[k] = res
            if progress:
                progress(sum(sizes[k] for k in group))
            fut.release()
        return results

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self) -> "DaskRunner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["DaskRunner", "DaskUnavailable", "batches", "TASK_BYTES", "TASK_ITEMS", "RETRIES"]
