"""Template lines (advisor/read/logs/repeat.py): a line with the shape of a key/value line read before is read
with one regex match, and the whole read is exactly the one the line-by-line chain gives."""

from __future__ import annotations

import glob
import math
import random
from pathlib import Path

import pytest

from advisor.read.logs import blocks, buffer, decimals, repeat, template_rows, text
from advisor.read.logs.records import LogRead

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

HERE = Path(__file__).parent
SHARED = HERE.parents[3] / "shared"


def _summary(read: LogRead) -> tuple:
    series = []
    for name in sorted(read.series):
        s = read.series[name]
        arrays = [a.tolist() for a in s.buf.arrays()]
        arrays = [[("nan" if isinstance(v, float) and math.isnan(v) else v) for v in a] for a in arrays]
        series.append(
            (name, s.raw_key, s.order, arrays, s.buf.count, s.buf.nonfinite, repr(s.buf.first_nonfinite))
            + (s.buf.stride, s.restarts, s.resumes)
        )
    events = [
        (e.kind, e.line, repr(e.step), e.text, repr(e.scale_before), repr(e.scale_after), e.followed_by_points)
        for e in read.events
    ]
    return (
        series,
        events,
        sorted(read.formats),
        read.event_counts,
        read.lines,
        read.bad_lines,
        read.bad_examples,
        repr(read.last_step),
        read.steps_per_epoch,
    )


def _both(path: Path, monkeypatch) -> tuple[tuple, tuple]:
    fast = _summary(text.read_text(path, path.name))
    with monkeypatch.context() as m:  # the line-by-line reader: no template, no line skipped as seen before
        for name in ("learn", "learn_dict", "learn_inert", "learn_keras"):
            m.setattr(repeat, name, lambda *a, **k: None)
        m.setattr(text, "MAX_DEAD", 0)
        slow = _summary(text.read_text(path, path.name))
    return fast, slow


def test_a_repeated_line_is_read_by_its_template(tmp_path, monkeypatch):
    lines = [
        f"[epoch {i // 50}][iter {i}/5000] loss: {2.0 / (i + 1):.5f} lr: 1.0e-03 grad_norm: {i % 7}.25\n"
        for i in range(200)
    ]
    lines[120] = "[epoch 2][iter 120/5000] loss: nan lr: 1.0e-03 grad_norm: 3.25\n"  # not the template: read in full
    path = tmp_path / "train.log"
    path.write_text("".join(lines), encoding="utf-8")
    calls = []
    real = template_rows.Rows.flush

    def flush(self):
        calls.append(len(self.lines))
        real(self)

    monkeypatch.setattr(template_rows.Rows, "flush", flush)
    read = text.read_text(path, path.name)
    assert sum(calls) >= 190  # most lines went through the template
    loss = read.series["train/loss"]
    assert loss.buf.count == 200
    assert loss.buf.nonfinite == 1 and loss.buf.first_nonfinite[2] == 121
    steps, _, values, line_numbers = loss.buf.arrays()
    assert steps[:3].tolist() == [0.0, 1.0, 2.0] and line_numbers[199] == 200
    assert values[10] == float(f"{2.0 / 11:.5f}")
    monkeypatch.undo()
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


def test_steps_counted_inside_epochs_become_global_in_bulk(tmp_path, monkeypatch):
    """MindSpore LossMonitor counts steps inside each epoch: the collector finds the epoch length when the counter
    falls back, and the template rows (added column by column) get the same global steps as line by line."""
    lines = [f"epoch: {e} step: {i}, loss is {1.0 / (e * 100 + i):.6f}\n" for e in (1, 2, 3) for i in range(1, 81)]
    path = tmp_path / "ms.log"
    path.write_text("noise line\n".join(lines[:5]) + "".join(lines[5:]), encoding="utf-8")
    read = text.read_text(path, path.name)
    steps = read.series["train/loss"].buf.arrays()[0]
    assert steps[:3].tolist() == [1.0, 2.0, 3.0]
    assert steps[80:83].tolist() == [81.0, 82.0, 83.0] and steps[-1] == 240.0
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


