"""Tiny real training runs with one fault each, captured with advisor.capture (helper of the dynamics tests).

Each function trains a small model on a fixed synthetic task for a few
hundred steps on the CPU (about a second) and writes tensors.jsonl into
``out``. The faults are the ones an engineer really makes: a deep sigmoid
stack, a huge or zero init, a frozen layer, a block the loss never uses,
tied weights, a hand-written optimizer with a sign error, a bias that kills
every ReLU, a learning rate far too large.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from advisor.capture import attach

STEPS = 120
EVERY = 10


def _data(n: int = 256, d: int = 16, classes: int = 4, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, d, generator=g) * 0.4
    y = torch.randint(0, classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, d, generator=g)
    return x, y


def mlp(d: int = 16, hidden: int = 32, classes: int = 4, depth: int = 2, act: type = nn.ReLU) -> nn.Sequential:
    layers: list[nn.Module] = []
    width = d
    for _ in range(depth):
        layers += [nn.Linear(width, hidden), act()]
        width = hidden
    layers.append(nn.Linear(width, classes))
    return nn.Sequential(*layers)


def train(model: nn.Module, out: Path, *, lr: float = 0.05, opt: str = "sgd", steps: int = STEPS,
          optimizer: torch.optim.Optimizer | None = None, x: torch.Tensor | None = None,
          y: torch.Tensor | None = None, every: int = EVERY, loss_fn=nn.functional.cross_entropy) -> list[float]:
    """Mini-batch training with the capture attached; returns the losses."""
    torch.set_num_threads(1)
    if x is None:
        x, y = _data()
    params = [p for p in model.parameters() if p.requires_grad]
    if optimizer is None:
        optimizer = (torch.optim.Adam(params, lr=lr) if opt == "adam"
                     else torch.optim.SGD(params, lr=lr, momentum=0.0 if opt == "plain" else 0.9))
    g = torch.Generator().manual_seed(1)
    losses = []
    with attach(model, optimizer, out, every=every):
        for _ in range(steps):  # noqa: B007
            idx = torch.randint(0, x.shape[0], (32,), generator=g)
            loss = loss_fn(model(x[idx]), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if _ % 40 == 0:
                with torch.no_grad():  # an evaluation pass: must not be recorded
                    model(x)
    return losses


def healthy_mlp(out: Path) -> list[float]:
    torch.manual_seed(0)
    return train(mlp(), out)


def healthy_adam(out: Path) -> list[float]:
    torch.manual_seed(1)
    return train(mlp(depth=3, act=nn.Tanh), out, lr=1e-3, opt="adam")


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


def healthy_cnn(out: Path) -> list[float]:
    torch.manual_seed(2)
    g = torch.Generator().manual_seed(3)
    y = torch.randint(0, 4, (256,), generator=g)
    x = torch.randn(256, 1, 12, 12, generator=g) * 0.5
    for c in range(4):  # a class-dependent bright quadrant
        r, k = divmod(c, 2)
        x[y == c, :, r * 6:(r + 1) * 6, k * 6:(k + 1) * 6] += 1.0
    return train(SmallCNN(), out, lr=0.05, x=x, y=y)


def deep_sigmoid(out: Path) -> list[float]:
    torch.manual_seed(0)
    return train(mlp(depth=10, act=nn.Sigmoid), out, lr=0.05)


def huge_init(out: Path) -> list[float]:
    torch.manual_seed(0)
    model = mlp(depth=3, act=nn.Tanh)
    for m in model:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=5.0)
    return train(model, out, lr=0.01)


def zero_init(out: Path) -> list[float]:
    torch.manual_seed(0)
    model = mlp()
    for m in model:
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.weight)
            nn.init.zeros_(m.bias)
    return train(model, out)


def frozen_layer(out: Path) -> list[float]:
    torch.manual_seed(0)
    model = mlp()
    model[2].requires_grad_(False)  # the second hidden layer left frozen after a fine-tuning recipe
    return train(model, out)


class WithUnusedBlock(nn.Module):
    """An auxiliary block whose output is computed but never reaches the loss."""

    def __init__(self) -> None:
        super().__init__()
        self.body = mlp(classes=32, depth=1)
        self.aux = nn.Sequential(nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.body(x))
        _ = self.aux(h)  # bug: meant h = h + self.aux(h)
        return self.head(h)


def disconnected_block(out: Path) -> list[float]:
    torch.manual_seed(0)
    return train(WithUnusedBlock(), out)


def tied_weights(out: Path) -> list[float]:
    torch.manual_seed(0)
    model = mlp(depth=3)
    model[4].weight = model[2].weight  # copy-paste bug: two hidden layers share one weight
    return train(model, out)


class SignFlippedSGD(torch.optim.Optimizer):
    """A hand-written SGD whose update has the wrong sign (w += lr * g)."""

    def __init__(self, params, lr: float) -> None:
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure=None):  # noqa: ANN001
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=group["lr"])
        return None


def sign_error_optimizer(out: Path) -> list[float]:
    torch.manual_seed(0)
    model = mlp()
    return train(model, out, optimizer=SignFlippedSGD(model.parameters(), lr=0.01))


class DecayWrongSign(torch.optim.Optimizer):
    """A hand-written SGD with weight decay whose decay term has the wrong sign (w += lr * wd * w)."""

    def __init__(self, params, lr: float, weight_decay: float) -> None:
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):  # noqa: ANN001
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])
                    p.add_(p, alpha=group["lr"] * group["weight_decay"])  # should be minus
        return None


def decay_wrong_sign(out: Path) -> list[float]:
    torch.manual_seed(0)
    model = mlp()
    return train(model, out, optimizer=DecayWrongSign(model.parameters(), lr=0.05, weight_decay=0.01))


class AdamWDecayWrongSign(torch.optim.Adam):
    """A hand-written AdamW whose decoupled decay has the wrong sign: w += lr * wd * w, then the Adam step."""

    def __init__(self, params, lr: float, weight_decay: float) -> None:
        super().__init__(params, lr=lr)
        self.decay = weight_decay

    @torch.no_grad()
    def step(self, closure=None):  # noqa: ANN001
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p, alpha=group["lr"] * self.decay)  # AdamW: alpha=-lr * wd
        return super().step(closure)


def adamw_decay_wrong_sign(out: Path) -> list[float]:
    torch.manual_seed(0)
    model = mlp()
    return train(model, out, optimizer=AdamWDecayWrongSign(model.parameters(), lr=5e-3, weight_decay=2.0))


def healthy_adamw_strong_decay(out: Path) -> list[float]:
    """torch's AdamW with the same (strong) decay: the control of adamw_decay_wrong_sign."""
    torch.manual_seed(0)
    model = mlp()
    return train(model, out, optimizer=torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=2.0))


