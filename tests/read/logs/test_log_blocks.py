"""Blocks of whole lines (advisor/read/logs/blocks.py): the same lines as ``readline`` with a length cap gives, the
rest of a line past the cap skipped."""

from __future__ import annotations

import io

import pytest

from advisor.read.logs import blocks

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _by_readline(text: str, cap: int) -> list[tuple[str, bool]]:
    """(line, cut at the cap) as text.py read lines before blocks: ``readline(cap)``, skipping the rest of a cut line."""
    fh = io.StringIO(text, newline=None)
    out = []
    cut = False
    while True:
        line = fh.readline(cap)
        if not line:
            return out
        if cut:
            cut = not line.endswith("\n") and len(line) == cap
            continue
        cut = len(line) == cap and not line.endswith("\n")
        out.append((line, cut))


class _LinesOnly:
    """A file object that only reads lines (as advisor.follow's growing file)."""

    def __init__(self, text: str):
        self.readline = io.StringIO(text, newline=None).readline


def _by_blocks(text: str, cap: int, lines_only: bool = False) -> list[tuple[str, bool]]:
    out = []
    fh = _LinesOnly(text) if lines_only else io.StringIO(text, newline=None)
    for block, overlong in blocks.blocks(fh, cap):  # type: ignore[arg-type]
        if overlong:
            assert "\n" not in block and len(block) == cap
            out.append((block, True))
            continue
        pos = 0
        while pos < len(block):
            end = block.find("\n", pos) + 1 or len(block)
            assert end == len(block) or block[end - 1] == "\n"
            out.append((block[pos:end], False))
            pos = end
    return out


def test_lines_over_the_cap_are_cut_and_the_rest_skipped(monkeypatch):
    monkeypatch.setattr(blocks, "BLOCK_CHARS", 5)
    text = "short\n" + "x" * 50 + "\nnext\n" + "y" * 20 + "\r\nlast"
    assert _by_blocks(text, 16) == _by_readline(text, 16)
    assert _by_blocks(text, 16)[1] == ("x" * 16, True)
    assert [line for line, _ in _by_blocks(text, 16)][2:] == ["next\n", "y" * 16, "last"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "bb", "\n", "\r", "\r\n", "x" * 9, "é"]), max_size=80),
    st.integers(8, 24),
    st.integers(1, 7),
)
def test_blocks_give_the_lines_readline_gives(parts, cap, block_chars):
    text = "".join(parts)
    old = blocks.BLOCK_CHARS
    blocks.BLOCK_CHARS = block_chars
    try:
        assert _by_blocks(text, cap) == _by_readline(text, cap)
        assert _by_blocks(text, cap, lines_only=True) == _by_readline(text, cap)
    finally:
        blocks.BLOCK_CHARS = old
