"""Data samples (what the pipeline feeds the model) -> arrays readable in chunks.

Layouts (docs/run-layout.md):

- ``*.npz`` with arrays ``x``/``X``/``features``/``inputs`` and ``y``/``labels``/``label``/``targets``;
- ``.npy`` pairs: ``x_train.npy`` + ``y_train.npy`` (also ``train_x``, ``features_train``,
  ``train_labels``...), or ``x.npy`` + ``y.npy`` in a folder;
- a CSV with a ``label``/``target``/``y``/``class`` column (and no ``step``/``epoch``
  column, which would make it a metrics file).

``train`` / ``eval``, ``val``, ``valid``, ``validation``, ``test``, ``dev`` in the
file or folder name tell the split (train when none does).

Nothing is unpickled: the ``.npy`` header is parsed first and arrays holding
Python objects are refused; ``np.load`` is never called with
pickles allowed. ``.npy`` files and uncompressed ``.npz`` members are
memory-mapped; compressed members are streamed, so an array larger than
memory is read chunk by chunk. CSV files are parsed in memory up to
``MAX_CSV_BYTES``.
"""

from __future__ import annotations

import csv
import io
import os
import re
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator, Mapping

import numpy as np

from advisor.read.bounded import bounded_lines
from advisor.inventory import RunFolder

FEATURE_NAMES = ("x", "features", "inputs", "input", "data", "images", "image", "samples")
LABEL_NAMES = ("y", "labels", "label", "targets", "target", "classes", "class")
CSV_LABELS = ("label", "labels", "target", "targets", "y", "class")
CSV_METRIC_COLUMNS = {"step", "epoch", "global_step", "iter", "iteration", "loss", "train_loss", "val_loss"}
SPLIT_WORDS = {
    "train": "train",
    "training": "train",
    "eval": "eval",
    "val": "eval",
    "valid": "eval",
    "validation": "eval",
    "test": "eval",
    "dev": "eval",
    "evaluation": "eval",
}
#: folders that hold operator dumps, not data samples
DUMP_DIRS = {"dump", "dumps", "dump_tensor_data", "dump_data"}
MAX_CSV_BYTES = 256 * 1024 * 1024
#: a CSV header line longer than this is parsed as a CSV record from the file
HEADER_BYTES = 64 * 1024
#: why a file whose start is NUL bytes is not read (a sparse or preallocated file: its zeros are not text)
NUL_START = "only NUL bytes at its start (a sparse or preallocated file?); not read"


class SampleReadError(ValueError):
    """A sample file that cannot be used; the message names the problem."""


