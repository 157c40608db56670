"""Who runs a comparison's work items: threads in this process, or a Dask cluster (``dask_runner.py``).

A work item is a ``functools.partial`` of a module-level function over tensor
records (paths and header facts, no data): picklable as it is, so the same
item runs on a thread here or in a Dask worker that reads the dump from a
shared file system. A runner returns the results in item order; an item that
cannot read its tensors returns the ``DumpReadError`` instead of raising, so
one bad file never stops the rest.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Protocol

from advisor.compare.kernel_loader import single_threaded_blas
from advisor.read.dumps import DumpReadError

Item = Callable[[], Any]
Progress = Callable[[int], None]


class Runner(Protocol):
    #: the number of items it runs at once (tensors are split into about twice as many ranges)
    parallelism: int
    #: whether the items run in this process (a compiled kernel is then warmed up here first)
    in_process: bool

    def run(self, items: list[Item], sizes: list[int], progress: Progress | None = None) -> list[Any]:
        """The items' results in item order; ``progress(bytes)`` as items finish."""
        ...


def call(item: Item) -> Any:
    try:
        return item()
    except DumpReadError as exc:
        return exc


#: glibc's mallopt parameters (malloc.h) and the values a worker process gets (see ``roomy_malloc``)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
TRIM_BYTES, MMAP_BYTES = 64 << 20, 16 << 20
_malloc_set = False


def roomy_malloc() -> None:
    """Let glibc keep freed chunk buffers in this process instead of returning each to the system.

    Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also freezes glibc's mmap
    threshold at 128 KB: every 0.5 MB chunk temporary of the metrics pass is then mapped and unmapped, page
    faults included, and the pass runs 2-3x slower than in a plain process (measured: a min-max KL of 1 MB
    tensors 0.12 s here, 0.36 s in a worker). Once per process; nothing on other C libraries."""
    global _malloc_set
    if _malloc_set:
        return
    _malloc_set = True
    import ctypes
    import ctypes.util
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt(M_MMAP_THRESHOLD, MMAP_BYTES)
    mallopt(M_TRIM_THRESHOLD, TRIM_BYTES)


def run_batch(items: list[Item]) -> list[Any]:
    """Several items, one after the other, BLAS on the calling thread (one task of a cluster)."""
    roomy_malloc()
    with single_threaded_blas():
        return [call(item) for item in items]


class ThreadRunner:
    """Today's in-process path: ``workers`` threads (numpy releases the GIL inside its loops)."""

    in_process = True

    def __init__(self, workers: int) -> None:
        self.parallelism = max(1, workers)

    def run(self, items: list[Item], sizes: list[int], progress: Progress | None = None) -> list[Any]:
        results: list[Any] = [None] * len(items)
        with single_threaded_blas():  # our threads, not BLAS's, use the cores
            if self.parallelism <= 1 or len(items) <= 1:
                for k, item in enumerate(items):
                    results[k] = call(item)
                    if progress:
                        progress(sizes[k])
                return results
            order = sorted(range(len(items)), key=lambda k: -sizes[k])  # big items first: better balance

            def indexed(k: int) -> tuple[int, Any]:
                return k, call(items[k])

            with ThreadPoolExecutor(max_workers=self.parallelism) as pool:
                for k, res in pool.map(indexed, order):
                    results[k] = res
                    if progress:
                        progress(sizes[k])
        return results


__all__ = ["Runner", "ThreadRunner", "run_batch", "call", "Item"]