def test_lines_without_effect_are_skipped_by_shape_but_keys_stay(tmp_path, monkeypatch):
    """INFO lines pass the trigger words ("inf") and record nothing: lines of their shape are skipped, but a digit
    of a key is not a wildcard ('top7' is not a score, 'top1' is)."""
    lines = [f"INFO:root:saving checkpoint to /ckpt/model_{i}.pth\n" for i in range(30)]
    lines += ["INFO: top7: 0.5\n", "INFO: top7: 0.6\n", "INFO: top1: 0.7\n"]
    path = tmp_path / "train.log"
    path.write_text("".join(lines), encoding="utf-8")
    read = text.read_text(path, path.name)
    assert read.series["train/top1"].buf.count == 1
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


def test_keras_epochs_are_read_by_template(tmp_path, monkeypatch):
    """An ``Epoch k/N`` header and the bar's last line, again and again: after the first epoch read in full, each
    epoch is one template match; the epoch's values are one point at that epoch, the last one waits as the Keras
    reader's pending values, and an evaluation bar after fit is still a test point."""
    lines = []
    for e in range(1, 41):
        lines.append(f"Epoch {e}/40\n")
        lines.append(f"100/100 [==============================] - 2s 20ms/step - loss: {1.0 / e:.4f} - val_loss: 0.5\n")
        if e % 7 == 0:
            lines.append("/usr/lib/python3/numpy/core/fromnumeric.py:3504: RuntimeWarning: Mean of empty slice.\n")
    lines.append("10/10 [==============================] - 0s 2ms/step - loss: 0.4\n")
    path = tmp_path / "keras.log"
    path.write_text("".join(lines), encoding="utf-8")
    learnt = []
    real = repeat.learn_keras

    def learn_keras(*args):
        learnt.append(real(*args))
        return learnt[-1]

    monkeypatch.setattr(repeat, "learn_keras", learn_keras)
    read = text.read_text(path, path.name)
    assert len(learnt) == 1 and learnt[0] is not None and learnt[0].kind == "keras"
    loss = read.series["train/loss"]
    assert loss.buf.count == 40
    _, epochs, values, line_numbers = loss.buf.arrays()
    assert epochs[:3].tolist() == [1.0, 2.0, 3.0] and epochs[-1] == 40.0
    assert values[9] == float(f"{1.0 / 10:.4f}") and line_numbers[0] == 2
    assert read.series["test/loss"].buf.count == 1 and read.steps_per_epoch == 100
    monkeypatch.undo()
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


def test_keras_epochs_between_other_template_lines(tmp_path, monkeypatch):
    """A key/value line after each Keras epoch: both are read by template in one run, each epoch's values recorded
    at the next header, after the key/value line before it (as line by line)."""
    lines = [
        f"Epoch {e}/30\n3/3 - 1s - loss: 0.{e:02d} - accuracy: 0.5\nstep {e} val_loss: 0.{e:02d} top1 0.7\n"
        for e in range(1, 31)
    ]
    lines.append("3/3 - 1s - loss: 0.99 - accuracy: 0.6\n")  # a bar after the key/value line: an evaluation
    path = tmp_path / "train.log"
    path.write_text("".join(lines), encoding="utf-8")
    read = text.read_text(path, path.name)
    assert read.series["train/loss"].buf.count == 30 and read.series["eval/loss"].buf.count == 30
    assert read.series["test/loss"].buf.count == 1
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


def test_template_keeps_keys_and_number_spellings():
    line = "step 100 top1: 0.5 loss 2.5e-01 eta 0:10:00\n"
    low = line.lower()
    tpl = repeat.learn(line, low, {"top1": 0.5, "loss": 0.25}, 100.0, None, None, "keyvalue")
    assert tpl is not None
    assert tpl.regex.fullmatch("step 7 top1: 0.75 loss 3.5e-02 eta 1:02:03\n")
    assert not tpl.regex.fullmatch("step 7 top5: 0.75 loss 3.5e-02 eta 1:02:03\n")  # another key
    assert not tpl.regex.fullmatch("step 7 top1: 0.75 loss 0.035 eta 1:02:03\n")  # another spelling
    assert not tpl.regex.fullmatch("step 7 top1: 0.75 loss nan eta 1:02:03\n")
    again = "step 7 top1: 0.75 loss 3.5e-02 eta 1:02:03\n"
    assert repeat.read_row(tpl, tpl.regex.fullmatch(again).groups(), again) == (
        {"top1": 0.75, "loss": 0.035},
        7.0,
        None,
    )
    # lines whose reading depends on more than the line are never learned
    never = (
        "{'loss': 0.5, 'step': 3}\n",
        "Test step 3 loss 0.5\n",  # a test point once Keras output was seen
        "step 3 learning rate 0.1 loss 0.5\n",  # a phrase made one key
        "RuntimeError: step 3 loss 0.5 went to inf\n",  # told by how far 'loss' and 'inf' are apart
    )
    for other in never:
        assert repeat.learn(other, other.lower(), {"loss": 0.5}, 3.0, None, None, "keyvalue") is None


