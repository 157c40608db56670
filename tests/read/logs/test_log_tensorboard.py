"""TensorBoard scalars (optional extra): read with the tensorboard package when it is installed."""

from __future__ import annotations

import pytest

from advisor.read.logs import tensorboard as tb_reader
from advisor.read.logs import read_file


def test_missing_extra_gives_the_install_hint(tmp_path, monkeypatch):
    p = tmp_path / "events.out.tfevents.1.host"
    p.write_bytes(b"\x00" * 32)
    import sys

    for name in [m for m in sys.modules if m == "tensorboard" or m.startswith("tensorboard.")] + ["tensorboard"]:
        monkeypatch.setitem(sys.modules, name, None)   # as if not installed (also the cached submodules)
    read = read_file(p)
    assert read.problem == tb_reader.MISSING and "accuracy-advisor[tensorboard]" in read.problem


def test_scalars_from_a_real_event_file(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    from tensorboard.util import tensor_util

    writer = EventFileWriter(str(tmp_path))
    for step in range(20):
        values = [summary_pb2.Summary.Value(tag="train/loss", simple_value=2.0 / (1 + step)),
                  summary_pb2.Summary.Value(tag="lr", simple_value=0.01)]
        if step % 5 == 4:      # TF2 writes scalars as tensors
            values.append(summary_pb2.Summary.Value(tag="val/loss",
                                                    tensor=tensor_util.make_tensor_proto(1.5 - 0.01 * step)))
        writer.add_event(event_pb2.Event(step=step, wall_time=0.0, summary=summary_pb2.Summary(value=values)))
    writer.close()
    path = next(tmp_path.glob("events.out.tfevents.*"))
    read = read_file(path)
    assert read.problem is None
    assert read.series["train/loss"].buf.count == 20 and read.series["eval/loss"].buf.count == 4
    assert list(read.series["train/loss"].buf.step)[:3] == [0.0, 1.0, 2.0]
    assert list(read.series["eval/loss"].buf.value)[0] == pytest.approx(1.46)
