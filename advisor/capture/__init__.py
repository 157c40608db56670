"""Capture tensor statistics from a PyTorch training loop (optional extra ``advisor[torch]``).

Two lines in the user's own loop::

    from advisor.capture import attach
    cap = attach(model, optimizer, "runs/exp7", every=10)   # ... train as usual ...
    cap.close()

or as a context manager::

    with capture(model, optimizer, "runs/exp7", every=10):
        train()

It writes ``tensors.jsonl`` (docs/run-layout.md) and, for the steps
given in ``dump_steps``, per-module ``.npy`` dumps with a ``manifest.json``.
torch is imported only when a capture is created.
"""

from advisor.capture.hook import Capture, attach, capture

__all__ = ["Capture", "attach", "capture"]
