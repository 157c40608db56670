"""A capture folder that stops taking writes mid-run (issue 50): a full disk (ENOSPC) or a file made immutable
(EPERM) at the file's own write, as the operating system reports them, is one RuntimeWarning; ``close()`` and
the framework callbacks' end of training raise nothing into the user's program, and the training goes on."""

from __future__ import annotations

import errno
import io
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch import nn

from advisor.capture import attach
from advisor.capture import writer as capture_writer


class _RefusingFile(io.RawIOBase):
    """A file whose every write fails as the operating system would make it fail."""

    def __init__(self, err: int):
        self.err = err

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        raise OSError(self.err, errno.errorcode[self.err])


def _refusing_text_file(err: int) -> io.TextIOWrapper:
    """Buffered like the real file: a failed flush leaves its text in the buffer, and close() flushes again."""
    return io.TextIOWrapper(io.BufferedWriter(_RefusingFile(err)), encoding="utf-8")


def _refuse_writes(tensors_file, err: int) -> None:
    """From now on the file's writes fail with ``err`` (the real file is closed first)."""
    tensors_file._fh.close()
    tensors_file._fh = _refusing_text_file(err)


def _model_and_optimizer():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def _train(model, opt, steps: int, after_first=None) -> list[float]:
    x, y = torch.randn(8, 4, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 1] * 4)
    losses = []
    for i in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if i == 0 and after_first is not None:
            after_first()
    return losses


def _plain_losses(steps: int) -> list[float]:
    return _train(*_model_and_optimizer(), steps)


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EPERM])
def test_a_file_that_stops_taking_writes_is_one_warning_and_close_raises_nothing(tmp_path: Path, err: int):
    model, opt = _model_and_optimizer()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cap = attach(model, opt, tmp_path, every=1, data_sample=False)

        def refuse() -> None:
            _refuse_writes(cap._file, err)  # the disk fills / the file is made immutable

        losses = _train(model, opt, 4, after_first=refuse)
        cap.close()  # flushes the text left in the buffer again: must not raise
        cap.close()  # twice is harmless
    assert losses == _plain_losses(4)
    runtime = [w for w in seen if issubclass(w.category, RuntimeWarning)]
    assert len(runtime) == 1 and errno.errorcode[err] in str(runtime[0].message), [str(w.message) for w in seen]
    assert cap.stopped and cap.step == 4


def test_close_after_a_full_disk_with_pending_activations_raises_nothing(tmp_path: Path):
    model, _ = _model_and_optimizer()
    cap = attach(model, None, tmp_path, every=1, data_sample=False)
    _refuse_writes(cap._file, errno.ENOSPC)
    model(torch.randn(2, 4)).sum().backward()  # activations pending, never flushed by a step
    with pytest.warns(RuntimeWarning, match="ENOSPC"):
        cap.close()
    assert cap.stopped


def test_side_files_that_cannot_be_written_do_not_stop_the_training(tmp_path: Path, monkeypatch):
    def refused(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    model, opt = _model_and_optimizer()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        cap = attach(model, opt, tmp_path, every=1, dump_steps=[1])

        def lock() -> None:  # every later rename and every new file refused, as in an immutable folder
            monkeypatch.setattr("advisor.atomic.os.replace", refused)
            monkeypatch.setattr("advisor.atomic.tempfile.mkstemp", refused)
            monkeypatch.setattr("numpy.save", refused)
            monkeypatch.setattr(Path, "write_text", refused)

        losses = _train(model, opt, 3, after_first=lock)
        cap.close()
    assert losses == _plain_losses(3)


def test_a_metrics_file_that_cannot_be_closed_does_not_reach_the_trainer(tmp_path: Path):
    from tests.optional import importorskip

    importorskip("transformers", "TrainerCallback")
    from advisor.capture.hf import AdvisorCallback

    cb = AdvisorCallback(tmp_path)
    cb._metrics = capture_writer.MetricsFile(tmp_path)
    _refuse_writes(cb._metrics, errno.ENOSPC)

    class State:
        global_step = 1

    with pytest.warns(RuntimeWarning, match="ENOSPC"):
        cb.on_log(None, State(), None, logs={"loss": 1.0})
        cb.on_train_end(None, State(), None)
    assert cb._metrics is None


def test_warnings_made_errors_do_not_turn_the_full_disk_into_an_exception(tmp_path: Path, capsys):
    model, opt = _model_and_optimizer()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # python -W error: the warning itself would raise into the training
        cap = attach(model, opt, tmp_path, every=1, data_sample=False, settings=False)

        def refuse() -> None:
            _refuse_writes(cap._file, errno.ENOSPC)

        losses = _train(model, opt, 3, after_first=refuse)
        cap.close()
    assert losses == _plain_losses(3) and cap.stopped
    assert "stopped recording" in capsys.readouterr().err
