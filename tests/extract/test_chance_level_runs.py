"""Loss levels against ln(C) (``chance_level``) on real small CPU runs that keep only a log and a config.

Four-class blobs, an MLP trained with Adam for 30 epochs; the log holds the epoch's mean train loss and the
eval loss and accuracy on clean held-out data, as a plain training script prints them. No data sample is saved,
so the input and label checks of the data extractor cannot run: the curves' levels against ln(4) must speak.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from advisor.diagnosis import diagnose  # noqa: E402
from advisor.extract import extract_facts  # noqa: E402
from advisor.extract.base import RunPair  # noqa: E402
from advisor.extract.chance import chance_levels  # noqa: E402
from advisor.facts.loss_curve import ChanceLevel, LossCurve  # noqa: E402
from advisor.facts.model import LossSetup, Task  # noqa: E402
from advisor.inventory import RunFolder  # noqa: E402

CLASSES = 4


def _blobs(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(CLASSES, 16, generator=torch.Generator().manual_seed(0)) * 1.5
    y = torch.randint(0, CLASSES, (n,), generator=g)
    return centers[y] + torch.randn(n, 16, generator=g), y


def _run(out: Path, *, label_noise: float = 0.0, input_scale: float = 1.0, epochs: int = 30, batch: int = 32) -> Path:
    """Train, and write what a plain script keeps: train.log (per-epoch lines) and hparams.yaml."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x, y = _blobs(512, seed=1)
    xe, ye = _blobs(256, seed=2)
    if label_noise:
        g = torch.Generator().manual_seed(3)
        idx = torch.randperm(len(y), generator=g)[: int(label_noise * len(y))]
        y = y.clone()
        y[idx] = y[idx][torch.randperm(len(idx), generator=g)]
    x, xe = x * input_scale, xe * input_scale
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, CLASSES))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lines = []
    g = torch.Generator().manual_seed(4)
    for ep in range(1, epochs + 1):
        perm, total = torch.randperm(len(y), generator=g), 0.0
        for i in range(0, len(y), batch):
            b = perm[i : i + batch]
            loss = nn.functional.cross_entropy(model(x[b]), y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        with torch.no_grad():
            logits = model(xe)
            val_loss = nn.functional.cross_entropy(logits, ye).item()
            val_acc = (logits.argmax(1) == ye).float().mean().item()
        step = ep * -(-len(y) // batch)
        lines.append(
            f"epoch {ep} step {step} loss {total / len(y):.4f} val_loss {val_loss:.4f} val_acc {val_acc:.4f}\n"
        )
    out.mkdir()
    (out / "train.log").write_text("".join(lines))
    (out / "hparams.yaml").write_text(
        f"framework: pytorch\noptimizer: adam\nlr: 0.001\nbatch_size: {batch}\nepochs: {epochs}\n"
        f"loss: CrossEntropyLoss\nnum_classes: {CLASSES}\n"
    )
    return out


def _facts(run: Path) -> list:
    return extract_facts(RunPair(run=RunFolder.open(str(run), "run"))).facts


def _causes(run: Path) -> dict[str, float]:
    return {c.id: c.raw_confidence for c in diagnose(run).causes}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("chance")
    return {
        "healthy": _run(base / "healthy"),
        "noisy": _run(base / "noisy", label_noise=0.4),
        "unscaled": _run(base / "unscaled", input_scale=60.0),
        "full_batch": _run(base / "full_batch", batch=512),
    }


def test_chance_level_reads_the_curve_against_ln_c(runs: dict[str, Path]) -> None:
    facts = _facts(runs["healthy"])
    levels = {f.split: f for f in facts if isinstance(f, ChanceLevel)}
    curve = next(f for f in facts if isinstance(f, LossCurve) and f.split == "train")
    assert set(levels) == {"train", "eval"}
    train = levels["train"]
    assert train.n_classes == CLASSES and train.chance_loss == pytest.approx(math.log(CLASSES))
    assert train.first_ratio == pytest.approx(curve.first_value / math.log(CLASSES))
    assert train.end_ratio == pytest.approx(curve.end_level / math.log(CLASSES))
    # a network at initialisation with inputs of unit scale starts near ln(C) and ends far below it
    assert 0.7 < train.first_ratio < 1.5 and train.end_ratio < 0.3


def test_healthy_run_gets_neither_cause(runs: dict[str, Path]) -> None:
    causes = _causes(runs["healthy"])
    assert causes.get("label_errors", 0) == 0 and causes.get("not_normalized", 0) == 0, causes


def test_shuffled_labels_leave_a_train_loss_floor_above_the_clean_eval_loss(runs: dict[str, Path]) -> None:
    facts = _facts(runs["noisy"])
    train = next(f for f in facts if isinstance(f, ChanceLevel) and f.split == "train")
    assert 0.3 < train.end_ratio < 1.0  # the floor: the entropy of the noisy labels
    causes = _causes(runs["noisy"])
    assert max(causes, key=causes.get) == "label_errors", causes


def test_unscaled_inputs_start_far_above_ln_c(runs: dict[str, Path]) -> None:
    facts = _facts(runs["unscaled"])
    train = next(f for f in facts if isinstance(f, ChanceLevel) and f.split == "train")
    assert train.first_ratio >= 4
    causes = _causes(runs["unscaled"])
    assert max(causes, key=causes.get) == "not_normalized", causes


def test_a_batch_as_large_as_the_data_set_leaves_too_few_updates(runs: dict[str, Path]) -> None:
    facts = _facts(runs["full_batch"])
    train = next(f for f in facts if isinstance(f, LossCurve) and f.split == "train")
    assert train.updates == 30 and train.is_still_falling  # one update per epoch
    causes = _causes(runs["full_batch"])
    assert max(causes, key=causes.get) == "insufficient_epochs", causes
    healthy = next(f for f in _facts(runs["healthy"]) if isinstance(f, LossCurve) and f.split == "train")
    assert healthy.updates == 30 * 16


def test_no_chance_level_without_a_cross_entropy() -> None:
    curve = LossCurve(split="train", first_value=3.0, end_level=1.0)
    task = Task(task_type="multiclass", n_classes=10, decided_from="hparams.yaml: num_classes=10")
    mse = LossSetup(name="mse", family="mse", variant="regression", expects="values", target_form="values")
    ce = LossSetup(
        name="CrossEntropyLoss",
        family="cross_entropy",
        variant="torch_cross_entropy",
        expects="logits",
        target_form="class_ids",
    )
    assert chance_levels([curve, task, mse]) == []
    (level,) = chance_levels([curve, task, ce])
    assert level.first_ratio == pytest.approx(3.0 / math.log(10))
    regression = Task(task_type="regression", decided_from="hparams.yaml: loss=mse")
    assert chance_levels([curve, regression, ce]) == []
