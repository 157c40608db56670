"""advisor: tells a deep-learning engineer why a training run is not accurate.

``advisor.diagnose(run, baseline=None, rules=...)`` returns a ``Diagnosis``
(the pydantic report of docs/report-json.md). Imports are lazy so that
``advisor --help`` starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from advisor.report.model import Diagnosis


def diagnose(*args: Any, **kwargs: Any) -> "Diagnosis":
    from advisor.diagnosis import diagnose as _diagnose

    return _diagnose(*args, **kwargs)


def __getattr__(name: str) -> Any:
    if name in ("Diagnosis", "Report"):
        from advisor.report import model

        return getattr(model, name)
    raise AttributeError(name)


__all__ = ["__version__", "diagnose", "Diagnosis"]