@dataclass
class ArraySource:
    """One array of a sample file: its shape and dtype, and chunked row access."""

    file: str
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    _rows: Callable[[int], Iterator[np.ndarray]]
    _mapped: np.ndarray | None = None  # memory map or in-memory array (random access)

    @property
    def n_rows(self) -> int:
        return int(self.shape[0]) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def iter_chunks(self, chunk_rows: int) -> Iterator[tuple[int, np.ndarray]]:
        """(first row index, rows) in order; each chunk holds at most ``chunk_rows`` rows."""
        start = 0
        for block in self._rows(max(1, chunk_rows)):
            yield start, block
            start += block.shape[0]

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The rows at sorted indices ``rows`` (random access where mapped, else one streamed pass)."""
        if self._mapped is not None:
            return np.asarray(self._mapped[rows])
        out = []
        for start, block in self.iter_chunks(max(1, (64 << 20) // max(1, self.nbytes // max(1, self.n_rows)))):
            sel = rows[(rows >= start) & (rows < start + block.shape[0])] - start
            if sel.size:
                out.append(np.array(block[sel]))
        return np.concatenate(out) if out else np.empty((0,) + self.shape[1:], self.dtype)

    def load(self) -> np.ndarray:
        """The whole array in memory (for small arrays: labels)."""
        if self._mapped is not None:
            return np.asarray(self._mapped)
        blocks = [b for _, b in self.iter_chunks(1 << 16)]
        return np.concatenate(blocks) if blocks else np.empty(self.shape, self.dtype)


@dataclass
class SampleSet:
    """A data sample of one split: its features and labels, and every array of the file(s)."""

    split: str
    files: list[str]
    features: ArraySource | None = None
    labels: ArraySource | None = None
    arrays: dict[str, ArraySource] = field(default_factory=dict)  # name -> array, for the baseline comparison
    key: str = ""  # what identifies the set across run and baseline: file path (+ pair stem)
    side: str = "run"
    #: the arrays as the file holds them, when ``cap_sample_set`` cut ``arrays`` to a sample of rows (else empty)
    uncut: dict[str, ArraySource] = field(default_factory=dict)


# -- .npy headers ---------------------------------------------------------------
def _header(fh) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """(shape, fortran_order, dtype, header length) of the .npy stream at its current position."""
    start = fh.tell()
    try:
        version = np.lib.format.read_magic(fh)
    except ValueError as exc:
        raise SampleReadError(f"not a NumPy .npy array ({exc})") from None
    try:
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh, max_header_size=10_000)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh, max_header_size=10_000)
        else:
            raise SampleReadError(f"unsupported .npy format version {version}")
    except (ValueError, SyntaxError, struct.error) as exc:
        raise SampleReadError(f"unreadable .npy header ({exc})") from None
    return tuple(int(s) for s in shape), bool(fortran), np.dtype(dtype), fh.tell() - start


def _check_dtype(dtype: np.dtype, what: str) -> None:
    if dtype.hasobject:
        raise SampleReadError(f"{what} holds Python objects (a pickled object array); refused, never unpickled")
    if dtype.fields is not None:
        raise SampleReadError(f"{what} has a structured dtype {dtype}; save plain numeric arrays")
    if dtype.kind not in "biufUS":
        raise SampleReadError(f"{what} has dtype {dtype}; expected numbers (or text labels)")


def _check_shape(shape: tuple[int, ...], what: str) -> None:
    if len(shape) == 0:
        raise SampleReadError(f"{what} is a scalar, not an array of samples")
    if 0 in shape:
        raise SampleReadError(f"{what} is empty (shape {shape})")


def _memmap_rows(arr: np.ndarray) -> Callable[[int], Iterator[np.ndarray]]:
    def rows(n: int) -> Iterator[np.ndarray]:
        for s in range(0, arr.shape[0], n):
            yield np.asarray(arr[s : s + n])

    return rows


def open_npy(path: Path, shown: str, name: str) -> ArraySource:
    with open(path, "rb") as fh:
        shape, fortran, dtype, hlen = _header(fh)
    what = f"array '{name}'"
    _check_dtype(dtype, what)
    _check_shape(shape, what)
    need = hlen + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    size = path.stat().st_size
    if size < need:
        raise SampleReadError(f"{what} is truncated: the header promises {need} bytes, the file has {size}")
    mm = np.memmap(path, dtype=dtype, mode="r", offset=hlen, shape=shape, order="F" if fortran else "C")
    return ArraySource(shown, name, shape, dtype, _memmap_rows(mm), mm)


def _npz_member(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, shown: str) -> ArraySource:
    name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
    what = f"array '{name}'"
    with zf.open(info) as member:
        head = member.read(10_200)
    shape, fortran, dtype, hlen = _header(io.BytesIO(head))
    _check_dtype(dtype, what)
    _check_shape(shape, what)
    count = int(np.prod(shape, dtype=np.int64))
    if info.file_size < hlen + count * dtype.itemsize:
        raise SampleReadError(f"{what} is truncated inside the .npz")
    if info.compress_type == zipfile.ZIP_STORED:
        with open(path, "rb") as fh:  # local header: 30 bytes + name + extra, then the data
            fh.seek(info.header_offset)
            local = fh.read(30)
            if local[:4] != b"PK\x03\x04":
                raise SampleReadError(f"{what}: damaged .npz (bad local header)")
            n_name, n_extra = struct.unpack("<HH", local[26:30])
        offset = info.header_offset + 30 + n_name + n_extra + hlen
        mm = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order="F" if fortran else "C")
        return ArraySource(shown, name, shape, dtype, _memmap_rows(mm), mm)
    if fortran and len(shape) > 1:  # column-major and compressed: rows are not contiguous in the stream
        if count * dtype.itemsize > MAX_READ_BYTES:
            raise SampleReadError(
                f"{what} is column-major, compressed and {count * dtype.itemsize} bytes: above the "
                f"{MAX_READ_BYTES >> 20} MiB that can be read whole; save it C-ordered or uncompressed"
            )
        with zf.open(info) as member:
            data = np.lib.format.read_array(member, allow_pickle=False)
        return ArraySource(shown, name, shape, dtype, _memmap_rows(data), data)
    row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize

    def rows(n: int) -> Iterator[np.ndarray]:
        with zipfile.ZipFile(path) as z2, z2.open(info.filename) as member:
            member.read(hlen)
            left = shape[0]
            while left > 0:
                take = min(n, left)
                buf = member.read(take * row_bytes)
                if len(buf) < take * row_bytes:
                    raise SampleReadError(f"{what} ends early inside the .npz")
                yield np.frombuffer(buf, dtype=dtype).reshape((take,) + shape[1:])
                left -= take

    return ArraySource(shown, name, shape, dtype, rows, None)


def open_npz(path: Path, shown: str) -> tuple[dict[str, ArraySource], list[str]]:
    """(every usable array of an .npz, why each other member was skipped); raises SampleReadError
    when the archive itself is unusable or holds no usable array."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SampleReadError(f"not a readable .npz archive ({exc})") from None
    arrays: dict[str, ArraySource] = {}
    problems: list[str] = []
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            try:
                src = _npz_member(path, zf, info, shown)
            except (SampleReadError, zipfile.BadZipFile, OSError, EOFError) as exc:
                problems.append(str(exc))
                continue
            arrays[src.name] = src
    if problems and not arrays:
        raise SampleReadError("; ".join(problems))
    if not arrays:
        raise SampleReadError("the .npz archive holds no arrays")
    return arrays, problems


