"""The run against its benchmark: the gap as a finding of its own, and a benchmark that is no reference.

Logs come from real (tiny) torch trainings, written as "epoch E step S loss L lr R" lines and
"epoch E val_loss V val_acc A" lines.
"""

from __future__ import annotations

import math

import pytest

from advisor.diagnosis import diagnose


def _train(folder, lr: float, steps: int = 120, seed: int = 0, scale: float = 1.0):
    torch = pytest.importorskip("torch")
    torch.manual_seed(seed)
    x = torch.randn(512, 8)
    w_true = torch.randn(8, 3)
    y = (x @ w_true).argmax(1)
    xv = torch.randn(256, 8)
    yv = (xv @ w_true).argmax(1)
    model = torch.nn.Linear(8, 3)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    lines = []
    for step in range(1, steps + 1):
        i = torch.randint(0, 512, (32,))
        loss = torch.nn.functional.cross_entropy(model(x[i] * scale), y[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
        epoch = 1 + (step - 1) // 16
        lines.append(f"epoch {epoch} step {step} loss {loss.item():.4f} lr {lr}")
        if step % 16 == 0:
            with torch.no_grad():
                out = model(xv * scale)
                vl = torch.nn.functional.cross_entropy(out, yv).item()
                acc = (out.argmax(1) == yv).float().mean().item()
            lines.append(f"epoch {epoch} val_loss {vl:.4f} val_acc {acc:.4f}")
    folder.mkdir(parents=True)
    (folder / "train.log").write_text("\n".join(lines) + "\n")
    return lines


def test_a_run_far_behind_its_baseline_is_a_finding_shown_first(tmp_path):
    _train(tmp_path / "base", lr=0.5)
    _train(tmp_path / "run", lr=0.005)
    report = diagnose(tmp_path / "run", baseline=tmp_path / "base")
    gap = next(f for f in report.findings if f.id == "run_worse_than_baseline")
    assert "above the baseline's" in gap.text
    assert report.summary.benchmark_gap and "val_acc" in report.summary.benchmark_gap
    assert not report.summary.headline.startswith("No cause found")
    if report.summary.verdict != "cause_found":
        assert report.summary.next_step and "dump_steps" in report.summary.next_step
    assert any(c.stage == "pre_check" and c.status == "ran" for c in report.checks)


def test_a_run_on_par_with_its_baseline_has_no_gap(tmp_path):
    _train(tmp_path / "base", lr=0.5, seed=0)
    _train(tmp_path / "run", lr=0.5, seed=0)
    report = diagnose(tmp_path / "run", baseline=tmp_path / "base")
    assert not any(f.id == "run_worse_than_baseline" for f in report.findings)
    assert report.summary.benchmark_gap in ("the run stays within the baseline's noise band",
                                            "the run ends better than the baseline")
    assert report.summary.next_step is None


def _train_regression(folder, lr: float, steps: int = 80):
    """Linear regression by SGD on inputs of scale 10: at a large lr the loss grows geometrically to inf/NaN."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch.randn(256, 4) * 10
    y = x @ torch.randn(4, 1)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    lines = []
    for step in range(1, steps + 1):
        i = torch.randint(0, 256, (32,))
        loss = torch.nn.functional.mse_loss(model(x[i]), y[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
        lines.append(f"epoch {1 + (step - 1) // 8} step {step} loss {loss.item():.6g} lr {lr}")
    folder.mkdir(parents=True)
    (folder / "train.log").write_text("\n".join(lines) + "\n")
    return lines


def test_a_diverged_baseline_is_unqualified_and_reported_first(tmp_path):
    lines = _train_regression(tmp_path / "base", lr=0.1)
    assert any("nan" in ln or "inf" in ln for ln in lines)  # the real training blew up
    _train_regression(tmp_path / "run", lr=0.001)
    report = diagnose(tmp_path / "run", baseline=tmp_path / "base")
    assert report.causes and report.causes[0].id == "baseline_unqualified"
    assert report.summary.top_cause == "baseline_unqualified"
    assert "baseline-loss-diverges" in report.causes[0].rules


def test_score_gap_alone_counts(tmp_path):
    """Only the eval score is compared: the final-score gap is found with its direction."""
    from advisor.extract.benchmark_gap import FinalScore, benchmark_gap

    gap = benchmark_gap([], FinalScore("val_acc", 0.80, False, "train.log"), FinalScore("val_acc", 0.91, False, "b"))
    assert gap.is_worse and gap.worst_metric == "eval_score" and math.isclose(gap.score_rel_gap, 0.11 / 0.91)
    wer = benchmark_gap([], FinalScore("wer", 0.30, True, "l"), FinalScore("wer", 0.20, True, "b"))
    assert wer.is_worse and math.isclose(wer.score_rel_gap, 0.5)
    assert not benchmark_gap([], FinalScore("val_acc", 0.905, False, "l"), FinalScore("val_acc", 0.91, False, "b")).is_worse
