"""``tensors.jsonl`` (run-layout.md): one JSON object per (step, tensor), streamed.

The reader checks each line against the layout and yields clean records; it
never loads the whole file and never judges the numbers. What it had to skip
or repair is counted in a ``TensorReadLog`` so that the extractor can report
it in plain words.

A record needs ``step`` (an integer), ``name`` (a string) and ``kind``
(``weight``, ``grad`` or ``activation``); a line without them is skipped.
Every other field is optional: a numeric field holding something that is not
a number is dropped from its record (counted) and the record kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from advisor.read.bounded import numbered_bounded_lines, padding_note
from advisor.read.safe import loads_json

KINDS = ("weight", "grad", "activation")
#: optional numeric fields (None when absent or null)
NUMERIC = (
    "numel",
    "mean",
    "std",
    "min",
    "max",
    "norm",
    "zero_frac",
    "nan",
    "inf",
    "sat_frac",
    "row_std",
    "update_norm",
    "update_grad_cos",
    "update_resid_weight_cos",
)
#: lines longer than this are skipped without being held in memory
MAX_LINE_BYTES = 1 << 20
#: stop after this many records (a file of many GB); the extractor can override it
MAX_RECORDS = 5_000_000


@dataclass
class TensorReadLog:
    """What a read of tensors.jsonl met besides good records."""

    lines: int = 0
    records: int = 0
    not_json: list[int] = field(default_factory=list)  # first few line numbers
    not_json_count: int = 0
    too_long_count: int = 0
    missing: dict[str, int] = field(default_factory=dict)  # required field -> lines without it
    bad_kind_count: int = 0
    non_numeric: dict[str, int] = field(default_factory=dict)  # field -> values dropped
    out_of_order_count: int = 0  # records whose step is below an earlier record's step
    stopped_at_line: int | None = None  # set when MAX_RECORDS was reached
    padding_at_line: int | None = None  # set where a long run of NUL bytes (a sparse file's zeros) ended the read

    def problems(self) -> list[str]:
        """One short sentence per kind of problem, for an InputRecord's ``why``."""
        out: list[str] = []
        if self.not_json_count:
            out.append(f"{self.not_json_count} lines are not JSON objects (first at line {self.not_json[0]})")
        if self.too_long_count:
            out.append(f"{self.too_long_count} lines longer than {MAX_LINE_BYTES} bytes skipped")
        for name, n in sorted(self.missing.items()):
            out.append(f"{n} records without a valid '{name}' skipped")
        if self.bad_kind_count:
            out.append(f"{self.bad_kind_count} records with a kind other than {', '.join(KINDS)} skipped")
        for name, n in sorted(self.non_numeric.items()):
            out.append(f"{n} non-numeric '{name}' values ignored")
        if self.out_of_order_count:
            out.append(
                f"{self.out_of_order_count} records have a step below an earlier record's step "
                "(sorted by step; for a repeated step the last record counts)"
            )
        if self.padding_at_line is not None:
            out.append(padding_note(self.padding_at_line))
        if self.stopped_at_line is not None:
            out.append(
                f"read stopped after {self.records} records at line {self.stopped_at_line}; "
                "later steps were not analysed"
            )
        return out


def _number(value: object) -> float | None | bool:
    """A finite or non-finite float; None for null; False when not a number."""
    if value is None:
        return None
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return float(value)
    return False


def _step(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def iter_tensor_records(path: Path, log: TensorReadLog, max_records: int = MAX_RECORDS) -> Iterator[dict]:
    """Yield clean records: ``step`` int, ``name`` str, ``kind`` str, numeric fields float or None.

    Extra fields of the capture hook kept as they are: ``shape`` (list of
    ints), ``requires_grad``, ``in_optimizer`` (bool), ``module_type`` (str), ``calls`` (int).
    """
    last_step: int | None = None
    with path.open("rb") as fh:

        def too_long(_: int) -> None:
            log.too_long_count += 1

        def padding(lineno: int) -> None:
            log.padding_at_line = lineno

        for lineno, raw in numbered_bounded_lines(fh, MAX_LINE_BYTES, too_long, padding):
            line = raw.strip()
            if not line:
                continue
            log.lines = lineno
            try:
                obj = loads_json(line)  # depth-limited; huge numbers read as +-inf
            except ValueError:
                obj = None
            if not isinstance(obj, dict):
                log.not_json_count += 1
                if len(log.not_json) < 5:
                    log.not_json.append(lineno)
                continue
            rec = _clean(obj, log)
            if rec is None:
                continue
            if last_step is not None and rec["step"] < last_step:
                log.out_of_order_count += 1
            last_step = rec["step"] if last_step is None else max(last_step, rec["step"])
            rec["line"] = lineno
            log.records += 1
            yield rec
            if log.records >= max_records:
                if fh.readline(1):  # more follows
                    log.stopped_at_line = lineno
                break


def _clean(obj: dict, log: TensorReadLog) -> dict | None:
    step = _step(obj.get("step"))
    name = obj.get("name")
    kind = obj.get("kind")
    for field_name, ok in (
        ("step", step is not None),
        ("name", isinstance(name, str) and name != ""),
        ("kind", isinstance(kind, str)),
    ):
        if not ok:
            log.missing[field_name] = log.missing.get(field_name, 0) + 1
            return None
    if kind not in KINDS:
        log.bad_kind_count += 1
        return None
    rec: dict = {"step": step, "name": name, "kind": kind}
    for key in NUMERIC:
        val = obj.get(key)
        t = type(val)
        if t is float or val is None:  # the common cases first
            rec[key] = val
            continue
        if t is int:
            rec[key] = float(val)
            continue
        val = _number(val)
        if val is False:
            log.non_numeric[key] = log.non_numeric.get(key, 0) + 1
            val = None
        rec[key] = val
    shape = obj.get("shape")
    if type(shape) is list and all(type(d) is int and d >= 0 for d in shape):
        rec["shape"] = shape
    for flag in ("requires_grad", "in_optimizer"):
        if isinstance(obj.get(flag), bool):
            rec[flag] = obj[flag]
    if isinstance(obj.get("module_type"), str):
        rec["module_type"] = obj["module_type"]
    return rec