def open_csv(path: Path, shown: str, data: bytes | None = None) -> tuple[ArraySource, ArraySource]:
    """(features, labels) of a CSV with a label column; text labels are kept as text.

    ``data``: the file's bytes when the reader already holds them (it is then not opened again)."""
    _check_csv_size(len(data) if data is not None else path.stat().st_size)
    text = io.StringIO(data.decode("utf-8"), newline="") if data is not None else None
    with text or open(path, newline="", encoding="utf-8", errors="strict") as fh:
        try:
            return _csv_arrays(csv.reader(fh), shown)
        except csv.Error as exc:  # a field beyond csv's limit (131072 characters), a NUL byte in a quoted cell
            raise SampleReadError(f"not a readable CSV: {exc}") from None


def _csv_arrays(reader: Iterator[list[str]], shown: str) -> tuple[ArraySource, ArraySource]:
    """(features, labels) of the CSV records ``reader`` gives: a header, then rows."""
    try:
        header = next(reader)
    except StopIteration:
        raise SampleReadError("CSV is empty") from None
    lower = [h.strip().lower() for h in header]
    label_col = next(i for i, h in enumerate(lower) if h in CSV_LABELS)
    feat_cols = [i for i in range(len(header)) if i != label_col]
    rows: list[list[float]] = []
    labels: list[str] = []
    for lineno, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise SampleReadError(f"line {lineno}: {len(row)} fields, the header has {len(header)} (ragged CSV)")
        vals = []
        for i in feat_cols:
            cell = row[i].strip()
            if cell == "" or cell.lower() in ("nan", "na", "null", "none"):
                vals.append(float("nan"))
                continue
            try:
                vals.append(float(cell))
            except ValueError:
                raise SampleReadError(
                    f"line {lineno}: column '{header[i]}' is not numeric ({cell[:30]!r}); "
                    "encode categorical features before saving the sample"
                ) from None
        rows.append(vals)
        labels.append(row[label_col].strip())
    if not rows:
        raise SampleReadError("CSV has a header but no rows")
    if not feat_cols:
        raise SampleReadError("CSV has only a label column, no features")
    x = np.asarray(rows, dtype=np.float64)
    try:
        y = np.asarray([float(v) if v != "" else np.nan for v in labels], dtype=np.float64)
    except ValueError:
        y = np.asarray(labels, dtype=str)  # text labels: classes by name
    fx = ArraySource(shown, "features", x.shape, x.dtype, _memmap_rows(x), x)
    fy = ArraySource(shown, header[label_col].strip(), y.shape, y.dtype, _memmap_rows(y), y)
    return fx, fy


# -- discovery -------------------------------------------------------------------
def split_of(rel: PurePosixPath | Path) -> str:
    words = re.split(r"[^a-z]+", " ".join(p.lower() for p in Path(rel).with_suffix("").parts))
    for w in reversed(words):  # the file name wins over folder names
        if w in SPLIT_WORDS:
            return SPLIT_WORDS[w]
    return "train"


def _role_of_stem(stem: str) -> tuple[str, str] | None:
    """'x_train' -> ('features', 'train'); 'train_labels' -> ('labels', 'train'); 'y' -> ('labels', '')."""
    words = [w for w in re.split(r"[^a-z0-9]+", stem.lower()) if w]
    role = None
    rest = []
    for w in words:
        if role is None and w in FEATURE_NAMES:
            role = "features"
        elif role is None and w in LABEL_NAMES:
            role = "labels"
        else:
            rest.append(w)
    if role is None or any(w not in SPLIT_WORDS for w in rest):
        return None
    return role, "-".join(rest)


