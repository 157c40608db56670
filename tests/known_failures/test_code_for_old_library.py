"""Warnings a library prints about the run's own calls (api_warning facts) and the environment_mismatch rules
that read them: on a real torch log of a script written for PyTorch 0.4, and on logs in the documented
formats of Keras 2, TensorFlow and MindSpore."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from advisor.diagnosis import diagnose
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder

RUNS = Path(__file__).resolve().parent / "runs"
MAKE = Path(__file__).resolve().parent / "make"
RULES = ("library-warns-a-call-behaves-differently-in-this-version", "library-warns-a-call-behaves-differently-and-the-run-does-not-learn")


def _warnings(folder: Path) -> list:
    facts = extract_facts(RunPair(run=RunFolder.open(str(folder), "run"))).facts
    return [f for f in facts if f.kind == "api_warning"]


def _fired(report) -> set[str]:
    return {e.rule for c in report.causes + report.smells for e in c.evidence}


def test_the_torch_warnings_of_old_code_are_read_with_their_category() -> None:
    found = {w.message.split(" ")[0]: w for w in _warnings(RUNS / "torch_code_for_old_pytorch")}
    assert found["Detected"].category == "behaviour_changed" and found["Detected"].library == "torch"
    assert found["volatile"].category == "behaviour_changed"
    assert found["`nn.init.xavier_uniform`"].category == "deprecated"
    assert found["Detected"].source.path == "train.log" and found["Detected"].source.line == 4
    # the source line Python prints under a warning is not a second warning
    assert len(found) == 3


def test_a_run_that_trains_gets_the_warning_and_no_cause() -> None:
    report = diagnose(RUNS / "torch_code_for_old_pytorch")
    assert not [c for c in report.causes if c.confidence >= 0.5]
    env = [c for c in report.causes + report.smells if c.id == "environment_mismatch"]
    assert env and env[0].confidence < 0.5
    assert any("PyTorch 1.1.0" in e.text for e in env[0].evidence)


KERAS2_STUCK = """\
Using TensorFlow backend.
cnn.py:41: UserWarning: Update your `Conv2D` call to the Keras 2 API: `Conv2D(32, (5, 5), activation="relu", strides=(2, 2))`
  model.add(Convolution2D(32, 5, 5, subsample=(2, 2), activation='relu'))
cnn.py:55: UserWarning: The semantics of the Keras 2 argument `steps_per_epoch` is not the same as the Keras 1 argument `samples_per_epoch`. `steps_per_epoch` is the number of batches to draw from the generator at each epoch.
Epoch 1/6
51/51 [==============================] - 12s - loss: 1.0097 - val_loss: 1.0082
Epoch 2/6
51/51 [==============================] - 12s - loss: 1.0097 - val_loss: 1.0082
Epoch 3/6
51/51 [==============================] - 12s - loss: 1.0097 - val_loss: 1.0082
Epoch 4/6
51/51 [==============================] - 12s - loss: 1.0097 - val_loss: 1.0082
Epoch 5/6
51/51 [==============================] - 12s - loss: 1.0097 - val_loss: 1.0082
Epoch 6/6
51/51 [==============================] - 12s - loss: 1.0097 - val_loss: 1.0082
"""


def test_a_loss_that_never_moves_after_keras2_converted_the_calls_is_a_version_candidate(tmp_path: Path) -> None:
    (tmp_path / "train.log").write_text(KERAS2_STUCK)
    kinds = {w.category for w in _warnings(tmp_path)}
    assert kinds == {"legacy_api"}  # a Keras 1 call converted, a Keras 1 argument read with Keras 2 semantics
    report = diagnose(tmp_path)
    top3 = [c.id for c in report.causes[:3]]
    assert "environment_mismatch" in top3
    assert RULES[1] in _fired(report)


def test_the_same_stuck_log_without_the_warnings_has_no_version_evidence(tmp_path: Path) -> None:
    (tmp_path / "train.log").write_text("\n".join(l for l in KERAS2_STUCK.splitlines() if "Warning" not in l and "model.add" not in l))
    report = diagnose(tmp_path)
    assert not set(RULES) & _fired(report)


@pytest.mark.parametrize(
    ("line", "category", "library"),
    [
        (
            "WARNING:tensorflow:From /src/model.py:20: The name tf.placeholder is deprecated. Please use tf.compat.v1.placeholder instead.",
            "deprecated",
            "tensorflow",
        ),
        (
            "WARNING:tensorflow:From /src/train.py:88: calling reduce_sum_v1 (from tensorflow.python.ops.math_ops) with keep_dims is deprecated and will be removed in a future version.",
            "deprecated",
            "tensorflow",
        ),
        (
            "/env/lib/python3.8/site-packages/torch/nn/functional.py:3063: UserWarning: Default upsampling behavior when mode=bilinear is changed to align_corners=False since 0.4.0. Please specify align_corners=True if the old behavior is desired.",
            "behaviour_changed",
            "torch",
        ),
        (
            "[WARNING] ME(12345:139876,MainProcess):2024-01-01-10:00:00.000.000 [mindspore/nn/layer/basic.py:160] 'keep_prob' is deprecated from version 2.0 and will be removed in a future version, use 'p' instead.",
            "deprecated",
            "mindspore",
        ),
        (
            "/x/augmentations.py:238: VisibleDeprecationWarning: Creating an ndarray from ragged nested sequences is deprecated.",
            "deprecated",
            "numpy",
        ),
    ],
)
def test_warning_formats_of_each_library(tmp_path: Path, line: str, category: str, library: str) -> None:
    (tmp_path / "train.log").write_text(f"{line}\nEpoch 1/2 - loss: 0.9\nEpoch 2/2 - loss: 0.8\n")
    (found,) = _warnings(tmp_path)
    assert (found.category, found.library) == (category, library)


def test_a_warning_repeated_at_every_step_is_one_fact_with_its_count(tmp_path: Path) -> None:
    line = "iter {} || Loss: 0.05 || /x/aug.py:238: VisibleDeprecationWarning: Creating an ndarray from ragged nested sequences is deprecated\n"
    (tmp_path / "train.log").write_text("".join(line.format(i) for i in range(50)))
    (found,) = _warnings(tmp_path)
    assert found.count == 50


def test_a_user_warning_that_is_not_about_versions_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "train.log").write_text(
        "train.py:12: UserWarning: This DataLoader will create 8 worker processes in total.\n"
        "loss.py:530: UserWarning: Using a target size (torch.Size([64])) that is different to the input size (torch.Size([64, 1])).\n"
    )
    assert _warnings(tmp_path) == []


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_the_installed_torch_still_prints_these_warnings(tmp_path: Path) -> None:
    sys.path.insert(0, str(MAKE))
    try:
        import torch_code_for_old_pytorch as make
    finally:
        sys.path.remove(str(MAKE))
    make.main(str(tmp_path))
    categories = sorted(w.category for w in _warnings(tmp_path / "torch_code_for_old_pytorch"))
    assert categories == ["behaviour_changed", "behaviour_changed", "deprecated"]
