"""The bounded building blocks of the readers (issue #50, round 4): TFRecord framing, lines that end at NUL padding,
dump.json decoded member by member, the IR shapes line read without a regex."""

from __future__ import annotations

import io
import json
import re
import struct

import pytest

from advisor.read.bounded import numbered_bounded_lines
from advisor.read.dump_json import DumpJsonError, read_calls
from advisor.read.mindspore_ir import _output_shapes
from advisor.read.tfrecord import MAX_EMPTY_RUN, FramingError, framed_stream


def _frame(data: bytes, length: int | None = None) -> bytes:
    return struct.pack("<Q", len(data) if length is None else length) + bytes(4) + data + bytes(4)


# -- TFRecord framing ------------------------------------------------------------------------------------------------
def test_records_are_framed_with_their_offsets_and_long_ones_skipped_unread() -> None:
    got = list(framed_stream(io.BytesIO(_frame(b"ab") + _frame(b"x" * 100) + _frame(b"c")), max_record=10))
    assert [(r.index, r.offset, r.length, r.data) for r in got] == [
        (1, 12, 2, b"ab"),
        (2, 30, 100, None),
        (3, 146, 1, b"c"),
    ]


@pytest.mark.parametrize(
    "tail,why",
    [
        (_frame(b"", (1 << 64) - 1), "record 2 announces 18,446,744,073,709,551,615 bytes, but 4 are left"),
        (_frame(b"abc")[:10], "the file ends inside record 2's header"),
        (_frame(b"") * MAX_EMPTY_RUN, f"{MAX_EMPTY_RUN} empty records in a row from record 2"),
    ],
    ids=["beyond-the-file", "cut-header", "zeros"],
)
def test_where_the_framing_cannot_go_on_is_an_error_after_the_records_read(tail: bytes, why: str) -> None:
    records = []
    with pytest.raises(FramingError, match=re.escape(why)):
        for rec in framed_stream(io.BytesIO(_frame(b"ok") + tail), max_record=10):
            records.append(rec.data)
    assert records[0] == b"ok"


def test_the_bytes_read_from_one_file_are_bounded() -> None:
    stream = io.BytesIO(_frame(b"a" * 50) * 3)
    with pytest.raises(FramingError, match="read 100 bytes of records"):
        list(framed_stream(stream, max_record=1000, max_bytes=100))


# -- lines -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("binary", [True, False])
def test_a_long_piece_of_nul_bytes_ends_the_lines(binary: bool) -> None:
    text = "a\nb\n" + "\x00" * 100 + "\nc\n"
    fh = io.BytesIO(text.encode()) if binary else io.StringIO(text)
    padding: list[int] = []
    got = [line for _, line in numbered_bounded_lines(fh, 10, None, padding.append)]  # type: ignore[arg-type]
    assert [str(line, "ascii") if binary else line for line in got] == ["a\n", "b\n"] and padding == [3]


def test_a_long_line_of_text_is_still_skipped_and_the_next_ones_read() -> None:
    long_lines: list[int] = []
    got = list(numbered_bounded_lines(io.StringIO("a\n" + "x" * 100 + "\x00" * 5 + "\nc\n"), 10, long_lines.append))
    assert got == [(1, "a\n"), (3, "c\n")] and long_lines == [2]


# -- dump.json member by member ----------------------------------------------------------------------------------------
TEXTS = [
    '{"task": "tensor", "data": {"a.0.forward": {"output": [1, 2.5]}, "b": null}, "framework": "pytorch"}',
    '{"data": {}, "level": "L1"}',
    ' { "data" : { "a" : [ { } ] , "a" : 2 } , "data" : { "z" : 1 } } ',  # duplicated keys: the last wins
    '{"x": 1}',
    '{"data": [1, 2]}',
    "[1, 2]",
    '{"data": {"a": NaN, "b": 1e999, "c": "\\u00e9\\"}"}}',
]


@pytest.mark.parametrize("text", TEXTS)
def test_dump_json_is_read_as_json_loads_reads_it(text: str) -> None:
    whole = json.loads(text)
    got = read_calls(text, 10, 200)
    data = whole.get("data") if isinstance(whole, dict) else None
    assert got.calls == (data if isinstance(data, dict) else None)
    assert got.meta == ({k: v for k, v in whole.items() if k != "data"} if isinstance(whole, dict) else {})
    assert not got.more


def test_only_the_first_calls_are_decoded_and_the_rest_is_skipped() -> None:
    data = {f"op{i}": {"output": [{"Max": i}]} for i in range(50)}
    got = read_calls(json.dumps({"data": data, "task": "statistics"}), 5, 200)
    assert list(got.calls or {}) == [f"op{i}" for i in range(5)] and got.more and got.meta == {"task": "statistics"}


@pytest.mark.parametrize(
    "text,why",
    [
        ('{"data": {"a": 1,}}', "is not valid JSON"),
        ('{"data": {"a": 1}', "is not valid JSON: expected '}'"),
        ('{"data": {}} x', "is not valid JSON: extra data"),
        ('{"data": {"a": ' + "[" * 300 + "]" * 300 + "}}", "nests deeper than the limit of 200 levels"),
        ('{"data": {"a": 1}, "b": ' + "[" * 300 + "]" * 300 + "}", "nests deeper than the limit of 200 levels"),
    ],
    ids=["trailing-comma", "unclosed", "extra", "deep-call", "deep-member"],
)
def test_a_broken_dump_json_is_an_error_saying_why(text: str, why: str) -> None:
    with pytest.raises(DumpJsonError, match=re.escape(why)):
        read_calls(text, 10, 200)


# -- the IR shapes line -------------------------------------------------------------------------------------------------
_OLD_SHAPES = re.compile(r"^\s+: \(.*\) -> \((.*)\)\s*$")


@pytest.mark.parametrize(
    "line",
    [
        "      : (<Tensor[Float32], (2, 8)>, <Tensor[Float32], (16, 8)>) -> (<Tensor[Float32], (2, 16)>)\n",
        "  : () -> ()\n",
        "  : (a) -> (b) -> (c)  \n",
        "  : (a) -> (b\n",
        ": (a) -> (b)\n",
        "  : (a -> (b)\n",
        "  # Fullname with scope: (Default/x)\n",
    ],
)
def test_the_shapes_line_is_read_as_the_old_regex_read_it(line: str) -> None:
    m = _OLD_SHAPES.match(line)
    assert _output_shapes(line) == (m.group(1) if m else None)
