"""Regenerate the run of a training script written for PyTorch 0.4 (real torch, CPU).

    python tests/known_failures/make/torch_code_for_old_pytorch.py OUTDIR

writes OUTDIR/torch_code_for_old_pytorch/train.log: the stdout and stderr of a plain PyTorch script, as a
user's ``python train.py > train.log 2>&1`` would. The script keeps three habits of code written before
PyTorch 1.1: ``scheduler.step()`` at the start of each epoch (before ``optimizer.step()``), the
``nn.init.xavier_uniform`` spelling, and ``Variable(x, volatile=True)`` for evaluation. The installed torch
warns about each (the scheduler order and ``volatile`` as behaviour changes, the initialiser as a plain
deprecation). The problem itself (two overlapping Gaussian blobs, a small MLP, SGD at lr 0.05) trains: the run shows no
symptom, so the warnings are worth a look and explain nothing.
"""

import os
import subprocess
import sys

CHILD = r'''
import warnings
import torch, torch.nn as nn
from torch.autograd import Variable
warnings.simplefilter("default")  # every warning once per call site, as a script run by hand shows them
torch.manual_seed(0)
x = torch.cat([torch.randn(256, 8) + 0.4, torch.randn(256, 8) - 0.4])
y = torch.cat([torch.zeros(256), torch.ones(256)]).long()
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
for m in model:
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform(m.weight)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
loss_fn = nn.CrossEntropyLoss()
print(f"torch version: {torch.__version__}", flush=True)
for epoch in range(1, 9):
    sched.step()
    perm = torch.randperm(512)
    total = 0.0
    for i in range(0, 512, 64):
        idx = perm[i : i + 64]
        opt.zero_grad()
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        total += loss.item()
    with torch.no_grad():
        xv = Variable(x, volatile=True)
        acc = (model(xv).argmax(1) == y).float().mean().item()
    print(f"Epoch {epoch}/8 - loss: {total / 8:.4f} - acc: {acc:.4f} - lr: {opt.param_groups[0]['lr']:.4f}", flush=True)
'''


def main(out: str) -> None:
    run = os.path.join(out, "torch_code_for_old_pytorch")
    os.makedirs(run, exist_ok=True)
    script = os.path.join(run, "train.py")
    with open(script, "w") as f:
        f.write(CHILD)
    try:
        with open(os.path.join(run, "train.log"), "w") as log:
            subprocess.run([sys.executable, "train.py"], stdout=log, stderr=subprocess.STDOUT, check=True, cwd=run)
    finally:
        os.remove(script)


if __name__ == "__main__":
    main(sys.argv[1])
