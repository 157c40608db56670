"""Which metrics pass runs: the compiled kernel (``kernel.py``, numba) when it loads, imported once per process
and only when asked for; and BLAS kept on the calling thread while our own threads use the cores."""

from __future__ import annotations

import contextlib

try:  # OpenBLAS' own threads fight ours (measured: np.dot 10-250x slower on 2 busy cores)
    from threadpoolctl import threadpool_limits as _threadpool_limits
except ImportError:  # pragma: no cover - optional
    _threadpool_limits = None

_KERNEL: object = None  # the kernel module once imported; False when it cannot be
#: why the kernel could not be loaded (for the error of an explicit compare.kernel=compiled)
KERNEL_PROBLEM = ""


def compiled_kernel():
    """The compiled kernel module (``advisor.compare.kernel``), or None when numba is missing or unusable."""
    global _KERNEL, KERNEL_PROBLEM
    if _KERNEL is None:
        try:
            from advisor.compare import kernel

            _KERNEL = kernel
        except ImportError as exc:
            _KERNEL, KERNEL_PROBLEM = False, f"numba is not installed ({exc})"
        except Exception as exc:  # e.g. numba's RuntimeError when no cache folder is writable
            _KERNEL, KERNEL_PROBLEM = False, f"numba could not load the kernel: {type(exc).__name__}: {exc}"
    return _KERNEL or None


def kernel_loaded() -> bool:
    """Whether the compiled kernel is already imported in this process (its start-up is paid)."""
    return bool(_KERNEL)


def single_threaded_blas():
    """A context in which BLAS (np.dot) runs on the calling thread only (threadpoolctl, when installed)."""
    if _threadpool_limits is None:
        return contextlib.nullcontext()
    return _threadpool_limits(limits=1, user_api="blas")