def dead_relu(out: Path) -> list[float]:
    torch.manual_seed(0)
    model = mlp(depth=3)
    nn.init.constant_(model[2].bias, -20.0)  # a "shift" bias that puts every unit below zero
    return train(model, out)


def lr_far_too_high(out: Path) -> list[float]:
    torch.manual_seed(0)
    return train(mlp(depth=4), out, lr=3.0)


def exploding_regression(out: Path) -> list[float]:
    """SGD at a step size just past the stable one: the gradient grows geometrically, then overflows."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 16, generator=g)
    y = x @ torch.randn(16, 1, generator=g)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
    return train(model, out, lr=0.5, opt="plain", steps=60, every=1, x=x, y=y, loss_fn=nn.functional.mse_loss)


FAULTS = {
    "deep_sigmoid": deep_sigmoid, "huge_init": huge_init, "zero_init": zero_init, "frozen_layer": frozen_layer,
    "disconnected_block": disconnected_block, "tied_weights": tied_weights,
    "sign_error_optimizer": sign_error_optimizer, "decay_wrong_sign": decay_wrong_sign, "dead_relu": dead_relu, "lr_far_too_high": lr_far_too_high,
    "exploding_regression": exploding_regression,
}
HEALTHY = {"healthy_mlp": healthy_mlp, "healthy_adam": healthy_adam, "healthy_cnn": healthy_cnn}
#: runs that are neither in HEALTHY's normal ranges nor faults (controls of one test)
CONTROLS = {"adamw_decay_wrong_sign": adamw_decay_wrong_sign, "healthy_adamw_strong_decay": healthy_adamw_strong_decay}

_TRAINED: dict[str, Path] = {}


def trained_runs(base: Path) -> dict[str, Path]:
    """Train every scenario once per test session (cached); name -> run folder."""
    if not _TRAINED:
        torch.set_num_threads(1)
        for name, fn in {**HEALTHY, **FAULTS, **CONTROLS}.items():
            folder = Path(base) / f"dynamics_{name}"
            folder.mkdir(parents=True, exist_ok=True)
            fn(folder)
            _TRAINED[name] = folder
    return dict(_TRAINED)
