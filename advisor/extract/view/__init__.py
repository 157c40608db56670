"""``RunView``: what one side's files mean, worked out once per side and shared by every extractor.

``read_run`` (advisor/read/run.py) reads each file once; the view interprets
what was read once: each member is computed on first use and kept (as
deepchecks' ``Context`` or ruff's ``SemanticModel`` do), so two extractors
that need the run's settings or its class count do not work them out twice,
and do not drift apart in how they do it. ``RunPair.view(side)`` gives the
view of a side (advisor/extract/base.py).

Members:
- ``settings``: the canonical hyper-parameters (``hparams.HparamSet``: every
  spelling of ``advisor.knowledge.settings`` mapped, first source wins), with
  what their reading recorded (inputs, checks);
- ``flat_settings``: every settings file and every settings print of a log,
  flattened to dotted keys with their lines;
- ``model``: what the files say of the model (descriptions, compile
  settings, the task a settings file names, the shape of the labels);
- ``curves`` and ``primary_loss(split)``: the merged logs and the main loss of a split;
- ``class_count``: the number of classes the run trains on, and where it was
  read (a class-count key of a settings file, else the labels of a train
  ``.npz``).
"""

from __future__ import annotations

from advisor.extract.code.settings import code_settings

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.knowledge.settings import CLASS_COUNT_KEYS
from advisor.read.hparams import flatten
from advisor.read.run import RunRead

if TYPE_CHECKING:
    from advisor.read.logs.merge import MergedRun
    from advisor.read.logs.records import MetricSeries
    from advisor.extract.extraction import Extraction
    from advisor.extract.view.settings import HparamSet
    from advisor.extract.view.model_inputs import Found

#: a class count outside this range is not one (a vocabulary size, a typo)
CLASS_COUNT_RANGE = (2, 1_000_000)


@dataclass(frozen=True)
class FlatSettings:
    """One source of settings flattened: a settings file, or one settings print of a log."""

    shown: str
    values: dict[str, Any]
    lines: dict[str, int]
    printed: bool  # a settings print in a log (else a settings file)
    name: str = ""  # a settings file's name (config.yaml), "" for a print


class RunView:
    def __init__(self, run: RunRead) -> None:
        self.run = run
        self._primary: dict[str, Any] = {}

    @cached_property
    def _settings(self) -> tuple["HparamSet", "Extraction"]:
        from advisor.extract.extraction import Extraction
        from advisor.extract.view.settings import collect

        records = Extraction()
        return collect(self.run, records), records

    @property
    def settings(self) -> "HparamSet":
        """The canonical hyper-parameters of this side (read only: extractors share it)."""
        return self._settings[0]

    @property
    def settings_records(self) -> "Extraction":
        """What reading the settings recorded (each source as an input, a cap reached as a check): the
        hyper-parameter extractor reports it, once."""
        return self._settings[1]

    @property
    def curves(self) -> "MergedRun":
        """Every log of the side merged into one set of series and events (read once by ``RunRead``)."""
        return self.run.merged_logs

    def primary_loss(self, split: str) -> "MetricSeries | None":
        """The main loss series of a split (``curve_pick.primary_loss``), picked once per split."""
        if split not in self._primary:
            from advisor.extract.view.curves import primary_loss

            self._primary[split] = primary_loss(self.curves, split)
        return self._primary[split]

    @cached_property
    def model(self) -> tuple["Found", "Extraction"]:
        """What the files say of the model (descriptions, compile settings, task settings, labels), and what
        reading them recorded (advisor/extract/view/model_inputs.py)."""
        from advisor.extract.extraction import Extraction
        from advisor.extract.view.model_inputs import read_folder

        records = Extraction()
        return read_folder(self.run, records), records

    @cached_property
    def flat_settings(self) -> list[FlatSettings]:
        out: list[FlatSettings] = []
        for m in self.run.hparams:
            if m.data:
                out.append(FlatSettings(m.shown, flatten(m.data), dict(m.lines), printed=False, name=m.rel.name))
        for printed in self.run.log_settings:
            for found in printed.found:
                flat = flatten(found.values)
                out.append(FlatSettings(printed.shown, flat, {k: found.line for k in flat}, printed=True))
        for shown, stated in code_settings(self.run.scripts):  # what the code states, as a settings file would
            out.append(FlatSettings(shown, flatten(stated.values), dict(stated.lines), printed=False, name=shown))
        return out

    @cached_property
    def class_count(self) -> tuple[int, str] | None:
        """(classes, where it was read), or None."""
        low, high = CLASS_COUNT_RANGE
        for f in self.flat_settings:
            if f.printed:
                continue
            for key, val in f.values.items():
                leaf = key.rsplit(".", 1)[-1].lower()
                if (
                    leaf in CLASS_COUNT_KEYS
                    and isinstance(val, int)
                    and not isinstance(val, bool)
                    and low <= val <= high
                ):
                    return val, f"{f.shown}: {key}"
        return self._class_count_from_labels()

    def _class_count_from_labels(self) -> tuple[int, str] | None:
        """Distinct integer labels in a training data sample (data/*train*.npz), as a lower bound of C."""
        run = self.run
        for rel in run.npz_files:
            if "train" not in rel.name.lower():
                continue
            got = run.npz_labels(rel)
            if got is None:
                continue
            key, y = got
            if y.ndim == 1 and y.dtype.kind in "iu" and 0 < y.size <= 10_000_000:
                n = int(np.unique(y).size)
                if n >= 2:
                    return n, f"{run.shown(rel)}: {n} distinct labels in '{key}'"
        return None


__all__ = ["RunView", "FlatSettings"]