def _log_files() -> list[Path]:
    files = [Path(p) for p in glob.glob(str(HERE / "samples" / "*.log"))]
    files += [Path(p) for p in glob.glob(str(SHARED / "reallogs" / "cases" / "**" / "*"), recursive=True)]
    files += [Path(p) for p in glob.glob(str(SHARED / "eval-dev" / "**" / "*.log"), recursive=True)]
    return sorted(p for p in files if p.is_file() and p.suffix in (".log", ".txt", ".out", ""))


@pytest.mark.parametrize("path", _log_files(), ids=lambda p: p.name)
def test_real_logs_read_the_same_with_templates(path, monkeypatch):
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


_NUMBER = st.one_of(
    st.integers(0, 10**6).map(str),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: f"{v:.4f}"),
    st.floats(1e-9, 1e9).map(lambda v: f"{v:.3e}"),
    st.sampled_from(["nan", "inf", "-inf", "NaN", "1.#INF", "1e999", "0.5%", "12%", "-0.0", ".5", "5.", "1e5"]),
)
#: line shapes: each takes three numbers as written
_FORMATS = (
    lambda a, b, c: f"step {a} loss: {b} acc {c}",
    lambda a, b, c: f"iter {a} loss: {b} acc {c}",
    lambda a, b, c: f"[epoch {a}][iter {b}/900] loss: {c} lr: 1e-3",
    lambda a, b, c: f"epoch: {a} step: {b}, loss is {c}",
    lambda a, b, c: f"step={a}, val_loss={b}, top1={c}",
    lambda a, b, c: f"global_step {a} | lm loss: {b} | loss scale: {c} |",
    lambda a, b, c: f"Epoch {a}/5",
    lambda a, b, c: f"10/10 [====] - 1s - loss: {a} - val_loss: {b}",
    lambda a, b, c: f"Test loss: {a}",
    lambda a, b, c: f"step loss\n{a} {b}",
    lambda a, b, c: f"{a} {b}",
    lambda a, b, c: f"2024-01-0{len(str(a)) % 9} 12:00:{len(str(b)) % 60:02d} INFO step {a} loss {b}",
    lambda a, b, c: 'Traceback (most recent call last):\n  File "x.py", line 3\nFloatingPointError: loss is nan',
    lambda a, b, c: f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {a}, reducing to {b}",
    lambda a, b, c: "INFO some text without numbers",
    lambda a, b, c: f"INFO:root:saving checkpoint to /ckpt/model_{a}.pth ({b} MB)",
    lambda a, b, c: f"INFO: top{len(a) % 9}: {b}",
    lambda a, b, c: f"INFO: epoch {a} started, eta: {b}",
    lambda a, b, c: f"INFO: step_{a} info {b}",
    lambda a, b, c: f"Infinity{a} info{b}: {c}",
    lambda a, b, c: f"RuntimeError: step {a} loss {b} went to inf {c}",
    lambda a, b, c: f"Warning: step {a} grad {b} scale {c} error {a}{b} inf",
    lambda a, b, c: f"loss_dict = {{'loss_cls': {a}, 'step': {b}}} inf",
    lambda a, b, c: f"{{'loss': {a}, 'grad_norm': {b}, 'epoch': {c}}}",
    lambda a, b, c: f"{{'eval_loss': {a}, 'eval_accuracy': {b}, 'step': {a}, 'epoch': {c}}}",
    lambda a, b, c: f"{{'loss': '{a}', 'learning_rate': {b}, 'epoch': {c}}}",
    lambda a, b, c: f"{{'train_runtime': {a}, 'train_loss': {b}}}",
    lambda a, b, c: f"{{'lr': {a}, 'optimizer': 'adamw_{len(b)}'}}",
    lambda a, b, c: f"Epoch: [{len(a) % 3}]  [{len(b)}/100]  eta: 0:00:0{len(c) % 9}  loss: {a} ({b})  lr: {c}",
    lambda a, b, c: f"Epoch: [{a}]  [{b}/100]  eta: 0:00:01  lr: 0.02  loss: {c} (0.5)  time: 0.5",
    lambda a, b, c: f"Epoch [{a}][{b}/50]\tlr: 1.0e-02, eta: 0:01:00, loss_cls: {c}, loss: {c}",
    lambda a, b, c: f"Epoch(train)  [{a}][{b}/50]  lr: 1e-02  loss: {c}",
    lambda a, b, c: f"Epoch(val)  [{a}][{b}/10]  accuracy/top1: {c}",
    lambda a, b, c: f"Iter(train) [{b}/900]  lr: 1e-02  loss: {c}",
    lambda a, b, c: f"Epoch [{a}/30], Step [{b}/391], Loss: {c}",
    lambda a, b, c: f"Train Epoch: {a} [{b}/60000 (10%)]\tLoss: {c}",
    lambda a, b, c: f"step {a} learning rate {b} loss {c}",
    lambda a, b, c: f"Accuracy: {len(a)}/{len(b) + 10} ({c}%) step {a} loss {b}",
    # Keras epochs: the header and the bar's last line (counter at, short of or past its total; Keras 3's bar)
    lambda a, b, c: f"Epoch {a}/5\n{len(b)}/{len(b)} [====] - 1s 2ms/step - loss: {c} - val_loss: {b}",
    lambda a, b, c: f"Epoch {a}/5\n{len(b)}/{len(c)} [====] - 1s 2ms/step - loss: {c} - accuracy: {b}",
    lambda a, b, c: f"Epoch {a}/5\n{len(b)}/{len(b)} \u2501\u2501\u2501 0s 3ms/step - accuracy: {b} - loss: {c}",
    lambda a, b, c: f"Epoch {a}/5\n{len(b)}/{len(b)} - 1s - loss: {c}\n  {len(b)}/{len(b)} - 0s - loss: {a}",
    lambda a, b, c: f"Epoch {a}/5\n{len(b)}/{len(b)} - 1s - loss: {c} - epoch: {a}\nTest loss: {b}",
    lambda a, b, c: f"Epoch {a}/5\n{len(b)}/{len(b)} - 1s - loss: {c}\nstep {a} loss: {b} acc {c}",
    lambda a, b, c: f"{len(b)}/{len(b)} - 1s - loss: {c}",
    # noise that recurs as it is, a line of another script, digits of other scripts
    lambda a, b, c: "/usr/lib/python3/numpy/core/fromnumeric.py:3504: RuntimeWarning: Mean of empty slice.",
    lambda a, b, c: "  return _methods._mean(a, axis=axis, dtype=dtype, out=out, **kwargs)",
    lambda a, b, c: f"step {a} loss: {b} \u00e9tape",
    lambda a, b, c: f"step \u0663{len(a)} loss: {b}",
)


