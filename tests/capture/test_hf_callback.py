"""advisor.capture.hf.AdvisorCallback on a real Trainer run: a tiny BERT built from a config (no download), CPU."""

from __future__ import annotations

import json

import pytest

from tests.optional import importorskip

torch = pytest.importorskip("torch")
transformers = importorskip("transformers", "PreTrainedModel", "TrainerCallback")
importorskip("accelerate")
pytestmark = pytest.mark.slow  # trains a small transformers model

from advisor.capture.hf import AdvisorCallback

try:
    from .conftest import dynamics_stage_ran, records
except ImportError:
    from conftest import dynamics_stage_ran, records


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


def train(out, accumulate=1, **kw):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    config = transformers.BertConfig(vocab_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=16, num_labels=2)
    model = transformers.BertForSequenceClassification(config)
    args = transformers.TrainingArguments(
        output_dir=str(out / "trainer"), per_device_train_batch_size=8, num_train_epochs=2, learning_rate=0.05,
        optim="sgd", lr_scheduler_type="constant", max_grad_norm=0.0, logging_steps=2, save_strategy="no",
        report_to=[], use_cpu=True, gradient_accumulation_steps=accumulate, disable_tqdm=True,
        eval_strategy="epoch", per_device_eval_batch_size=8)
    trainer = transformers.Trainer(model=model, args=args, train_dataset=Tokens(64, 0), eval_dataset=Tokens(16, 1),
                                   callbacks=[AdvisorCallback(out, **kw)])
    trainer.train()
    return model, trainer


def test_records_weights_gradients_updates_and_logs(tmp_path):
    model, trainer = train(tmp_path, every=4)
    recs = records(tmp_path)
    assert trainer.state.global_step == 16
    assert sorted({r["step"] for r in recs}) == [0, 4, 8, 12]
    names = [r["name"] for r in recs if r["kind"] == "weight" and r["step"] == 0]
    assert names == [n for n, _ in model.named_parameters(remove_duplicate=False)]
    # plain SGD: the update is -lr times the gradient read before it (updates of 1e-8, at float32's
    # resolution of these weights, are left out: query/key weights of an untrained attention)
    sgd = [r for r in recs if r["kind"] == "weight" and (r["update_norm"] or 0) > 1e-6]
    assert sgd and all(r["update_grad_cos"] == pytest.approx(-1.0, abs=1e-5) for r in sgd)
    grads = {(r["step"], r["name"]): r["norm"] for r in recs if r["kind"] == "grad"}
    for r in sgd:
        assert r["update_norm"] == pytest.approx(0.05 * grads[(r["step"], r["name"])], rel=2e-3)
    acts = {r["name"] for r in recs if r["kind"] == "activation"}
    assert "bert.embeddings.word_embeddings" in acts and "classifier" in acts
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "loss" in r] == [2, 4, 6, 8, 10, 12, 14, 16]
    assert [r["step"] for r in rows if "eval_loss" in r] == [8, 16]
    assert dynamics_stage_ran(tmp_path)


def test_accumulation_steps_are_optimizer_steps(tmp_path):
    train(tmp_path, accumulate=2, every=3)
    recs = records(tmp_path)
    assert sorted({r["step"] for r in recs}) == [0, 3, 6]
    cls = next(r for r in recs if r["kind"] == "activation" and r["name"] == "classifier" and r["step"] == 0)
    assert (cls["calls"], cls["numel"]) == (2, 2 * 8 * 2)


def test_records_the_optimizer_training_arguments_and_the_first_batch(tmp_path):
    import json

    import numpy as np

    train(tmp_path, every=4)
    settings = json.loads((tmp_path / "advisor_hparams.json").read_text())
    assert (settings["optimizer"], settings["learning_rate"]) == ("SGD", 0.05)
    assert (settings["epochs"], settings["batch_size"], settings["num_classes"]) == (2, 8, 2)
    assert settings["lr_scheduler"] == "constant" and settings["fp16"] is False
    assert settings["pretrained"] is False  # built from a config: random weights, trained from scratch
    sample = np.load(tmp_path / "data" / "train.npz", allow_pickle=False)
    # input_ids (saved under their name: vocabulary indices are not features to measure distances on) and labels
    # and the rows of each batch, in order (the class mix of each batch shows whether the loader shuffles)
    assert sorted(sample) == ["batch_rows", "input_ids", "y"]
    assert sample["input_ids"].shape == (64, 8) and sample["y"].shape == (64,)
    assert sample["batch_rows"].tolist() == [8] * 8
    assert set(np.unique(sample["y"])) <= {0, 1} and sample["input_ids"].max() < 32
