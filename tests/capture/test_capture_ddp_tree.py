"""A real 4-rank DistributedDataParallel run (torch, gloo on CPU) with the capture hook: each rank dumps its
operators under ``dump/rank_R/step_N``, and `advisor compare` tells a rank whose layer computes wrongly from a
layer that is wrong on every rank."""

from __future__ import annotations

import os
import socket

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch import nn  # noqa: E402

from advisor.compare.tree_compare import compare_tree  # noqa: E402

WORLD = 4


class FaultyLinear(nn.Linear):
    """A linear layer computed 2 % off: a card that gets one layer wrong."""

    def forward(self, x):
        return super().forward(x) * 1.02


class Net(nn.Module):
    def __init__(self, fault: str | None, rank: int):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.Tanh() if fault == "operator" else nn.GELU()
        self.fc2 = (FaultyLinear if fault == "rank" and rank == 2 else nn.Linear)(16, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def _train(rank: int, port: int, root: str, runs: dict[str, str | None]) -> None:
    """One rank of each run in ``runs`` (name -> fault), one after the other in one process group: a process
    per rank and run took most of the test's time starting Python and importing torch (12 spawns, ~30 s)."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    try:
        from advisor.capture import capture

        for name, fault in runs.items():
            torch.manual_seed(0)  # the same initial weights on every rank (DDP broadcasts rank 0's anyway)
            model = nn.parallel.DistributedDataParallel(Net(fault, rank))
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            g = torch.Generator().manual_seed(100 + rank)  # each rank its own shard
            x, y = torch.randn(16, 8, generator=g), torch.randint(0, 4, (16,), generator=g)
            with capture(model.module, opt, os.path.join(root, name), every=100, dump_steps=[0, 1]):
                for _ in range(2):
                    opt.zero_grad()
                    nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
            # every rank done before any tears the group down: a rank that leaves while another is still in gloo's
            # last exchange aborts it ("terminate called without an active exception", SIGABRT, seen on 2 busy
            # cores); and every rank done with a run before any starts the next
            dist.barrier()
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    root = tmp_path_factory.mktemp("ddp")
    runs = {"base": None, "rank": "rank", "operator": "operator"}
    mp.spawn(_train, args=(_free_port(), str(root), runs), nprocs=WORLD, join=True)
    return {name: root / name / "dump" for name in runs}


def test_each_rank_dumps_under_its_own_folder(runs):
    ranks = sorted(p.name for p in runs["base"].iterdir())
    assert ranks == [f"rank_{r}" for r in range(WORLD)]
    assert sorted(p.name for p in (runs["base"] / "rank_3").iterdir()) == ["step_000000", "step_000001"]


def test_a_faulty_rank_and_a_wrong_layer_everywhere_are_told_apart(runs):
    one = compare_tree(runs["rank"], runs["base"], workers=2).divergence
    assert one is not None and one.pattern == "one_rank" and one.ranks_deviating == [2]
    assert one.first_step == 0 and one.first_kind == "compute"
    assert one.spread == "every rank deviates from step 1"  # DDP averaged rank 2's wrong gradients into all
    every = compare_tree(runs["operator"], runs["base"], workers=2).divergence
    assert every is not None and every.pattern == "every_rank_same_operator" and every.first_op == "act.forward"
    assert every.ranks_total == WORLD
