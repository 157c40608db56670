"""Bad input: empty, binary, other encodings, truncated, absurd numbers, endless lines. Never a crash."""

from __future__ import annotations

import codecs
import math

from advisor.extract.base import RunPair
from advisor.extract.crashes import extract as crash_extract
from advisor.extract.view.curves import curve_xy
from advisor.extract.loss_curve import extract
from advisor.inventory import RunFolder
from advisor.read.logs import tensorboard
from advisor.read.logs import read_file
from advisor.read.logs.buffer import Buffer
from advisor.read.logs.text import MAX_LINE


def _write(tmp_path, name: str, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_empty_and_blank_files(tmp_path):
    assert read_file(_write(tmp_path, "a.log", b"")).problem == "empty file"
    assert read_file(_write(tmp_path, "b.log", b"\n\n  \n")).problem == "file holds only blank space"


def test_binary_garbage(tmp_path):
    data = bytes(range(256)) * 64
    read = read_file(_write(tmp_path, "x.log", data))
    assert read.problem is not None and read.problem.startswith("binary data")


def test_utf16_log_from_a_windows_redirect(tmp_path):
    text = "step 1 loss 0.5\r\nstep 2 loss 0.4\r\n"
    read = read_file(_write(tmp_path, "w.log", codecs.BOM_UTF16_LE + text.encode("utf-16-le")))
    assert read.problem is None and read.encoding == "utf-16"
    assert read.series["train/loss"].buf.count == 2


def test_latin1_bytes_do_not_stop_the_numbers(tmp_path):
    read = read_file(_write(tmp_path, "l.log", "température 3 °C\nstep 1 loss 0.5 époque 1\n".encode("latin-1")))
    assert read.problem is None and read.encoding == "latin-1"
    assert read.series["train/loss"].buf.count == 1


def test_truncated_last_line_and_absurd_numbers(tmp_path):
    read = read_file(_write(tmp_path, "t.log", b"step 1 loss 0.5\nstep 2 loss 1e400\nstep 3 loss 12345678901234567890\nstep 4 lo"))
    x, y, _, _, _ = curve_xy(read.series["train/loss"])
    assert list(x) == [1, 2, 3] and y[1] == math.inf and y[2] == 12345678901234567890.0


def test_a_line_without_end_is_read_in_bounded_pieces(tmp_path):
    data = b"step 1 loss 0.5\n" + b"x" * (3 * MAX_LINE) + b"\nstep 2 loss 0.4\n"
    read = read_file(_write(tmp_path, "long.log", data))
    assert read.overlong_lines == 1
    assert read.series["train/loss"].buf.count == 2 and read.lines == 3


def test_buffer_keeps_bounded_points_and_exact_count():
    buf = Buffer(cap=1000)
    for i in range(100_000):
        buf.add(float(i), math.nan, math.nan if i == 77_777 else 1.0 / (i + 1), i + 1)
    assert buf.count == 100_000 and len(buf) < 1000
    assert buf.first_nonfinite == (77_777.0, math.nan, 77_778) or buf.first_nonfinite[0] == 77_777.0
    steps = list(buf.step)
    assert steps == sorted(steps) and steps[0] == 0.0


def test_truncated_trainer_state_and_bad_csv_cells(tmp_path):
    st = read_file(_write(tmp_path, "trainer_state.json", b'{"log_history": [{"loss": 1.0, "step": 1}, {"loss"'))
    assert st.problem is not None and st.problem.startswith("not valid JSON")
    csv = read_file(_write(tmp_path, "metrics.csv", b"step,loss,val_loss\n1,0.5,\n2,oops,0.7\n3,0.4,\n"))
    assert csv.series["train/loss"].buf.count == 2 and csv.bad_lines == 1
    assert "oops" in csv.bad_examples[0][1]


def test_tfevents_without_the_extra_is_reported(tmp_path):
    p = _write(tmp_path, "events.out.tfevents.123.host", b"\x00" * 64)
    read = read_file(p)
    if not tensorboard.available():
        assert read.problem == tensorboard.MISSING
    else:
        assert read.problem is not None or not read.series


def test_extractor_lists_every_bad_file_and_goes_on(tmp_path):
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "garbage.out").write_bytes(bytes(range(256)) * 64)
    (tmp_path / "notes.txt").write_text("nothing to see here\n")
    (tmp_path / "train.log").write_text("".join(f"step {i} loss {2.0 / (1 + i * 0.05):.4f}\n" for i in range(50)))
    (tmp_path / "events.out.tfevents.1.host").write_bytes(b"\x00" * 16)
    ex = extract(RunPair(run=RunFolder.scan(tmp_path)))
    status = {i.path: (i.status, i.why) for i in ex.inputs}
    assert status["empty.log"] == ("unreadable", "empty file")
    assert status["garbage.out"][0] == "unreadable" and "binary" in status["garbage.out"][1]
    assert status["notes.txt"][0] == "ignored" and "no loss" in status["notes.txt"][1]
    assert status["train.log"][0] == "used"
    assert status["events.out.tfevents.1.host"][0] in ("unreadable", "ignored")
    curves = [f for f in ex.facts if f.kind == "loss_curve"]
    assert len(curves) == 1 and curves[0].points == 50


def test_crash_message_marks_the_curve_diverged(tmp_path):
    (tmp_path / "train.log").write_text("".join(f"iter: {i}  total_loss: {1.0 - i * 0.001:.4f}\n" for i in range(0, 200, 20))
                                        + "Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                                        + "FloatingPointError: Loss became infinite or NaN at iteration=207!\n")
    pair = RunPair(run=RunFolder.scan(tmp_path))
    curve = next(f for f in extract(pair).facts if f.kind == "loss_curve")
    assert curve.diverged and curve.first_nonfinite_step == 207
    crash = next(f for f in crash_extract(pair).facts if f.kind == "training_crash" and f.is_nonfinite)
    assert crash.exception.startswith("FloatingPointError")