def _pick(arrays: dict[str, ArraySource], names: tuple[str, ...]) -> ArraySource | None:
    by_lower = {k.lower(): v for k, v in arrays.items()}
    for n in names:
        if n in by_lower:
            return by_lower[n]
    return None


def _in_dump_dir(rel: Path) -> bool:
    return any(part.lower() in DUMP_DIRS for part in rel.parts[:-1])


def sample_csv_header(first_line: str) -> bool | None:
    """Whether a CSV whose first line is ``first_line`` holds a data sample (a label column, no metric
    columns); None when the line alone cannot tell (cut short, or quoted: a record may go on past it)."""
    if not first_line.endswith("\n") or '"' in first_line:
        return None
    try:
        return _is_sample_header(next(csv.reader([first_line]), []))
    except csv.Error:  # a field beyond csv's limit: not a header of names
        return False


def _is_sample_header(header: list[str]) -> bool:
    lower = {h.strip().lower() for h in header}
    return bool(lower & set(CSV_LABELS)) and not (lower & CSV_METRIC_COLUMNS)


def _sample_csv_bytes(path: Path, first_line: str | None = None) -> bytes | None:
    """The bytes of a CSV that holds a data sample, read with one open; None when it holds something else
    or cannot be opened. ``first_line``: its first line, already read. Raises SampleReadError over
    ``MAX_CSV_BYTES``."""
    known = sample_csv_header(first_line) if first_line is not None else None
    if known is False:
        return None
    try:
        fh = open(path, "rb")
    except OSError:
        return None
    with fh:
        if known is None:
            first = fh.readline(HEADER_BYTES)
            if first[:1] == b"\x00" and not first.strip(b"\x00"):
                if first_line is not None:  # read as a log or metrics file too: that reader says why not
                    return None
                raise SampleReadError(NUL_START)
            known = sample_csv_header(first.decode("utf-8", errors="replace"))
            if known is None:  # quoted or very long: the header is the file's first CSV record
                fh.seek(0)
                text = io.TextIOWrapper(fh, encoding="utf-8", errors="replace", newline="")
                try:
                    known = _is_sample_header(next(csv.reader(bounded_lines(text)), []))
                except csv.Error:  # a field beyond csv's limit (a line of NULs, a binary file): no sample header
                    known = False
                text.detach()
        if not known:
            return None
        _check_csv_size(os.fstat(fh.fileno()).st_size)
        fh.seek(0)
        return fh.read()


def _check_csv_size(size: int) -> None:
    if size > MAX_CSV_BYTES:
        raise SampleReadError(
            f"CSV is {size} bytes, over the {MAX_CSV_BYTES}-byte limit for CSV samples; save large samples as .npy"
        )


#: an array announcing more bytes than this is read as a sample of its rows (with a note): memory and
#: time follow this limit, not what a file claims (a 3 MB .npz can inflate to 3 GiB, a sparse .npy
#: header can announce 8 GB)
MAX_READ_BYTES = 256 << 20
SAMPLE_BLOCKS = 64


