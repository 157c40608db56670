"""The capture hook and callbacks never break training (issue 29, class 1): an unwritable folder, a full disk,
outputs that are None, nested, mappings or sparse, module names that are not file-name safe. The first error is
one warning; the user's forward, backward and optimizer.step() go on and give what they give without advisor."""

from __future__ import annotations

import errno
import json
import os
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch import nn

from advisor.capture import attach, capture
from advisor.capture import writer as capture_writer


class Odd(nn.Module):
    """Leaf modules whose outputs are not one dense tensor."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.add_module("a/b:c", nn.Linear(4, 4))  # torch refuses only '.', so names can hold '/' and ':'

    def forward(self, x):
        return self.get_submodule("a/b:c")(self.fc(x))


class NoneOut(nn.Module):
    def forward(self, x):
        return None


class DictOut(nn.Module):
    def forward(self, x):
        return {"y": x * 2, "n": 3}


class SparseOut(nn.Module):
    def forward(self, x):
        return (x.detach().to_sparse(), x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.odd = Odd()
        self.none, self.dict, self.sparse = NoneOut(), DictOut(), SparseOut()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        h = self.odd(x)
        self.none(h)
        h = self.dict(h)["y"]
        _, h = self.sparse(h)
        return self.head(h)


def _train(cap_dir: Path | None, steps: int = 6, **kw):
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    cap = attach(model, opt, cap_dir, every=1, **kw) if cap_dir is not None else None
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if cap is not None:
        cap.close()
    return losses, cap


def test_odd_outputs_and_names_are_recorded_or_skipped(tmp_path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing here is an error: no warning at all
        losses, cap = _train(tmp_path, dump_steps=[0])
    assert losses == _train(None)[0] and not cap.stopped
    names = {json.loads(line)["name"] for line in (tmp_path / "tensors.jsonl").read_text().splitlines()}
    assert {"odd.a/b:c", "dict.y", "sparse.1"} <= names and "none" not in names and "sparse.0" not in names
    files = os.listdir(tmp_path / "dump" / "step_000000")
    assert all("/" not in f and ":" not in f for f in files)
    manifest = json.loads((tmp_path / "dump" / "step_000000" / "manifest.json").read_text())
    assert "odd.a/b:c.forward.output.0" in {e["name"] for e in manifest}  # the name as it is, in the manifest


def test_an_unwritable_folder_is_one_warning_and_training_goes_on(tmp_path: Path):
    blocked = tmp_path / "run"
    blocked.write_text("a file where the capture folder would go")
    with pytest.warns(RuntimeWarning, match="stopped recording") as seen:
        losses, cap = _train(blocked)
    assert len([w for w in seen if issubclass(w.category, RuntimeWarning)]) == 1
    assert losses == _train(None)[0] and cap.stopped and cap.step == 0  # no hook was attached


def test_a_full_disk_mid_training_is_one_warning_and_training_goes_on(tmp_path: Path, monkeypatch):
    calls = {"n": 0}
    real = capture_writer.TensorsFile.write

    def full(self, records):
        calls["n"] += 1
        if calls["n"] >= 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, records)

    monkeypatch.setattr(capture_writer.TensorsFile, "write", full)
    with pytest.warns(RuntimeWarning, match="No space left") as seen:
        losses, cap = _train(tmp_path)
    assert len([w for w in seen if "stopped recording" in str(w.message)]) == 1
    assert losses == _train(None)[0] and cap.stopped and cap.step == 6  # steps still counted
    assert calls["n"] == 2  # nothing more was attempted after the failure


def test_an_error_in_the_statistics_stops_recording_not_training(tmp_path: Path, monkeypatch):
    from advisor.capture.hook import Capture

    def broken(self, *a, **k):
        raise RuntimeError("a kernel advisor did not expect")

    monkeypatch.setattr(Capture, "_stats", broken)
    with pytest.warns(RuntimeWarning, match="kernel advisor did not expect"):
        with capture(Net(), None, tmp_path, every=1) as cap:
            model = cap.model
            for _ in range(3):
                model(torch.randn(2, 4)).sum().backward()
                cap.step_done()
    assert cap.stopped and cap.step == 3


def test_the_keras_callback_survives_an_unwritable_folder(tmp_path: Path):
    if os.environ.setdefault("KERAS_BACKEND", "torch") != "torch":
        pytest.skip("Keras on the torch backend")
    from tests.optional import importorskip

    keras = importorskip("keras")
    import numpy as np

    from advisor.capture.keras import AdvisorCallback

    blocked = tmp_path / "run"
    blocked.write_text("a file where the capture folder would go")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = np.random.default_rng(0).normal(size=(32, 4)).astype("float32"), np.arange(32) % 3
    with pytest.warns(RuntimeWarning, match="stopped recording"):
        history = model.fit(x, y, epochs=2, verbose=0, callbacks=[AdvisorCallback(blocked, every=1)])
    assert len(history.history["loss"]) == 2


def test_the_lightning_callback_survives_an_unwritable_folder(tmp_path: Path):
    from tests.optional import importorskip

    L = importorskip("lightning.pytorch")
    from advisor.capture.lightning import AdvisorCallback

    class Tiny(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def training_step(self, batch, i):
            x, y = batch
            return nn.functional.cross_entropy(self.fc(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    blocked = tmp_path / "run"
    blocked.write_text("a file where the capture folder would go")
    data = torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
    trainer = L.Trainer(max_epochs=2, accelerator="cpu", logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False,
                        callbacks=[AdvisorCallback(blocked, every=1)], default_root_dir=tmp_path)
    with pytest.warns(RuntimeWarning, match="stopped recording"):
        trainer.fit(Tiny(), torch.utils.data.DataLoader(data, batch_size=8))
    assert trainer.global_step == 8
