"""Regenerate the one-logit cross-entropy runs (real torch CPU).

    python tests/known_failures/make/torch_one_logit_cross_entropy.py OUTDIR

writes OUTDIR/torch_one_logit_cross_entropy/train.log and OUTDIR/torch_two_logit_cross_entropy/train.log (the
scripts' stdout). Both train an MLP with CrossEntropyLoss on labels of one class (a filter kept one label):
the first with one output unit, whose softmax is 1 for every input, so the loss is exactly 0 from the first step
and nothing trains; the second with two outputs, whose loss starts near ln 2 and falls.
"""

import os
import subprocess
import sys

CHILD = r'''
import sys, torch, torch.nn as nn
outputs = int(sys.argv[1])
torch.manual_seed(0)
x = torch.randn(256, 8)
y = torch.zeros(256, dtype=torch.long)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, outputs))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(1, 6):
    opt.zero_grad()
    loss = nn.CrossEntropyLoss()(model(x), y)
    loss.backward()
    opt.step()
    print(f"Epoch {epoch}/5 - loss: {loss.item():.4f}", flush=True)
'''


def main(out: str) -> None:
    for name, outputs in (("torch_one_logit_cross_entropy", "1"), ("torch_two_logit_cross_entropy", "2")):
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "train.log"), "w") as log:
            subprocess.run([sys.executable, "-c", CHILD, outputs], stdout=log, stderr=subprocess.STDOUT, check=True)


if __name__ == "__main__":
    main(sys.argv[1])
