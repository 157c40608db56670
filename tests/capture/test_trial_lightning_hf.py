"""The eleven-run trial of issue 31, Lightning and Hugging Face part: small real runs with advisor's callback.

Lightning (an MLP on Gaussian blobs): healthy; a rate 100x the healthy one; shuffled labels; a body frozen with
``requires_grad_(False)`` (a note alone, the cause once the user states the accuracy they expected).
Hugging Face Trainer (a two-layer BERT built from a config): healthy; a rate 100x the healthy one, where the
saturation and vanishing gradients the rate produces are listed after it, as its consequences, and the
transformer is not told to change its activation."""

from __future__ import annotations

import contextlib
import io
import logging
from pathlib import Path

import pytest

from tests.optional import importorskip

torch = pytest.importorskip("torch")
from torch import nn

import advisor


def _blobs(n: int = 1200, d: int = 16, classes: int = 4, shuffle_labels: bool = False):
    g = torch.Generator().manual_seed(0)
    centers = torch.randn(classes, d, generator=g) * 2
    y = torch.randint(0, classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, d, generator=g)
    if shuffle_labels:
        y = y[torch.randperm(n, generator=torch.Generator().manual_seed(1))]
    return x, y


def _lightning_run(out: Path, fault: str | None) -> None:
    L = importorskip("lightning.pytorch")
    from lightning.pytorch.loggers import CSVLogger

    from advisor.capture.lightning import AdvisorCallback

    class Net(L.LightningModule):
        def __init__(self, lr: float, freeze: bool):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(16, 4), nn.ReLU())
            self.head = nn.Linear(4, 4)
            self.loss_fn = nn.CrossEntropyLoss()
            self.lr = lr
            if freeze:
                self.body.requires_grad_(False)

        def _step(self, batch, split):
            x, y = batch
            out = self.head(self.body(x))
            loss = self.loss_fn(out, y)
            self.log(f"{split}_loss", loss, on_step=False, on_epoch=True)
            self.log(f"{split}_acc", (out.argmax(1) == y).float().mean(), on_step=False, on_epoch=True)
            return loss

        def training_step(self, batch, i):
            return self._step(batch, "train")

        def validation_step(self, batch, i):
            self._step(batch, "val")

        def configure_optimizers(self):
            return torch.optim.SGD([p for p in self.parameters() if p.requires_grad], lr=self.lr)

    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    x, y = _blobs(shuffle_labels=fault == "shuffled_labels")
    train = torch.utils.data.TensorDataset(x[:960], y[:960])
    val = torch.utils.data.TensorDataset(x[960:], y[960:])
    model = Net(0.05 * (100 if fault == "rate_x100" else 1), freeze=fault == "frozen_body")
    trainer = L.Trainer(max_epochs=15, accelerator="cpu", callbacks=[AdvisorCallback(out, every=10)],
                        logger=CSVLogger(out, name="", version=""), enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, torch.utils.data.DataLoader(train, batch_size=32, shuffle=True),
                torch.utils.data.DataLoader(val, batch_size=64))


@pytest.mark.parametrize(("fault", "cause"), [("rate_x100", "lr_too_high"), ("shuffled_labels", "label_errors")])
def test_lightning_faults_are_named_first(tmp_path: Path, fault: str, cause: str) -> None:
    _lightning_run(tmp_path, fault)
    top = advisor.diagnose(tmp_path).causes[0]
    assert (top.id, top.confidence >= 0.5) == (cause, True), (fault, top.id, top.confidence)


def test_lightning_frozen_body_is_a_note_until_a_target_is_missed(tmp_path: Path) -> None:
    _lightning_run(tmp_path, "frozen_body")
    alone = advisor.diagnose(tmp_path)
    assert not alone.found() and alone.causes[0].id == "weight_freezing_error"
    with (tmp_path / "hparams.yaml").open("a") as f:  # Lightning's own hparams.yaml, and the user's expectation
        f.write("target_accuracy: 0.95\n")
    top = advisor.diagnose(tmp_path).causes[0]
    assert (top.id, top.confidence >= 0.5) == ("weight_freezing_error", True)


def test_lightning_healthy_run_gets_no_cause(tmp_path: Path) -> None:
    _lightning_run(tmp_path, None)
    report = advisor.diagnose(tmp_path)
    assert report.summary.symptom_status == "trains_well" and not report.found()


def _hf_run(out: Path, rate: float) -> None:
    transformers = importorskip("transformers", "PreTrainedModel", "TrainerCallback")
    importorskip("accelerate")
    from advisor.capture.hf import AdvisorCallback

    class Tokens(torch.utils.data.Dataset):
        """Sequences of random token ids; the label is whether token 5 occurs."""

        def __init__(self, n: int, seed: int):
            g = torch.Generator().manual_seed(seed)
            self.ids = torch.randint(0, 32, (n, 8), generator=g)
            self.labels = (self.ids == 5).any(dim=1).long()

        def __len__(self):
            return len(self.ids)

        def __getitem__(self, i):
            return {"input_ids": self.ids[i], "labels": self.labels[i]}

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    config = transformers.BertConfig(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=16, num_labels=2)
    model = transformers.BertForSequenceClassification(config)
    args = transformers.TrainingArguments(
        output_dir=str(out), per_device_train_batch_size=16, num_train_epochs=6, learning_rate=rate,
        logging_steps=10, save_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True,
        eval_strategy="epoch", per_device_eval_batch_size=32)
    trainer = transformers.Trainer(model=model, args=args, train_dataset=Tokens(512, 0),
                                   eval_dataset=Tokens(128, 1), callbacks=[AdvisorCallback(out, every=5)])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        trainer.train()
    (out / "train.log").write_text(printed.getvalue())


@pytest.mark.slow
def test_hf_rate_x100_comes_before_what_it_produces(tmp_path: Path) -> None:
    _hf_run(tmp_path, 0.1)
    report = advisor.diagnose(tmp_path)
    # what it shows: the loss levels off above the entropy of the label shares (74 % of one class): at chance
    (shown,) = report.summary.symptoms
    assert shown.id == "loss_at_chance" and "x the entropy of its labels (0.5748 nats, 74% of one class)" in shown.text
    top = report.causes[0]
    assert (top.id, top.confidence >= 0.5) == ("lr_too_high", True)
    derived = {c.id: c for c in report.causes if c.derived_from == "lr_too_high"}
    assert {"gradient_vanishing", "activation_saturation"} & set(derived)
    for c in derived.values():
        assert c.confidence < 0.5 and not any("ReLU" in r for r in c.remedies)


@pytest.mark.slow
def test_hf_healthy_run_gets_no_cause(tmp_path: Path) -> None:
    _hf_run(tmp_path, 1e-3)
    report = advisor.diagnose(tmp_path)
    assert report.summary.symptom_status == "trains_well" and not report.found()
