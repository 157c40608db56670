"""A small real port pair: the same two-layer network in MindSpore 2.10 (the run) and PyTorch (the baseline).

The run is dumped with MindSpore's own synchronous dump (``MINDSPORE_DUMP_CONFIG``, ``file_format: npy``:
``run/dump/rank_0/Net/0/0/*.npy`` plus ``execution_order/``); the baseline with forward hooks in the plain
npy layout (``NNNN_<module>.forward.<input|output>.<i>.npy`` + ``manifest.json``). Both hold the same
weights and the same 16 digits images. The port's fault is a framework default: ``mindspore.nn.GELU()``
uses the tanh approximation unless ``approximate=False``; ``torch.nn.GELU()`` is exact.

Usage (needs mindspore and torch; CPU only, a few seconds)::

    python examples/mindspore_port/generate.py [OUT]     # OUT defaults to examples/mindspore_port
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _inputs() -> np.ndarray:
    from sklearn.datasets import load_digits

    x = load_digits().data[:16].astype(np.float32)
    return (x - x.mean(0)) / (x.std(0) + 1e-6)


def mindspore_run(out: Path, x: np.ndarray) -> dict[str, np.ndarray]:
    dump = (out / "dump").resolve()
    cfg = {"common_dump_settings": {"dump_mode": 0, "path": str(dump), "net_name": "Net", "iteration": "0",
                                    "saved_data": "tensor", "input_output": 0, "kernels": [],
                                    "support_device": [0, 1, 2, 3, 4, 5, 6, 7], "op_debug_mode": 0,
                                    "file_format": "npy"},
           "e2e_dump_settings": {"enable": True, "trans_flag": True}}
    cfg_path = out.parent / f".{out.name}_dump_config.json"
    cfg_path.write_text(json.dumps(cfg))
    os.environ["MINDSPORE_DUMP_CONFIG"] = str(cfg_path)
    import mindspore as ms
    from mindspore import nn

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    ms.set_seed(0)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(64, 32)
            self.act = nn.GELU()          # MindSpore's default: approximate=True (tanh)
            self.fc2 = nn.Dense(32, 10)

        def construct(self, x):
            return self.fc2(self.act(self.fc1(x)))

    net = Net()
    net(ms.Tensor(x))
    cfg_path.unlink()
    shutil.rmtree(dump / "rank_0" / "graphs", ignore_errors=True)  # IR graphs: large, not read
    shutil.rmtree(dump / "rank_0" / ".dump_metadata", ignore_errors=True)  # holds this machine's absolute path
    return {k: p.asnumpy() for k, p in (("fc1.weight", net.fc1.weight), ("fc1.bias", net.fc1.bias),
                                        ("fc2.weight", net.fc2.weight), ("fc2.bias", net.fc2.bias))}


def torch_baseline(out: Path, x: np.ndarray, weights: dict[str, np.ndarray]) -> None:
    import torch

    model = torch.nn.Sequential()
    model.add_module("fc1", torch.nn.Linear(64, 32))
    model.add_module("act", torch.nn.GELU())  # exact erf GELU
    model.add_module("fc2", torch.nn.Linear(32, 10))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    folder = out / "dump"
    folder.mkdir(parents=True)
    manifest: list[dict] = []

    def hook(name):
        def save(module, args, output):
            for role, tensors in (("input", args), ("output", (output,))):
                for i, t in enumerate(tensors):
                    tname = f"{name}.forward.{role}.{i}"
                    fname = f"{len(manifest):04d}_{tname}.npy"
                    np.save(folder / fname, t.detach().numpy(), allow_pickle=False)
                    manifest.append({"name": tname, "file": fname, "op_type": type(module).__name__})
        return save

    for name, mod in model.named_children():
        mod.register_forward_hook(hook(name))
    with torch.no_grad():
        model(torch.from_numpy(x))
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for side in ("run", "baseline"):
        shutil.rmtree(out / side, ignore_errors=True)
        (out / side).mkdir(parents=True)
    x = _inputs()
    weights = mindspore_run(out / "run", x)
    torch_baseline(out / "baseline", x, weights)
    (out / "run" / "hparams.yaml").write_text("framework: mindspore\nhidden: 32\nactivation: gelu\n")
    (out / "baseline" / "hparams.yaml").write_text("framework: pytorch\nhidden: 32\nactivation: gelu\n")
    print(f"wrote {out / 'run'} and {out / 'baseline'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
