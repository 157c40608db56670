"""The interface every extractor implements.

An extractor is a plain function ``extract(pair: RunPair) -> Extraction``.
``pair.run`` (and ``pair.baseline``) is a ``RunRead`` (advisor/read/run.py):
what ``read_run`` read of the folder, once, with the modules of
``advisor/read/`` (logs as ``LogRead``, hyper-parameter files as mappings,
data samples, dumps, tensor statistics, model descriptions; each with the
reason when it could not be read). An extractor does not find or open files
(a test greps advisor/extract/ for it): it turns what was read into facts
with pure functions (numbers -> summaries, no causes) and returns everything
in one ``Extraction``. What the files *mean* (the canonical settings, the
class count) is worked out once per side by ``pair.view(side)``
(advisor/extract/view/) and read from there. It never raises on bad user data: an unreadable file
becomes an ``InputRecord(status="unreadable", why=...)`` and the rest goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from advisor.extract.extraction import CheckRun, Extraction
from advisor.inventory import RunFolder
from advisor.read.run import RunRead, read_run

if TYPE_CHECKING:
    from advisor.extract.view import RunView


@dataclass
class RunPair:
    """What extractors see: what was read of the run and of the optional baseline, and options.

    A ``RunFolder`` given for ``run`` or ``baseline`` is read here with ``read_run``."""

    run: RunRead
    baseline: RunRead | None = None
    #: user overrides of documented thresholds, e.g. {"loss_curve.spike_z": 8} (the groups of extract/options.py)
    options: dict[str, Any] = field(default_factory=dict)
    #: a comparison runner the caller made and closes (a sweep's Dask cluster), passed as what it is; None: the
    #: op_compare extractor runs its own (threads, or the cluster of op_compare.scheduler)
    runner: Any = None
    _views: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.run, RunFolder):
            self.run = read_run(self.run)
        if isinstance(self.baseline, RunFolder):
            self.baseline = read_run(self.baseline)

    def sides(self) -> list[RunRead]:
        return [self.run] + ([self.baseline] if self.baseline is not None else [])

    def view(self, side: RunRead) -> "RunView":
        """What ``side``'s files mean, worked out once and shared by the extractors (advisor/extract/view/)."""
        from advisor.extract.view import RunView

        got = self._views.get(id(side))
        if got is None or got.run is not side:
            got = self._views[id(side)] = RunView(side)
        return got


Extractor = Callable[[RunPair], Extraction]

__all__ = ["CheckRun", "Extraction", "Extractor", "RunPair"]
