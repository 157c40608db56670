"""The table of log families (advisor/read/logs/registry.py): its rules, its compiled rows, and a family added as
one module plus one row."""

from __future__ import annotations

import pytest

from advisor.read.logs import keyvalue_record, registry, text
from advisor.read.logs.registry import AT_END, FAMILIES, Family, compile_table


def test_the_table_keeps_its_rules():
    names = [f.name for f in FAMILIES]
    assert names[-1] == "keyvalue" and len(set(names)) == len(names)
    assert [f.stage for f in FAMILIES] == sorted(f.stage for f in FAMILIES)
    # the precedence of the families that a line of several shapes could reach
    order = {name: i for i, name in enumerate(names)}
    assert order["mixed_precision"] < order["mindspore_overflow"] < order["hf_trainer"] < order["keras"]
    assert order["keras"] < order["caffe"] < order["mxnet"] < order["timm"] < order["megatron"] < order["table"]


def test_the_compiled_rows_are_the_table_in_order():
    """For each first character, the rows are the table's rows that allow it, in order, with a stage row where a
    stage starts; a line starting with any other character passes the rows without first characters."""
    table = registry.TABLE
    for c in [*table.by_first, "", "x", "["]:
        rows = table.by_first.get(c, table.others)
        readers = [row[2] for row in rows if row[2] is not None]
        expected = [f.read for f in FAMILIES if f.first is None or c in frozenset(f.first)]
        assert readers == expected, c
        stages = [row[3] for row in rows if row[2] is None]
        assert stages == [registry.WORDS, registry.SHOWN]


def test_a_string_of_first_characters_does_not_let_empty_lines_through():
    """``"" in "T"`` is True: the first characters are a set once compiled, so a line cleaned down to nothing (a
    colour code alone) reaches no row that names first characters."""
    others = [row[2] for row in registry.TABLE.others]
    assert all(f.read not in others for f in FAMILIES if f.first is not None)


@pytest.mark.parametrize(
    ("families", "why"),
    [
        (FAMILIES[:-1], "must take every line"),
        ((*FAMILIES[:-1], FAMILIES[-2], FAMILIES[-1]), "two rows of one name"),
        ((*FAMILIES[2:4], FAMILIES[0], *FAMILIES[4:]), "stage order"),
    ],
)
def test_a_table_breaking_its_rules_is_refused(families, why):
    with pytest.raises(ValueError, match=why):
        compile_table(families, AT_END)


def test_a_state_that_finishes_must_be_in_at_end():
    with pytest.raises(ValueError, match="at_end"):
        compile_table(FAMILIES, AT_END[:-1])


class _GnormState:
    def __init__(self) -> None:
        self.lines: list[tuple[int, float]] = []

    def finish(self, col) -> None:
        for lineno, value in self.lines:
            col.add_record({"grad_norm": value}, lineno, step=float(lineno))


def _read_gnorm(r, state, line, low, lineno) -> bool:
    """A made-up framework's ``[fw] gnorm 1.5`` lines: held until the end of the file."""
    if not line.startswith("[fw] gnorm "):
        return False
    state.lines.append((lineno, float(line.split()[2])))
    return True


def test_a_family_added_as_one_row(tmp_path, monkeypatch):
    """One row before the key/value reader: its reader gets the lines that pass its trigger, first, with its own
    state for each file, and what it holds is recorded at the end of the file; other lines read as before."""
    log = tmp_path / "train.log"
    log.write_text("step 1 loss 2.0\n[fw] gnorm 1.5\nstep 2 loss 1.5\n[fw] gnorm 0.5\n[fw] other: 3\n")
    before = text.read_text(log, log.name)
    assert "train/grad_norm" not in before.series
    calls = []

    def read(r, state, line, low, lineno):
        calls.append(lineno)
        return _read_gnorm(r, state, line, low, lineno)

    row = Family("gnorm", read, words=("gnorm",), state=_GnormState)
    families = (*FAMILIES[:-1], row, FAMILIES[-1])
    monkeypatch.setattr(registry, "TABLE", compile_table(families, (*AT_END, _GnormState)))
    after = text.read_text(log, log.name)
    assert calls == [2, 4]  # (the trigger kept the reader from the other lines)
    gnorm = after.series["train/grad_norm"].buf
    assert gnorm.value.tolist() == [1.5, 0.5] and gnorm.line.tolist() == [2, 4]
    assert after.series["train/loss"].buf.value.tolist() == before.series["train/loss"].buf.value.tolist()
    again = text.read_text(log, log.name)  # a new state for each file
    assert again.series["train/grad_norm"].buf.value.tolist() == [1.5, 0.5]


def test_the_last_row_takes_every_line():
    assert FAMILIES[-1].read is keyvalue_record.read_line
    assert all(f.read is not keyvalue_record.read_line for f in FAMILIES[:-1])
