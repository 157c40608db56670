"""Regenerate the pipeline-port pair (real torch CPU, scikit-learn's digits).

    python tests/known_failures/make/torch_pipeline_port.py OUTDIR

writes OUTDIR/pipeline_port/{run,baseline}/: config.yaml (the script's settings) and train.log (its stdout and
stderr). Both train the same MLP on the 8x8 digits with the same optimiser, seed and epochs; the baseline reads
whole images (``data.crop_size: 8``), the port a centre crop of 4x4 pixels (``data.crop_size: 4``), a setting
rewritten in the port. The port ends several points of eval accuracy behind.
"""

import os
import subprocess
import sys

CHILD = r'''
import sys, yaml, numpy as np, torch, torch.nn as nn
from sklearn.datasets import load_digits
cfg = yaml.safe_load(open("config.yaml"))
crop = cfg["data"]["crop_size"]
torch.manual_seed(0)
x, y = load_digits(return_X_y=True)
x = x.reshape(-1, 8, 8) / 16.0
lo = (8 - crop) // 2
x = x[:, lo : lo + crop, lo : lo + crop].reshape(len(x), -1)
rng = np.random.default_rng(0)
idx = rng.permutation(len(x))
tr, ev = idx[:1400], idx[1400:]
xt, yt = torch.tensor(x[tr], dtype=torch.float32), torch.tensor(y[tr])
xe, ye = torch.tensor(x[ev], dtype=torch.float32), torch.tensor(y[ev])
model = nn.Sequential(nn.Linear(crop * crop, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=cfg["optimizer"]["lr"], momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(1, cfg["epochs"] + 1):
    perm = torch.randperm(len(xt))
    for i in range(0, len(xt), cfg["batch_size"]):
        b = perm[i : i + cfg["batch_size"]]
        opt.zero_grad()
        loss = loss_fn(model(xt[b]), yt[b])
        loss.backward()
        opt.step()
    with torch.no_grad():
        logits = model(xe)
        val_loss = loss_fn(logits, ye).item()
        val_acc = (logits.argmax(1) == ye).float().mean().item()
    print(f"Epoch {epoch}/{cfg['epochs']} - loss: {loss.item():.4f} - val_loss: {val_loss:.4f} - val_acc: {val_acc:.4f}", flush=True)
'''

CONFIG = """framework: pytorch
data:
  dataset: digits
  crop_size: {crop}
optimizer:
  name: sgd
  lr: 0.05
batch_size: 64
epochs: 15
"""


def main(out: str) -> None:
    for side, crop in (("baseline", 8), ("run", 4)):
        folder = os.path.join(out, "pipeline_port", side)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.yaml"), "w") as f:
            f.write(CONFIG.format(crop=crop))
        with open(os.path.join(folder, "train.log"), "w") as log:
            subprocess.run([sys.executable, "-c", CHILD], stdout=log, stderr=subprocess.STDOUT, check=True, cwd=folder)


if __name__ == "__main__":
    main(sys.argv[1])
