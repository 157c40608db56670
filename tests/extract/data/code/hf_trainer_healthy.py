"""Fine-tune a tiny BERT built from a config with the transformers Trainer."""
import numpy as np
import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

config = BertConfig(vocab_size=500, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=128, num_labels=3)
model = BertForSequenceClassification(config)


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 3, size=n)
        self.ids = rng.integers(5, 500, size=(n, 16))
        self.ids[:, 0] = 1 + self.labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": torch.tensor(self.ids[i]), "labels": torch.tensor(self.labels[i])}


args = TrainingArguments(
    output_dir="out",
    learning_rate=5e-5,
    num_train_epochs=3,
    per_device_train_batch_size=16,
    warmup_ratio=0.1,
    weight_decay=0.01,
    logging_steps=10,
    eval_strategy="epoch",
    report_to=[],
)
trainer = Trainer(model=model, args=args, train_dataset=Tokens(512, 0), eval_dataset=Tokens(128, 1))
trainer.train()
