"""Regenerate the runs that start from a checkpoint holding a NaN (real torch CPU, advisor's capture hook).

    python tests/known_failures/make/torch_nan_checkpoint.py OUTDIR

writes OUTDIR/torch_nan_checkpoint/ and OUTDIR/torch_finite_checkpoint/, each with train.log (the script's loss
prints) and tensors.jsonl (the capture hook's statistics, every step). Both load a small MLP's state_dict from a
checkpoint with ``torch.load(..., weights_only=True)`` and train 5 SGD steps; in the first, one entry of the
first layer's weight was NaN when the checkpoint was saved (as after a run that had diverged). The checkpoint
itself is written to a temporary folder and not kept.
"""

import os
import sys
import tempfile

import torch
import torch.nn as nn

from advisor.capture import attach


def _run(folder: str, nan: bool) -> None:
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    state = model.state_dict()
    if nan:
        state["0.weight"][3, 5] = float("nan")
    with tempfile.TemporaryDirectory() as tmp:
        torch.save(state, os.path.join(tmp, "ckpt.pt"))
        model.load_state_dict(torch.load(os.path.join(tmp, "ckpt.pt"), weights_only=True))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    cap = attach(model, opt, folder, every=1)
    x, y = torch.randn(64, 8), torch.randint(0, 3, (64,))
    with open(os.path.join(folder, "train.log"), "w") as log:
        for step in range(5):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            print(f"step {step} loss: {loss.item():.4f}", file=log)
    cap.close()


def main(out: str) -> None:
    _run(os.path.join(out, "torch_nan_checkpoint"), nan=True)
    _run(os.path.join(out, "torch_finite_checkpoint"), nan=False)


if __name__ == "__main__":
    main(sys.argv[1])
