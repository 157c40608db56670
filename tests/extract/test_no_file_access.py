"""Structural guard: extractors take what advisor.read.run.read_run read; they never find or open files."""

from __future__ import annotations

import re
from pathlib import Path

import advisor.extract

EXTRACT = Path(advisor.extract.__file__).resolve().parent

#: calls that open, list or walk files (``.glob(`` also catches ``RunFolder.glob`` and ``Path.rglob``)
FORBIDDEN = re.compile(
    r"(?<![\w.])open\(|\.open\(|\.glob\(|np\.load\(|numpy\.load\(|read_text\(|read_bytes\(|os\.walk\(|"
    r"iterdir\(|os\.listdir\(|os\.scandir\(|(?<!np)(?<!numpy)\.abs\(|find_samples\(|find_dump_roots\(|read_dump\(|"
    r"load_mapping\(|read_file\(|read_log_settings\(|iter_tensor_records\("
)


def test_no_extractor_opens_or_finds_files():
    found = []
    for path in sorted(EXTRACT.glob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if FORBIDDEN.search(code):
                found.append(f"{path.name}:{n}: {line.strip()}")
    assert not found, "extractors must take RunRead (advisor/read/run.py), not open files:\n" + "\n".join(found)


def test_the_guard_sees_a_file_being_opened():
    for line in (
        'with open(p, "rb") as fh:',
        "x = np.load(p)",
        "folder.glob(['*.npz'])",
        "p.read_text()",
        "for d in os.walk(root):",
        "path.iterdir()",
        "load_mapping(folder.abs(rel))",
    ):
        assert FORBIDDEN.search(line), line
    for line in ("np.abs(x)", "read.samples()", "reopen(x)", "self.abs_error"):
        assert not FORBIDDEN.search(line), line
