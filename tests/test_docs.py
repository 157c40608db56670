"""The project's documentation: no dead link, no pointer at files the project does not ship."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *(p for p in (ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md") if p.exists())]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def _links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [m.group(1) for m in LINK.finditer(text)]


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_link_points_at_an_existing_file(page):
    dead = []
    for target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...: not checked (no network in tests)
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            dead.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            dead.append(f"{target}: no heading '#{anchor}' in {dest.name}")
    assert dead == [], f"{page.relative_to(ROOT)}: " + "; ".join(dead)


def test_the_link_checker_sees_a_dead_link(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("see [a](missing.md) and [b](https://example.org)\n```\n[c](inside-a-fence.md)\n```\n")
    assert _links(page) == ["missing.md", "https://example.org"]


def test_nothing_shipped_points_at_the_developers_spec_folder():
    # the design notes (spec/) are not part of the project: users get docs/ instead
    shipped = [*PAGES, *sorted((ROOT / "advisor").rglob("*.py")), *sorted((ROOT / "templates").rglob("*"))]
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in shipped if p.is_file()
            for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if re.search(r"(?<![\w/])(\.\./)*(shared/)?spec/\w", line)]
    assert hits == []


def test_the_cause_catalogue_page_lists_every_cause():
    from advisor.causes import CAUSE_BY_ID

    text = (ROOT / "docs" / "causes.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([a-z_]+)` \|", text, re.M))
    assert listed == set(CAUSE_BY_ID)


def test_the_report_page_names_every_report_field():
    from advisor.report.model import Report

    text = (ROOT / "docs" / "report-json.md").read_text(encoding="utf-8")
    missing = [name for name in Report.model_fields if f"`{name}`" not in text]
    assert missing == []
