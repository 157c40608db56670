"""Real CPU training runs with a loss/model mismatch, diagnosed end to end (loss_function_error rules)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

try:  # tests/extract may or may not be a package
    from . import dynamics_runs as runs
except ImportError:
    import dynamics_runs as runs

from advisor.diagnosis import diagnose  # noqa: E402


def _run(out, model, loss_fn, loss_name):
    out.mkdir()
    torch.manual_seed(0)
    losses = runs.train(model, out, lr=0.1, steps=200, loss_fn=loss_fn)
    (out / "train.log").write_text("".join(f"step {i} loss {v:.5f}\n" for i, v in enumerate(losses, 1)))
    (out / "hparams.yaml").write_text(f"framework: pytorch\nloss: {loss_name}\nnum_classes: 4\nlr: 0.1\n"
                                      "optimizer: sgd\nmomentum: 0.9\nbatch_size: 32\n")
    return {c.id: c.confidence for c in diagnose(out).causes}, losses


def test_softmax_before_cross_entropy_is_the_top_cause(tmp_path):
    conf, losses = _run(tmp_path / "double", nn.Sequential(runs.mlp(), nn.Softmax(dim=1)),
                        nn.functional.cross_entropy, "CrossEntropyLoss")
    # the loss cannot go below ln(1 + 3/e) = 0.744 for 4 classes
    assert min(losses) > 0.74
    assert max(conf, key=conf.get) == "loss_function_error" and conf["loss_function_error"] >= 0.8, conf


def test_softmax_with_log_and_nll_is_quiet(tmp_path):
    # the same model ending in Softmax, trained correctly: NLL on the log of the probabilities
    conf, losses = _run(tmp_path / "nll", nn.Sequential(runs.mlp(), nn.Softmax(dim=1)),
                        lambda p, y: nn.functional.nll_loss(torch.log(p + 1e-12), y), "NLLLoss")
    assert min(losses) < 0.5
    assert conf.get("loss_function_error", 0) < 0.5, conf


def _regress_ids(out, loss_name, score_name):
    """One output regressed onto the class ids with MSE (the labels are 4 classes).

    The eval score and loss are measured once at the end; the earlier eval lines repeat the score with a loss
    falling towards the final one (the rules read the score's name, the labels and the loss, not the eval shape).
    """
    out.mkdir()
    (out / "data").mkdir()
    torch.manual_seed(0)
    x, y = runs._data()
    model = runs.mlp(classes=1)
    losses = runs.train(model, out, lr=0.01, steps=200, x=x, y=y,
                        loss_fn=lambda o, t: nn.functional.mse_loss(o[:, 0], t.float()))
    with torch.no_grad():
        pred = model(x)[:, 0]
    np.savez(out / "data" / "train.npz", x=x.numpy(), y=y.numpy().astype(np.int64))
    lines = [f"step {i} loss {v:.5f}" for i, v in enumerate(losses, 1)]
    acc = float((pred.round().clamp(0, 3) == y.float()).float().mean())
    ev = float(nn.functional.mse_loss(pred, y.float()))
    lines += [f"step {s} eval_loss {ev * (1 + (200 - s) / 400):.5f} eval_{score_name} {acc:.4f}" for s in range(20, 201, 20)]
    (out / "train.log").write_text("\n".join(lines) + "\n")
    (out / "hparams.yaml").write_text(f"framework: pytorch\nloss: {loss_name}\nlr: 0.01\noptimizer: sgd\nbatch_size: 32\n")
    return {c.id: c.confidence for c in diagnose(out).causes}


def test_mse_on_class_ids_with_accuracy_is_the_top_cause(tmp_path):
    conf = _regress_ids(tmp_path / "mse", "MSELoss", "accuracy")
    # the loss falls and the accuracy is well above chance: no symptom, so the lead is tentative
    assert max(conf, key=conf.get) == "loss_function_error" and 0.35 <= conf["loss_function_error"] < 0.5, conf


def test_mse_on_ordered_grades_with_an_error_metric_stays_below_half(tmp_path):
    conf = _regress_ids(tmp_path / "ordinal", "MSELoss", "mae")
    assert 0 < conf.get("loss_function_error", 0) < 0.5, conf