_COUNTER = st.integers(0, 30).map(str)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_generated_logs_read_the_same_with_templates(tmp_path_factory, monkeypatch, data):
    with monkeypatch.context() as patch:  # (undone after each example)
        # small buffers, so that thinning happens inside the column-by-column path too; small blocks and row batches, so
        # that runs of template lines cross block ends and are recorded in several batches; a small line cap
        patch.setattr(buffer, "MAX_POINTS", data.draw(st.sampled_from([4, 7, 100_000])))
        patch.setattr(blocks, "BLOCK_CHARS", data.draw(st.sampled_from([17, 100, 32768])))
        patch.setattr(template_rows, "MAX_ROWS", data.draw(st.sampled_from([2, 5, 4096])))
        patch.setattr(decimals, "MIN_CELLS", data.draw(st.sampled_from([1, 256])))  # (numbers read a table at a time)
        if blocks.BLOCK_CHARS < 100:
            patch.setattr(text, "MAX_LINE", data.draw(st.sampled_from([40, 65536])))
        lines = []
        k = 0
        for _ in range(data.draw(st.integers(1, 10))):
            fmt = data.draw(st.sampled_from(_FORMATS))
            # numbers as drawn; small counters that go up, fall back and repeat; or a counter going up by 0-2 with
            # its epoch (k // 7) and sometimes starting again (a restart or a resume)
            mode = data.draw(st.sampled_from(["any", "small", "up"]))
            if mode == "up" and data.draw(st.booleans()):
                k = data.draw(st.integers(0, k))
            for _ in range(data.draw(st.integers(1, 40))):  # a shape repeated with other numbers, as logs do
                if mode == "up":
                    k += data.draw(st.integers(0, 2))
                    lines.append(fmt(str(k // 7), str(k), data.draw(_NUMBER)))
                else:
                    number = _COUNTER if mode == "small" else _NUMBER
                    lines.append(fmt(data.draw(number), data.draw(number), data.draw(_NUMBER)))
        path = tmp_path_factory.mktemp("logs") / "train.log"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        fast, slow = _both(path, monkeypatch)
        assert fast == slow


def _number(r) -> str:
    k = r.random()
    if k < 0.4:
        return str(r.randint(0, 10**6))
    if k < 0.8:
        return f"{r.uniform(-1e6, 1e6):.4f}"
    if k < 0.95:
        return f"{r.uniform(1e-9, 1e9):.3e}"
    return r.choice(["nan", "inf", "-inf", "1.#INF", "1e999", "0.5%", "-0.0", ".5", "5."])


@pytest.mark.parametrize("seed", range(6))
def test_shapes_in_short_turns_read_the_same_with_templates(seed, tmp_path, monkeypatch):
    """Thousands of lines, the shapes above taking turns every few lines (where one family's state meets another's
    template), with the real block size: the same read with templates as line by line."""
    r = random.Random(seed)
    lines = []
    k = 0
    while len(lines) < 4000:
        fmt = r.choice(_FORMATS)
        mode = r.choice(["any", "small", "up", "up"])
        for _ in range(r.randint(1, 6)):
            if mode == "up":
                k += r.randint(0, 2)
                lines.append(fmt(str(k // 7), str(k), _number(r)))
            elif mode == "small":
                lines.append(fmt(str(r.randint(0, 30)), str(r.randint(0, 30)), _number(r)))
            else:
                lines.append(fmt(_number(r), _number(r), _number(r)))
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


@pytest.mark.parametrize("turn", [1, 3, 12])
def test_templates_taking_turns_read_the_same(turn, tmp_path, monkeypatch):
    """Train lines and evaluation lines in turns (their rows are held together and recorded in line order), a
    Keras epoch and a key/value line in turns (an epoch is recorded at the next header: after the lines between),
    with the numbers read a table at a time: the same read as line by line."""
    r = random.Random(turn)
    lines = []
    for k in range(3000 // turn):
        for j in range(turn):
            step = k * turn + j
            lines.append(f"epoch {step // 500} step {step} loss {r.uniform(0, 3):.4f} lr {r.choice(['0.1', '1e-3'])}")
        lines.append(f"epoch {k * turn // 500} step {k * turn} val_loss {_number(r)} val_acc {r.uniform(0, 1):.3f}")
        if k % 50 == 49:
            lines.append(f"Epoch {k}/100\n{turn}/{turn} - 1s - loss: {r.uniform(0, 3):.4f} - accuracy: 0.5")
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(decimals, "MIN_CELLS", 1)
    monkeypatch.setattr(buffer, "MAX_POINTS", 700)  # (thinned inside the batches)
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


def test_new_shapes_read_the_same_with_templates(tmp_path, monkeypatch):
    """Rows of bare numbers (held until named), YOLO results.txt rows, settings prints and fairseq's epoch means
    among lines that templates take: the same LogRead as line by line."""
    lines = []
    for i in range(300):
        lines.append(f"step {i} loss {2.0 / (i + 1):.5f}\n")
        if i % 3 == 0:
            lines.append(f"{i} {2.0 / (i + 1):.9f}\n")  # print(step, loss): named by the line before
        if i % 50 == 49:
            lines.append("engine/trainer: amp=False, cfg=None, cache=False, epochs=3, iou=0.7\n")
            lines.append(("%10s" * 2 + "%10.4g" * 6) % (f"{i // 50}/9", "3.1G", 0.1, 0.05, 0.02, 0.17, 20, 640) + "\n")
            lines.append(f"2020-10-01 | INFO | train | epoch {i // 50:03d} | loss 1.5 | num_updates {i} | lr 0.001\n")
    path = tmp_path / "train.log"
    path.write_text("".join(lines), encoding="utf-8")
    fast, slow = _both(path, monkeypatch)
    assert fast == slow
    read = text.read_text(path, path.name)
    assert read.series["train/loss"].buf.count == 400 and read.series["train/loss@epoch"].buf.count == 6
