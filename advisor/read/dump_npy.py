"""The .npy tensor files of a dump: their header read when the dump is indexed, their data loaded on demand.

Opened with ``allow_pickle=False`` (object arrays are refused) and memory-mapped when large; bfloat16 saved as raw
2-byte records comes back as ``BFloat16Bits``.
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import Literal

import numpy as np

from advisor.read.dump_files import BFloat16Bits, DumpReadError, TensorRecord


#: bytes read to find an .npy header (numpy pads headers to 64 or 128 bytes; longer ones are read again)
HEADER_PROBE = 4096


def fill_npy_header(rec: TensorRecord) -> None:
    """dtype and shape from the .npy header (one open, one small read: a dump of 10^5 tensors is indexed
    without mapping any); a refused or broken file sets ``problem``."""
    assert rec.file is not None
    try:
        with open(rec.file, "rb", buffering=0) as raw:
            head = raw.read(HEADER_PROBE)  # one read holds the header of nearly every file
            size = os.fstat(raw.fileno()).st_size
            fh = io.BytesIO(head)
            version = np.lib.format.read_magic(fh)
            header_len = int.from_bytes(head[8:10] if version == (1, 0) else head[8:12], "little")
            if 12 + header_len > len(head) and len(head) == HEADER_PROBE:  # a long header: read it whole
                raw.seek(0)
                fh = io.BytesIO(raw.read(12 + header_len))
                np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version in ((2, 0), (3, 0)):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                raise ValueError(f"unknown .npy version {version}")
            offset = fh.tell()
        _check_npy_dtype(dtype)
        if size - offset < math.prod(int(d) for d in shape) * dtype.itemsize:
            raise DumpReadError(TRUNCATED)
    except DumpReadError as exc:
        rec.problem = str(exc)
        return
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        rec.problem = str(_npy_error(exc))
        return
    rec.dtype = "bfloat16" if _is_bfloat16_record(dtype) else str(dtype)
    rec.shape = tuple(int(s) for s in shape)
    rec.npy_layout = (dtype, bool(fortran), offset)


#: an .npy tensor of at most this many bytes is read into memory (one read); a bigger one is memory-mapped
READ_WHOLE_BYTES = 1 << 20


def load_indexed_npy(rec: TensorRecord) -> np.ndarray:
    """The tensor of an .npy file whose header was read when the dump was indexed (``npy_layout``)."""
    assert rec.file is not None and rec.npy_layout is not None and rec.shape is not None
    dtype, fortran, offset = rec.npy_layout
    count = math.prod(rec.shape)
    order: Literal["F", "C"] = "F" if fortran else "C"
    try:
        if count * dtype.itemsize <= READ_WHOLE_BYTES:
            with open(rec.file, "rb") as fh:
                fh.seek(offset)
                data = fh.read(count * dtype.itemsize)
            if len(data) < count * dtype.itemsize:  # the file got shorter since it was indexed
                raise DumpReadError(TRUNCATED)
            arr = np.frombuffer(data, dtype=dtype, count=count).reshape(rec.shape, order=order)
        else:
            arr = np.memmap(rec.file, dtype=dtype, mode="r", offset=offset, shape=rec.shape, order=order)
    except DumpReadError:
        raise
    except (OSError, ValueError) as exc:  # the file changed since it was indexed (shorter, gone)
        raise _npy_error(exc) from None
    if _is_bfloat16_record(dtype):
        return BFloat16Bits(arr.view(np.int16))
    return arr


TRUNCATED = "truncated .npy file (fewer bytes than its header announces)"
PICKLED = "holds pickled Python objects (refused: loading them could run code)"


def _npy_error(exc: BaseException) -> DumpReadError:
    """numpy's error on an .npy file as the reason advisor gives (pickled objects, truncation, else numpy's)."""
    text = str(exc)
    if "pickle" in text.lower() or "object" in text.lower():
        return DumpReadError(PICKLED)
    if "mmap length" in text or "larger than" in text or "cannot reshape" in text:
        return DumpReadError(TRUNCATED)
    return DumpReadError(f"not a readable .npy file: {text}" if text else "not a readable .npy file")


def _is_bfloat16_record(dtype: np.dtype) -> bool:
    """numpy has no bfloat16: ml_dtypes and torch-to-numpy writers save it as raw 2-byte records ('<V2')."""
    return dtype.kind == "V" and dtype.itemsize == 2 and dtype.names is None


def _check_npy_dtype(dtype: np.dtype) -> None:
    """Raises DumpReadError for a dtype the comparison does not take (objects, float8 records, text...)."""
    if dtype.hasobject:
        raise DumpReadError(PICKLED)
    if _is_bfloat16_record(dtype):
        return
    if dtype.kind == "V" and dtype.itemsize == 1 and dtype.names is None:
        raise DumpReadError(
            "raw 1-byte values (dtype |V1, a float8 tensor as ml_dtypes writes it): the .npy header does not say "
            "whether it is float8 e4m3 or e5m2, so it is not compared; save float8 tensors as float32"
        )
    if dtype.kind not in "biufc":
        raise DumpReadError(f"not numeric (dtype {dtype}): not compared")


def open_npy(path: Path) -> np.ndarray:
    """A read-only memory map of an .npy file; refuses pickled objects and truncated files."""
    if not path.is_file():
        raise DumpReadError("file not found")
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        raise _npy_error(exc) from None
    except (OSError, EOFError) as exc:
        raise DumpReadError(f"not a readable .npy file: {exc}") from None
    if not isinstance(arr, np.ndarray):
        raise DumpReadError("not a single array")
    _check_npy_dtype(arr.dtype)
    if _is_bfloat16_record(arr.dtype):
        return BFloat16Bits(arr.view(np.int16))
    return arr
