"""Several runs in one folder: pick the latest, and say which others were left out.

Two layouts that real tools write:

- PyTorch Lightning numbers each run of a script ``lightning_logs/version_0``,
  ``version_1``, ... (``CSVLogger``/``TensorBoardLogger``: the next free number), so
  the highest number is the latest run;
- Hugging Face ``Trainer`` saves ``checkpoint-<global step>/`` folders during one run,
  each with a ``trainer_state.json`` holding the log history up to that step: the
  highest step holds the most; a ``trainer_state.json`` beside them (``save_state()``
  at the end of training) holds all of it, and then every checkpoint is an earlier copy.

Hydra (``outputs/DATE/TIME/``) and mmengine (``work_dir/YYYYMMDD_HHMMSS/``) name each run
by the time it started: the last name is the latest.

Reading them together would merge several runs into one curve (or count one run's
history several times). ``pick_latest`` narrows a ``RunFolder`` to the latest run: the
files of the others are left out, each other run listed once as an ignored input.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path, PurePosixPath

from advisor.inventory import InputRecord, RunFolder

_FAMILIES = {
    "version": (re.compile(r"version_(\d+)"), "Lightning runs (version_N: the highest number is the latest)"),
    "checkpoint": (re.compile(r"checkpoint-(\d+)"), "Hugging Face checkpoints of one run (checkpoint-STEP)"),
    "date": (re.compile(r"(\d{4})-(\d{2})-(\d{2})"), "dated run folders (Hydra outputs/DATE/TIME)"),
    "time": (re.compile(r"(\d{2})-(\d{2})-(\d{2})"), "timed run folders (Hydra outputs/DATE/TIME)"),
    "timestamp": (re.compile(r"(\d{8})_(\d{6})"), "timestamped run folders (mmengine work_dir/YYYYMMDD_HHMMSS)"),
}


def _groups(files: list[Path]) -> dict[tuple[PurePosixPath, str], dict[str, tuple[int, ...]]]:
    """(parent folder, family) -> {run folder: its number(s)}, for every numbered run folder."""
    groups: dict[tuple[PurePosixPath, str], dict[str, tuple[int, ...]]] = {}
    for rel in files:
        parts = PurePosixPath(rel.as_posix()).parts
        for depth, part in enumerate(parts[:-1]):
            for family, (pattern, _) in _FAMILIES.items():
                m = pattern.fullmatch(part)
                if m:
                    parent = PurePosixPath(*parts[:depth]) if depth else PurePosixPath(".")
                    key = tuple(int(g) for g in m.groups())
                    groups.setdefault((parent, family), {})[PurePosixPath(*parts[: depth + 1]).as_posix()] = key
    return groups


def pick_latest(folder: RunFolder) -> tuple[RunFolder, str | None]:
    """The folder narrowed to its latest run (and a note for the report), or the folder as it is."""
    posix = {p.as_posix() for p in folder.files}
    left_out: dict[str, str] = {}  # run folder -> why
    notes = []
    for (parent, family), runs in sorted(_groups(folder.files).items()):
        where = "" if str(parent) == "." else f"{parent}/"
        final_state = family == "checkpoint" and f"{where}trainer_state.json" in posix
        if len(runs) < 2 and not final_state:
            continue
        ordered = sorted(runs, key=lambda r: (runs[r], r))
        if final_state:
            latest, others = f"{where}trainer_state.json", ordered
            why = f"an earlier checkpoint of the run; {latest} holds the whole history and is read"
        else:
            latest, others = ordered[-1], ordered[:-1]
            why = (
                f"an earlier checkpoint of the run; the latest, {latest}/, holds its history to a later step and is read"
                if family == "checkpoint"
                else f"an earlier run in the same folder; the latest, {latest}/, is read"
            )
        if left_out and where.startswith(tuple(o + "/" for o in left_out)):
            continue  # inside a run already left out (the times of an earlier Hydra date)
        for other in others:
            left_out[other] = why
        shown = ", ".join(f"{o}/" for o in others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        held = f"{len(runs)} {_FAMILIES[family][1]}"
        if final_state:  # the checkpoints, and the trainer_state.json that save_state() wrote beside them
            held = (
                held if len(runs) > 1 else held.replace("checkpoints", "checkpoint")
            ) + " and a final trainer_state.json"
        notes.append(
            f"{where or 'the folder'} holds {held}: read {latest}{'' if final_state else '/'}; left out {shown}"
            + ("" if family == "checkpoint" else " (pass a run's own folder to read another)")
        )
    if not left_out:
        return folder, None
    prefixes = tuple(o + "/" for o in left_out)
    kept = [p for p in folder.files if not p.as_posix().startswith(prefixes)]
    skipped = list(folder.skipped) + [
        InputRecord(path=o + "/", kind="run", status="ignored", side=folder.side, why=why)
        for o, why in sorted(left_out.items())
    ]
    return replace(folder, files=kept, skipped=skipped), "; ".join(notes)
