"""What every dump layout's reader shares (``dumps.py`` and the readers of ``dumps_msprobe.py``,
``dumps_mindspore.py`` and ``dumps_tfdbg.py``): the tensor records, the error, the limits, and the helpers that read a
dump's files safely.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from advisor.read.safe import UnsafeInput, loads_json, resolve_within

MAX_JSON_BYTES = 200_000_000
MAX_DUMP_JSON_DEPTH = 200  # dump.json nests lists of tensors of lists; never this deep
_TENSOR_NAME = re.compile(r"^(?P<op>.+)\.(?P<role>input|output)\.(?P<index>[^.]+(?:\.[^.]+)*)$")
_NATURAL = re.compile(r"(\d+)")
#: float dtypes we compare; anything else is compared only for equality of shape
FLOAT_KINDS = "fc"


class DumpReadError(ValueError):
    """A dump (or one tensor of it) that cannot be read; the message names the problem."""


@dataclass(slots=True)  # 10^5 of them in a big dump: no per-instance dict
class TensorRecord:
    """One dumped tensor: where it is, what it belongs to, what was recorded about it."""

    name: str  # e.g. Functional.gelu.0.forward.output.0
    op: str  # e.g. Functional.gelu.0.forward
    role: Literal["input", "output"]
    index: str  # "0", "1", "approximate" ...
    order: int  # position of its operator in execution order (0-based)
    op_type: str | None = None  # gelu, conv2d, Conv2d, LayerNorm ...
    dtype: str | None = None  # numpy-style name: float32, float16, bfloat16 ...
    shape: tuple[int, ...] | None = None
    file: Path | None = None  # absolute path of the tensor file (tensor mode)
    rel_file: str | None = None  # the same, as shown to the user
    stats: dict[str, float] | None = None  # Max/Min/Mean/Norm as recorded (statistics)
    problem: str | None = None  # why the tensor cannot be used (refused / unreadable)
    #: an .npy file's header as read when the dump was indexed: (dtype, fortran order, data offset), so that
    #: loading it does not parse the header again
    npy_layout: tuple[np.dtype, bool, int] | None = field(default=None, repr=False, compare=False)
    #: a tensor inside a record of a tfdbg2 file: (offset, length, output index) of its DebugEvent (read.dumps_tfdbg)
    blob: tuple[int, int, int] | None = field(default=None, repr=False, compare=False)

    @property
    def direction(self) -> str:
        """forward or backward (from the operator name), '' when unknown."""
        parts = self.op.split(".")
        for p in reversed(parts):
            if p in ("forward", "backward"):
                return p
        return ""


@dataclass
class Dump:
    """One dump folder of one side."""

    root: Path  # the folder holding dump.json / the .npy files
    layout: Literal["npy", "msprobe", "mindspore", "tfdbg"]
    mode: Literal["tensor", "statistics"]
    records: list[TensorRecord] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file shown to the user, why)
    framework: str | None = None
    device: str | None = None  # as the dump states it (msprobe's or a manifest's ``device``): cpu, cuda, npu ...
    #: non-tensor arguments per operator call (msprobe: ``{"type": "str", "value": "tanh"}`` items):
    #: positional ones as ``arg<i>``, keyword ones by name; values are str, int, float, bool or None
    args: dict[str, dict[str, Any]] = field(default_factory=dict)

    def ops(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in sorted(self.records, key=lambda r: r.order):
            seen.setdefault(r.op, None)
        return list(seen)


def natural_key(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t.lower() for t in _NATURAL.split(text)]


def split_name(name: str) -> tuple[str, Literal["input", "output"], str]:
    """``layer1.forward.output.0`` -> (``layer1.forward``, ``output``, ``0``); no role -> (name, output, 0)."""
    m = _TENSOR_NAME.match(name)
    if not m:
        return name, "output", "0"
    return m.group("op"), "input" if m.group("role") == "input" else "output", m.group("index")


def file_within(root: Path, rel: str, real_root: Path | None = None) -> Path:
    """The file ``rel`` names inside the dump folder ``root``; DumpReadError when it points outside it."""
    try:  # NUL bytes, link loops and escapes are refused (advisor.read.safe)
        return resolve_within(root, rel, "dump folder", real_root)
    except UnsafeInput as exc:
        raise DumpReadError(str(exc)) from None


def read_dump_json(path: Path) -> Any:
    """A dump's JSON file (dump.json, manifest.json), size- and depth-capped; DumpReadError when it cannot be read."""
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise DumpReadError(f"{path.name} is {size} bytes, above the {MAX_JSON_BYTES}-byte limit")
    try:
        return loads_json(path.read_bytes().decode("utf-8"), max_depth=MAX_DUMP_JSON_DEPTH)
    except UnsafeInput as exc:
        raise DumpReadError(f"{path.name}: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DumpReadError(f"{path.name} is not valid JSON: {str(exc).splitlines()[0]}") from None


def metadata_text(value: Any) -> str | None:
    """A short string field of a dump's metadata (anything else: None)."""
    return value[:60] if isinstance(value, str) and value.strip() else None


def dtype_name(text: str | None) -> str | None:
    """A dtype as a dump spells it (``torch.float16``, ``mindspore.Float32``) -> numpy-style (``float16``)."""
    if not text:
        return None
    return str(text).replace("torch.", "").replace("mindspore.", "").lower()


#: ``{op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}.{input|output}.{slot}.{format}.{dtype}.npy``
#: (MindSpore's synchronous dump with ``file_format: npy``, in ``rank_{id}/{net_name}/{graph_id}/{iteration}/``)
MS_DUMP_FILE = re.compile(
    r"^(?P<type>[A-Za-z0-9_]+)\.(?P<name>.+?)\.(?P<task>\d+)\.(?P<stream>\d+)\.(?P<ts>\d+)\."
    r"(?P<role>input|output)\.(?P<slot>\d+)\.(?P<fmt>[A-Za-z0-9_]+)\.(?P<dtype>[A-Za-z0-9_]+)\.npy$"
)


#: tensors one dump may hold: a comparison keeps about 4 KB per tensor pair (10^5 pairs: 0.75 GB, 50 s on
#: 2 cores, benchmarks/compare_many_bench.py), so a bigger dump is refused with the way to split it
MAX_DUMP_TENSORS = 1_000_000
#: operator calls of a msprobe dump.json read at most (in execution order; the rest is not decoded, and a note says
#: so): 700,000 calls took 4 minutes and 3.5 GB to compare, 100,000 take about 30 s and 0.5 GB
MAX_DUMP_CALLS = 100_000


def check_count(n: int, what: str = "tensors") -> None:
    """DumpReadError when a dump holds more than ``MAX_DUMP_TENSORS`` tensors (or ``what``), naming the way out."""
    if n > MAX_DUMP_TENSORS:
        raise DumpReadError(
            f"{n:,} {what}, above advisor's limit of {MAX_DUMP_TENSORS:,} per dump: compare one step or rank "
            "at a time (its sub-folder), or dump fewer operators"
        )


class BFloat16Bits(np.ndarray):
    """A bfloat16 tensor as its raw 16-bit patterns (int16 data; numpy has no bfloat16).

    Views and slices keep the class; the comparison converts them chunk by chunk
    (``float_chunk``) or bit by bit in the compiled kernel, so a big tensor is never
    copied whole into float32.
    """

    def __new__(cls, bits: np.ndarray) -> "BFloat16Bits":
        return np.asarray(bits).view(np.int16).view(cls)


def float_chunk(x: np.ndarray) -> np.ndarray:
    """``x`` itself, or the float32 values (exact) of a ``BFloat16Bits`` slice."""
    if isinstance(x, BFloat16Bits):
        return (np.asarray(x).view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
    return x
