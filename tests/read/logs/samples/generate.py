"""Regenerate the framework-written sample logs of this folder by running the real libraries.

Each sample is the console output (stdout and stderr as a terminal would get
them, progress-bar carriage returns and backspaces included) of a tiny run,
a few seconds on CPU::

    python tests/read/logs/samples/generate.py [keras|keras_nan|keras_terminate|keras_progbar|keras_one_epoch|transformers|lightning|lightning_tqdm|lightning_terminal|mindspore|ultralytics|timm|peft|accelerate]...

Keras 3 runs on the torch backend. MindSpore runs on CPU where it is installed. Ultralytics, timm, peft and
accelerate are not dependencies of advisor: run those with a Python that has them (``pip install ultralytics timm
peft accelerate tensorboard``); their models are built from a config, no weights are downloaded. Some samples keep
a file the tool wrote besides its console (``KEEP``: Ultralytics' ``results.csv``, timm's ``summary.csv``, the
TensorBoard events file of accelerate's tracker).
The values differ from run to run; the tests check the shape of what is read
(counts, steps, epochs, splits), not the numbers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

KERAS = r'''
import os
os.environ["KERAS_BACKEND"] = "torch"
import numpy as np, keras
keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(320, 8)).astype("float32"); y = (x[:, 0] + x[:, 1] > 0).astype("int64")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(2, activation="softmax")])
model.compile(optimizer=keras.optimizers.Adam(LR), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x[:256], y[:256], batch_size=16, epochs=4, validation_split=0.25, verbose=1)
score = model.evaluate(x[256:], y[256:], verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
'''

KERAS_NAN = r'''
import os
os.environ["KERAS_BACKEND"] = "torch"
import numpy as np, keras
keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(320, 8)).astype("float32"); y = (x @ rng.normal(size=(8, 1)) * 100).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.SGD(1.0), loss="mse")   # far too large a step: the loss overflows
model.fit(x[:256], y[:256], batch_size=16, epochs=3, validation_split=0.25, verbose=1)
print("Test loss:", model.evaluate(x[256:], y[256:], verbose=0))
'''

KERAS_ONE_EPOCH = r'''
import os
os.environ["KERAS_BACKEND"] = "torch"
import numpy as np, keras
keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(64, 8)).astype("float32"); y = (x[:, 0] + x[:, 1] > 0).astype("int64")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(2, activation="softmax")])
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
for _ in range(3):   # one fit call per epoch: no "Epoch i/n" header, each bar's final update printed twice
    model.fit(x, y, batch_size=64, epochs=1, verbose=1)
'''

KERAS_TERMINATE = KERAS_NAN.replace("verbose=1)", "verbose=1, callbacks=[keras.callbacks.TerminateOnNaN()])")

KERAS_PROGBAR = r'''
import os
os.environ["KERAS_BACKEND"] = "torch"
import keras
# an epoch whose batch counter runs past the announced total (a generator longer than steps_per_epoch)
for epoch in (1, 2):
    print(f"Epoch {epoch}/2")
    bar = keras.utils.Progbar(target=51, stateful_metrics=["loss"])
    for i in range(1, 53):
        bar.update(i, values=[("loss", 1.0 / (epoch * 52 + i))], finalize=(i == 52))
'''

TRANSFORMERS = r'''
import torch, transformers
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments
torch.manual_seed(0)
cfg = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                 max_position_embeddings=32, num_labels=2)
model = BertForSequenceClassification(cfg)
class DS(torch.utils.data.Dataset):
    def __init__(self, n): self.n = n
    def __len__(self): return self.n
    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i); ids = torch.randint(1, 64, (12,), generator=g)
        return {"input_ids": ids, "attention_mask": torch.ones(12, dtype=torch.long), "labels": int(ids[0] > 32)}
args = TrainingArguments(output_dir=OUT, num_train_epochs=2, per_device_train_batch_size=8, logging_steps=2,
                         eval_strategy="epoch", save_strategy="no", report_to=[], use_cpu=True, seed=0,
                         disable_tqdm=False, learning_rate=1e-3)
Trainer(model=model, args=args, train_dataset=DS(48), eval_dataset=DS(16)).train()
'''

LIGHTNING = r'''
import torch, lightning as L
torch.manual_seed(0)
class M(L.LightningModule):
    def __init__(self):
        super().__init__(); self.net = torch.nn.Linear(8, 1)
    def training_step(self, b, i):
        loss = torch.nn.functional.mse_loss(self.net(b[0]), b[1]); self.log("train_loss", loss, prog_bar=True); return loss
    def validation_step(self, b, i):
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(b[0]), b[1]), prog_bar=True)
    def configure_optimizers(self): return torch.optim.SGD(self.parameters(), lr=0.05)
x = torch.randn(160, 8); y = x[:, :1] * 2
dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)
L.Trainer(max_epochs=3, logger=False, enable_checkpointing=False, log_every_n_steps=1,
          enable_model_summary=False).fit(M(), dl, dl)
'''

LIGHTNING_TQDM = LIGHTNING.replace("enable_model_summary=False)",
                                   "enable_model_summary=False, callbacks=[L.pytorch.callbacks.TQDMProgressBar()])")

MINDSPORE = r'''
import numpy as np, mindspore as ms
from mindspore import nn
from mindspore.train import Model, LossMonitor
ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
ms.set_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(64, 8)).astype(np.float32); y = (x[:, :1] * 2).astype(np.float32)
ds = ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(8)
net = nn.Dense(8, 1)
model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), learning_rate=0.05))
model.train(3, ds, callbacks=[LossMonitor(2)], dataset_sink_mode=False)
'''

ULTRALYTICS = r'''
import os, numpy as np
from PIL import Image
rng = np.random.default_rng(0)
for split in ("train", "val"):                        # 8 images of one box each, a class of one
    os.makedirs(f"ds/images/{split}"); os.makedirs(f"ds/labels/{split}")
    for i in range(8):
        img = np.full((64, 64, 3), 30, np.uint8)
        x0, y0 = rng.integers(5, 30, 2); w, h = rng.integers(10, 30, 2)
        img[y0:y0 + h, x0:x0 + w] = (200, 50, 50)
        Image.fromarray(img).save(f"ds/images/{split}/{i}.jpg")
        open(f"ds/labels/{split}/{i}.txt", "w").write(f"0 {(x0 + w / 2) / 64} {(y0 + h / 2) / 64} {w / 64} {h / 64}\n")
open("data.yaml", "w").write("path: ds\ntrain: images/train\nval: images/val\nnames:\n  0: box\n")
from ultralytics import YOLO
YOLO("yolov8n.yaml").train(data="data.yaml", epochs=3, imgsz=64, batch=4, device="cpu", workers=0, plots=False,
                           amp=False, project="runs", name="exp", exist_ok=True, seed=0)
'''

TIMM = r'''
import torch, timm
from collections import OrderedDict
from timm.optim import create_optimizer_v2
from timm.scheduler import create_scheduler_v2
from timm.utils import AverageMeter, accuracy, update_summary
torch.manual_seed(0)
model = timm.create_model("resnet10t", num_classes=2)          # built from its config, no weights
opt = create_optimizer_v2(model, "sgd", lr=0.05, momentum=0.9)
sched, epochs = create_scheduler_v2(opt, "cosine", num_epochs=3, warmup_epochs=0)
x = torch.randn(32, 3, 32, 32); y = (x[:, 0].mean((1, 2)) > 0).long()
loss_fn = torch.nn.CrossEntropyLoss()
for epoch in range(epochs):                                    # train.py's loop: train_one_epoch, validate, summary
    model.train(); losses = AverageMeter()
    for i in range(0, 32, 8):
        loss = loss_fn(model(x[i:i + 8]), y[i:i + 8]); opt.zero_grad(); loss.backward(); opt.step()
        losses.update(loss.item(), 8)
    model.eval()
    with torch.no_grad():
        out = model(x); top1, = accuracy(out, y, topk=(1,))
    eval_metrics = OrderedDict([("loss", loss_fn(out, y).item()), ("top1", top1.item())])
    sched.step(epoch + 1, eval_metrics["top1"])
    update_summary(epoch, OrderedDict([("loss", losses.avg)]), eval_metrics, "summary.csv",
                   lr=opt.param_groups[0]["lr"], write_header=epoch == 0)
'''

PEFT = r'''
import torch
from peft import LoraConfig, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=2, n_head=2))
model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["c_attn"], task_type="CAUSAL_LM"))
model.print_trainable_parameters()
class DS(torch.utils.data.Dataset):
    def __len__(self): return 32
    def __getitem__(self, i):
        ids = torch.randint(1, 64, (16,), generator=torch.Generator().manual_seed(i))
        return {"input_ids": ids, "attention_mask": torch.ones(16, dtype=torch.long), "labels": ids}
args = TrainingArguments(output_dir=OUT, max_steps=8, per_device_train_batch_size=8, logging_steps=2,
                         save_strategy="no", report_to=[], use_cpu=True, seed=0, learning_rate=1e-2,
                         disable_tqdm=True)
Trainer(model=model, args=args, train_dataset=DS()).train()
'''

ACCELERATE = r'''
import torch
from accelerate import Accelerator
torch.manual_seed(0)
accelerator = Accelerator(cpu=True, log_with="tensorboard", project_dir=".")
accelerator.init_trackers("run", config={"lr": 0.05, "num_epochs": 3})
x = torch.randn(64, 8); y = (x[:, :2].sum(1) > 0).long()
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)
model, opt, dl = accelerator.prepare(model, opt, dl)
step = 0
for epoch in range(3):                                         # examples/complete_nlp_example.py's loop
    model.train()
    for xb, yb in dl:
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        accelerator.backward(loss); opt.step(); opt.zero_grad(); step += 1
        accelerator.log({"train_loss": loss.item()}, step=step)
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    eval_metric = {"accuracy": acc}
    accelerator.print(f"epoch {epoch}:", eval_metric)
    accelerator.log({"accuracy": acc, "epoch": epoch}, step=step)
accelerator.end_training()
'''

SAMPLES = {
    "keras": ("keras_fit.log", KERAS.replace("LR", "1e-2")),
    "keras_nan": ("keras_fit_nan.log", KERAS_NAN),
    "keras_terminate": ("keras_terminate_on_nan.log", KERAS_TERMINATE),
    "keras_progbar": ("keras_progbar_past_total.log", KERAS_PROGBAR),
    "keras_one_epoch": ("keras_fit_one_epoch_calls.log", KERAS_ONE_EPOCH),
    "transformers": ("hf_trainer_console.log", TRANSFORMERS),
    "lightning": ("lightning_progress.log", LIGHTNING),
    "lightning_tqdm": ("lightning_tqdm.log", LIGHTNING_TQDM),
    "lightning_terminal": ("lightning_rich_terminal.log", LIGHTNING),
    "mindspore": ("mindspore_lossmonitor.log", MINDSPORE),
    "ultralytics": ("ultralytics_train.log", ULTRALYTICS),
    "timm": (None, TIMM),  # (prints nothing: summary.csv is the sample)
    "peft": ("peft_lora_trainer.log", PEFT),
    "accelerate": ("accelerate_loop.log", ACCELERATE),
}

#: files a run writes besides its console that are kept too: (glob in the run's folder, name here)
KEEP = {
    "ultralytics": [("runs/**/exp/results.csv", "ultralytics_results.csv")],  # (under runs/detect/)
    "timm": [("summary.csv", "timm_summary.csv")],
    "accelerate": [("run/events.out.tfevents.*", "accelerate_tracker/events.out.tfevents.sample")],
}


#: samples recorded from a pseudo-terminal (rich redraws its live bar there; elsewhere it prints the end state)
TERMINAL = {"lightning_terminal"}


def _run_in_terminal(cmd: list[str], cwd: str, env: dict) -> tuple[bytes, int]:
    """Run under a pseudo-terminal, as `script` would record it (live progress bars, cursor codes, CR LF)."""
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:                      # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return b"".join(chunks), proc.wait()


def main(names: list[str]) -> None:
    import tempfile

    for name in names or list(SAMPLES):
        out, code = SAMPLES[name]
        with tempfile.TemporaryDirectory() as tmp:
            code = code.replace("OUT", repr(tmp))
            env = {"PYTHONUNBUFFERED": "1", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "HOME": tmp,
                   "TERM": "xterm", "COLUMNS": "120"}
            if name in TERMINAL:
                raw, rc = _run_in_terminal([sys.executable, "-c", code], tmp, env)
            else:
                proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, cwd=tmp, env=env, check=False)
                raw, rc = proc.stdout, proc.returncode
            for pattern, kept in KEEP.get(name, []):
                for found in sorted(Path(tmp).glob(pattern))[:1]:
                    (HERE / kept).parent.mkdir(exist_ok=True)
                    (HERE / kept).write_bytes(found.read_bytes())
                    print(f"{kept}: {found.stat().st_size} bytes")
        text = raw.decode("utf-8", "replace")
        if out is not None:
            (HERE / out).write_text(text, encoding="utf-8", newline="")
        print(f"{out or name}: {len(text)} chars, exit {rc}")


if __name__ == "__main__":
    main(sys.argv[1:])
