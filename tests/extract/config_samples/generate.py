"""Regenerate the samples of this folder that real libraries write (the others are written by hand
from each format's documented layout; see README.md).

    python tests/extract/config_samples/generate.py

- hf_output/: a Hugging Face ``Trainer`` run (tiny BERT built from a config, 12 steps, a checkpoint
  every 4 steps) -> checkpoint-4/8/12 with trainer_state.json and config.json (model weights and the
  pickled training_args.bin are deleted: advisor never reads them), plus the run's TrainingArguments
  as training_args.json (``to_json_string``);
- hf_model/config.json: ``save_pretrained`` of a 3-class sequence-classification model;
- lightning/lightning_logs/version_0, version_1: two Lightning runs of one script (CSVLogger), lr 0.1 then 0.01.
"""

from __future__ import annotations

import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent


def hugging_face() -> None:
    import torch
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        Trainer,
        TrainingArguments,
    )

    out = HERE / "hf_output"
    shutil.rmtree(out, ignore_errors=True)
    cfg = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16,
                     num_labels=3, id2label={0: "negative", 1: "neutral", 2: "positive"},
                     label2id={"negative": 0, "neutral": 1, "positive": 2}, problem_type="single_label_classification")
    torch.manual_seed(0)

    class Data(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return 48

        def __getitem__(self, i: int) -> dict:
            g = torch.Generator().manual_seed(i)
            return {"input_ids": torch.randint(0, 50, (6,), generator=g), "labels": torch.tensor(i % 3)}

    args = TrainingArguments(output_dir=str(out), per_device_train_batch_size=8, num_train_epochs=2, learning_rate=1e-3,
                             logging_steps=2, save_steps=4, save_only_model=True, report_to=[], use_cpu=True,
                             disable_tqdm=True)
    Trainer(model=BertForSequenceClassification(cfg), args=args, train_dataset=Data()).train()
    (out / "training_args.json").write_text(args.to_json_string())
    for junk in list(out.glob("checkpoint-*/model.safetensors")) + list(out.glob("checkpoint-*/training_args.bin")):
        junk.unlink()
    model_dir = HERE / "hf_model"
    shutil.rmtree(model_dir, ignore_errors=True)
    BertForSequenceClassification(cfg).save_pretrained(model_dir)
    (model_dir / "model.safetensors").unlink()


def lightning() -> None:
    import lightning as L
    import torch
    from lightning.pytorch.loggers import CSVLogger
    from torch import nn

    root = HERE / "lightning"
    shutil.rmtree(root, ignore_errors=True)

    class Model(L.LightningModule):
        def __init__(self, lr: float = 0.1, crop_size: int = 32):
            super().__init__()
            self.save_hyperparameters()
            self.layer = nn.Linear(4, 2)

        def training_step(self, batch, _):
            x, y = batch
            loss = nn.functional.cross_entropy(self.layer(x), y)
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    for lr, crop in ((0.1, 32), (0.01, 28)):
        trainer = L.Trainer(max_epochs=2, logger=CSVLogger(str(root)), log_every_n_steps=1, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False)
        trainer.fit(Model(lr=lr, crop_size=crop), torch.utils.data.DataLoader(data, batch_size=16))


if __name__ == "__main__":
    hugging_face()
    lightning()
