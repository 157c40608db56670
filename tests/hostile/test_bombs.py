"""Files that expand on load (issue #50, round 4, left from round 2): YAML aliases and merge keys that multiply a
mapping, integers beyond the float range in settings files, and an .npz whose label array inflates to gigabytes."""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from advisor.inventory import RunFolder
from advisor.read import run as run_module
from advisor.read.hparam_limits import HparamReadError
from advisor.read.hparams import load_mapping
from advisor.read.run import read_run
from advisor.read.samples import ArraySource
from tests.hostile.conftest import diagnose_in_child, diagnose_json, inputs_by_path


# -- YAML that expands on load -----------------------------------------------------------------------------------
def _laughs(level: str) -> str:
    """Nine levels of ten aliases (90, under the alias cap): 10^9 values once expanded."""
    lines = ["a0: &a0 {k0: 1, k1: 1, k2: 1, k3: 1, k4: 1, k5: 1, k6: 1, k7: 1, k8: 1, k9: 1}"]
    for i in range(1, 9):
        if level == "mapping":
            body = ", ".join(f"k{j}: *a{i - 1}" for j in range(10))
        else:  # merge keys: each mapping copies the pairs of the ten it merges
            body = "<<: [" + ", ".join([f"*a{i - 1}"] * 10) + "]"
        lines.append(f"a{i}: &a{i} {{{body}}}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("level", ["mapping", "merge"])
def test_a_yaml_that_multiplies_mappings_is_refused_at_once(tmp_path: Path, level: str) -> None:
    path = tmp_path / "hparams.yaml"
    path.write_text(_laughs(level))
    lines: dict[str, int] = {}
    start = time.perf_counter()
    if level == "merge" and _merges_deduplicated():
        load_mapping(path, [], lines)  # PyYAML >= 6.0.4 keeps one pair per merged key: no bomb left to refuse
    else:
        with pytest.raises(HparamReadError, match="an anchor bomb"):
            load_mapping(path, [], lines)  # the key lines were walked through every alias: 14 GB before the fix
    assert time.perf_counter() - start < 5


def _merges_deduplicated() -> bool:
    """Whether this PyYAML's flatten_mapping drops the pairs a merge repeats (6.0.4 does; 6.0.3 copies them all)."""
    import yaml

    node = yaml.compose("a: &a {k: 1}\nb: {<<: [*a, *a, *a]}\n", Loader=yaml.SafeLoader)
    merged = node.value[1][1]
    yaml.SafeLoader("").flatten_mapping(merged)
    return len(merged.value) < 3


def test_the_key_lines_of_a_duplicated_key_are_the_last_one_s(tmp_path: Path) -> None:
    path = tmp_path / "hparams.yaml"
    path.write_text("opt:\n  lr: 1\nopt:\n  lr: 2\n  momentum: 0.9\nbase: &b {x: 1}\nuse: *b\n")
    lines: dict[str, int] = {}
    assert load_mapping(path, [], lines)["opt"] == {"lr": 2, "momentum": 0.9}
    assert lines == {"opt": 3, "opt.lr": 4, "opt.momentum": 5, "base": 6, "base.x": 6, "use": 7, "use.x": 6}


# -- integers beyond the float range ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,note",
    [
        ("lr: 0.1\nseed: " + "9" * 400 + "\n", "line 2: an integer of 400 digits, out of range; read as inf"),
        ("lr: 0.1\nseed: -" + "9" * 5000 + "\n", "line 2: an integer of 5000 digits, out of range; read as -inf"),
        ("lr: 0.1\nseed: 0x" + "f" * 3000 + "\n", "line 2: an integer of 12000 bits, out of range; read as inf"),
        ("lr: 0.1\nseed: 0b" + "1" * 1100 + "\n", "line 2: an integer of 1100 bits, out of range; read as inf"),
    ],
    ids=["400-digits", "5000-digits", "hex", "binary"],
)
def test_a_yaml_integer_beyond_the_float_range_is_inf_with_a_note(tmp_path: Path, text: str, note: str) -> None:
    path = tmp_path / "hparams.yaml"
    path.write_text(text)
    notes: list[str] = []
    got = load_mapping(path, notes)
    assert got["lr"] == 0.1 and got["seed"] in (float("inf"), float("-inf")) and notes == [note]


@pytest.mark.parametrize("name", ["hparams.yaml", "config.json"])
def test_a_huge_integer_setting_is_named_in_the_report(run_dir: Path, cli, name: str) -> None:
    (run_dir / "hparams.yaml").unlink()
    big = "9" * 3000
    (run_dir / name).write_text(
        f"lr: 0.05\nbatch_size: {big}\n" if name.endswith("yaml") else f'{{"lr": 0.05, "batch_size": {big}}}'
    )
    entry = inputs_by_path(diagnose_json(cli, run_dir))[name]
    assert entry["status"] == "used" and "an integer of 3000 digits, out of range" in entry["why"]


# -- an .npz whose labels inflate --------------------------------------------------------------------------------------
def _npz_member(zf: zipfile.ZipFile, name: str, shape: tuple[int, ...]) -> None:
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<i8", "fortran_order": False, "shape": shape})
    chunk = bytes(1 << 22)
    with zf.open(name, "w", force_zip64=True) as member:
        member.write(head.getvalue())
        left = int(np.prod(shape)) * 8
        while left > 0:
            member.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)


def _inflating_npz(path: Path, rows: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        _npz_member(zf, "x.npy", (rows, 1))
        _npz_member(zf, "y.npy", (rows,))


@pytest.mark.parametrize("where", ["data", "dump"], ids=["a-sample", "beside-a-dump"])
def test_labels_announcing_more_than_the_limit_are_not_loaded(tmp_path: Path, monkeypatch, where: str) -> None:
    monkeypatch.setattr(run_module, "MAX_LABEL_BYTES", 1000)
    loaded: list[str] = []
    monkeypatch.setattr(ArraySource, "load", lambda self: loaded.append(self.name))
    _inflating_npz(tmp_path / where / "train.npz", 1000)  # 8,000 bytes of labels announced
    run = read_run(RunFolder.open(str(tmp_path)))
    assert run.npz_labels(Path(where) / "train.npz") is None and loaded == []


@pytest.mark.slow  # about 10 s: a 0.5 MB archive is written (inflating 512 MiB) and diagnosed in a child
def test_an_inflating_label_array_stays_within_memory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "train.log").parent.mkdir()
    (run / "train.log").write_text("".join(f"step {s} loss: {2 / s:.3f}\n" for s in range(1, 30)))
    _inflating_npz(run / "data" / "train.npz", (1 << 25) + 4096)  # 256 MiB of labels from a 0.5 MB archive
    (run / "hparams.json").write_text(json.dumps({"lr": 0.01}))
    got = diagnose_in_child(run)
    assert got["rss_kb"] < 350_000  # was 590 MB here (4 GB for 2 GiB of labels): loaded whole for the class count
    assert any(i["path"] == "data/train.npz" and "read limit" in (i["why"] or "") for i in got["inputs"])