def _sampled(src: ArraySource, keep: int, head: bool) -> ArraySource:
    """``src`` cut to ``keep`` rows: the first ones (``head``: a compressed stream cannot skip), else
    SAMPLE_BLOCKS contiguous blocks spread evenly over the array."""
    n = src.n_rows
    if head:

        def rows_head(m: int) -> Iterator[np.ndarray]:
            left = keep
            for block in src._rows(m):
                if left <= 0:
                    return
                yield block[:left]
                left -= block.shape[0]

        return ArraySource(src.file, src.name, (keep,) + src.shape[1:], src.dtype, rows_head, None)
    per = max(1, keep // SAMPLE_BLOCKS)
    starts = np.unique(np.linspace(0, n - per, max(1, keep // per)).astype(np.int64))
    mapped = src._mapped

    def rows_blocks(m: int) -> Iterator[np.ndarray]:
        for start in starts.tolist():
            for s in range(0, per, m):
                yield np.asarray(mapped[start + s : start + min(per, s + m)])

    return ArraySource(src.file, src.name, (len(starts) * per,) + src.shape[1:], src.dtype, rows_blocks, None)


def cap_sample_set(sset: SampleSet) -> str | None:
    """Cut the arrays of a sample set that announce more than MAX_READ_BYTES to a sample of rows (the
    same rows for every array of the same length); returns the note saying what was cut, or None."""
    arrays = {id(a): a for a in [sset.features, sset.labels, *sset.arrays.values()] if a is not None}
    big = [a for a in arrays.values() if a.nbytes > MAX_READ_BYTES]
    if not big:
        return None
    n = big[0].n_rows
    same = [a for a in arrays.values() if a.n_rows == n]
    keep = max(1, min(MAX_READ_BYTES // max(1, a.nbytes // max(1, n)) for a in same))
    if keep >= n:
        return None
    head = any(a._mapped is None for a in same)
    cut = {id(a): _sampled(a, keep, head) for a in same}
    sset.uncut = dict(sset.arrays)
    sset.arrays = {k: cut.get(id(a), a) for k, a in sset.arrays.items()}
    sset.features = cut.get(id(sset.features), sset.features) if sset.features is not None else None
    sset.labels = cut.get(id(sset.labels), sset.labels) if sset.labels is not None else None
    how = "the first" if head else f"{SAMPLE_BLOCKS} evenly spread blocks of"
    return (
        f"{', '.join(sorted(a.name for a in big))}: {max(a.nbytes for a in big)} bytes announced, above the "
        f"{MAX_READ_BYTES >> 20} MiB read limit; statistics use {how} {cut[id(big[0])].n_rows} of {n} rows"
    )


@dataclass
class Found:
    """What discovery returns: usable sample sets, and (path, why) for files that could not be used."""

    sets: list[SampleSet] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # used, with a remark (some arrays skipped)


def find_samples(folder: RunFolder, csv_lines: Mapping[Path, str] | None = None) -> Found:
    """Every data sample below ``folder`` (read-only; nothing is loaded whole except CSV, each opened once).

    ``csv_lines``: the first line of CSV files already read (metrics files), by relative path."""
    found = Found()
    npy_groups: dict[tuple[str, str], dict[str, tuple[Path, str]]] = {}
    for rel in folder.files:
        if _in_dump_dir(rel) or (folder.root / rel.parent / "manifest.json").exists():
            continue
        suffix = rel.suffix.lower()
        shown = folder.rel(folder.abs(rel))
        if suffix == ".npz":
            try:
                arrays, problems = open_npz(folder.abs(rel), shown)
            except SampleReadError as exc:
                found.unreadable.append((shown, str(exc)))
                continue
            if problems:
                found.notes.append((shown, "some arrays skipped: " + "; ".join(problems)))
            feats, labels = _pick(arrays, FEATURE_NAMES), _pick(arrays, LABEL_NAMES)
            if feats is None and labels is None:
                found.unreadable.append(
                    (
                        shown,
                        f"no features or labels array: holds {sorted(arrays)}; expected "
                        "x/X/features/inputs and y/labels/targets",
                    )
                )
                continue
            found.sets.append(SampleSet(split_of(rel), [shown], feats, labels, arrays, key=shown, side=folder.side))
        elif suffix == ".npy":
            role = _role_of_stem(rel.stem)
            if role is None:
                continue
            split_word = role[1] or split_of(rel.parent / "x")
            npy_groups.setdefault((rel.parent.as_posix(), split_word), {})[role[0]] = (rel, shown)
        elif suffix == ".csv":
            try:
                data = _sample_csv_bytes(folder.abs(rel), (csv_lines or {}).get(rel))
                if data is None:
                    continue
                fx, fy = open_csv(folder.abs(rel), shown, data)
            except (SampleReadError, UnicodeDecodeError, OSError) as exc:
                found.unreadable.append((shown, str(exc)))
                continue
            found.sets.append(
                SampleSet(split_of(rel), [shown], fx, fy, {"features": fx, "labels": fy}, key=shown, side=folder.side)
            )
    for (parent, split_word), members in sorted(npy_groups.items()):
        arrays: dict[str, ArraySource] = {}
        files = []
        for role, (rel, shown) in sorted(members.items()):
            try:
                arrays[role] = open_npy(folder.abs(rel), shown, rel.stem)
                files.append(shown)
            except (SampleReadError, OSError) as exc:
                found.unreadable.append((shown, str(exc)))
        if not arrays:
            continue
        split = SPLIT_WORDS.get(split_word.split("-")[-1], "train") if split_word else split_of(Path(parent) / "x")
        found.sets.append(
            SampleSet(
                split,
                files,
                arrays.get("features"),
                arrays.get("labels"),
                arrays,
                key=f"{parent}/{split_word or 'npy'}",
                side=folder.side,
            )
        )
    for sset in found.sets:  # what a file claims does not decide how much is read
        note = cap_sample_set(sset)
        if note:
            found.notes.append((sset.files[0], note))
    return found
