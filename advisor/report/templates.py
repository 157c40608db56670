"""Where the report templates are (text, Markdown and HTML: jinja2, rendered by render.py)."""

from __future__ import annotations

from pathlib import Path


def templates_dir() -> Path:
    """The report templates: inside the installed package, or templates/ of a checkout."""
    here = Path(__file__).resolve().parent.parent  # advisor/
    for candidate in (here / "templates", here.parent / "templates"):
        if candidate.is_dir():
            return candidate
    return here / "templates"
