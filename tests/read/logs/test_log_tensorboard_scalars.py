"""TensorBoard scalars read from the events as written (advisor/read/logs/tensorboard.py): simple values and
one-number tensors give what tensorboard's own readers give, event after event."""

from __future__ import annotations

import math

import numpy as np
import pytest

from advisor.read.logs import read_file
from advisor.read.logs import tensorboard as tb_reader

pytest.importorskip("tensorboard")
from tensorboard.compat.proto import event_pb2, graph_pb2, summary_pb2  # noqa: E402
from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402


def _write(folder, events):
    writer = EventFileWriter(str(folder))
    for event in events:
        writer.add_event(event)
    writer.close()
    return next(folder.glob("events.out.tfevents.*"))


def _scalar(step, **values):
    return event_pb2.Event(
        step=step,
        wall_time=0.0,
        summary=summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag=k, simple_value=v) for k, v in values.items()]
        ),
    )


def test_a_graph_event_does_not_cost_the_last_scalars(tmp_path):
    """Keras writes the graph first: every scalar event after it is read (the converting loader gave two events
    for it, and the last record of the file was not read)."""
    graph = event_pb2.Event(step=0, wall_time=0.0, graph_def=graph_pb2.GraphDef().SerializeToString())
    path = _write(tmp_path, [graph] + [_scalar(step, loss=1.0 / (1 + step)) for step in range(10)])
    read = read_file(path)
    loss = read.series["train/loss"]
    assert loss.buf.count == 10 and list(loss.buf.step)[-1] == 9.0
    assert read.lines == 12  # (the file's version record, the graph, ten scalars)
    assert list(loss.buf.line)[:2] == [3, 4]  # (each scalar's record)


def test_scalars_as_tensors_read_as_make_ndarray_reads_them():
    for value in (0.1, 1e-30, 3.5, math.inf):
        for dtype in (np.float32, np.float64):
            proto = tensor_util.make_tensor_proto(np.array(value, dtype=dtype))
            expected = float(tensor_util.make_ndarray(proto).reshape(-1)[0])
            assert tb_reader._tensor_number(proto) == expected
            packed = tensor_util.make_tensor_proto(np.array([value], dtype=dtype))  # (as tensor_content)
            assert tb_reader._tensor_number(packed) == float(tensor_util.make_ndarray(packed)[0])
    assert tb_reader._tensor_number(tensor_util.make_tensor_proto(np.array([1.0, 2.0]))) is None
    assert tb_reader._tensor_number(tensor_util.make_tensor_proto(np.int64(7))) == 7.0
    assert tb_reader._tensor_number(tensor_util.make_tensor_proto(b"text")) is None


def test_tags_logged_together_and_apart_read_as_each_event_in_turn(tmp_path):
    events = []
    for step in range(300):
        events.append(_scalar(step, loss=2.0 / (1 + step)))
        if step % 10 == 9:
            events.append(_scalar(step, val_loss=1.5 / (1 + step), val_acc=0.5))
        if step == 150:  # a validation and a test set in one event: the test values are a split of their own
            events.append(_scalar(step, val_loss=0.7, val_acc=0.6, test_loss=0.8, test_acc=0.55))
    read = read_file(_write(tmp_path, events))
    assert read.series["train/loss"].buf.count == 300
    assert read.series["eval/loss"].buf.count == 31
    assert list(read.series["test/loss"].buf.value) == [pytest.approx(0.8)]
    assert [s.raw_key for s in sorted(read.series.values(), key=lambda s: s.order)][:3] == [
        "loss",
        "val_loss",
        "val_acc",
    ]
