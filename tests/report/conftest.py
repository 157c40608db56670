"""A fixed Report, built by hand, for the renderer tests (no diagnosis needed); its charts carry the divergence
markers the report assembly adds from the causes' facts, as a diagnosis's do."""

from __future__ import annotations

import pytest

from advisor.chart_data import Marker, Series
from advisor.extract.chart_extras import loss_scale_drop_markers
from advisor.inventory import InputRecord
from advisor.report.model import Chart, CauseReport, CheckReport, EvidenceItem, Report, Summary
from advisor.report_assembly import with_divergence_markers
from advisor.stages import STAGES

HOSTILE = "<script>alert(1)</script>"
#: the loss-scale curve of the fixed report; its drops are marked as the loss-curve extractor marks them
SCALE = Series(chart="loss_scale", label="loss scale", x=[0, 10, 20, 30, 40], y=[65536, 65536, 32768, 32768, 8192],
               log_y=True)
NAN = None


def make_report() -> Report:
    ran = {"loss_curve": ["train.log"], "hyperparameters": ["hparams.yaml"], "network_wide_comparison": ["dump/"],
           "input_data": ["data/train.npz", "data/eval.npz"]}
    checks = [CheckReport(stage=s.id, title=s.title, status="ran", inputs=ran[s.id]) if s.id in ran else
              CheckReport(stage=s.id, title=s.title, status="skipped", why="no input for this stage in the run",
                          enable=s.enable) for s in STAGES]
    loss_fact = {"kind": "loss_curve", "side": "run", "split": "train", "diverged": True, "divergence_step": 60,
                 "first_nonfinite_step": 90}
    lr = CauseReport(
        id="lr_too_high", title="Learning rate too high", stage="hyperparameters", confidence=0.87,
        raw_confidence=0.87, severity="high", rules=["loss-diverges", "lr-above-band"],
        evidence=[EvidenceItem(rule="loss-diverges", confidence=0.6, source="train.log:2-52",
                               text="train loss diverged from step 60; first NaN at step 90",
                               facts={"loss_curve": loss_fact}),
                  EvidenceItem(rule="lr-above-band", confidence=0.7, source="hparams.yaml",
                               text="learning_rate=2.5 is 20x the top of the usual band (0.125; threshold 3x)")],
        opposing=[EvidenceItem(rule="warmup-present", confidence=-0.2, source="hparams.yaml",
                               text="a warm-up of 100 steps was configured")],
        remedies=["Lower the learning rate 3-10x.", "Add a warm-up of a few hundred steps.", "Clip gradients.",
                  "Run a learning-rate range test."])
    hostile = CauseReport(
        id="custom_cause", title=f"Custom {HOSTILE} cause", confidence=0.3, raw_confidence=0.3, severity="low",
        evidence=[EvidenceItem(rule="user-rule", confidence=0.3, source="train.log:7",
                               text="log line said <img src=x onerror=alert(2)> | pipe")],
        remedies=[f"Read {HOSTILE} carefully"])
    steps = [float(s) for s in range(0, 100, 2)]
    train = [2.0 / (1 + s / 20) if s < 60 else 0.8 * 1.3 ** ((s - 60) / 2) for s in steps]
    train = [v if s < 90 else NAN for s, v in zip(steps, train)]
    charts = [
        Chart(id="lr", title="Learning rate", series=[
            Series(chart="lr", label="learning rate", x=steps, y=[2.5] * len(steps))]),
        Chart(id="loss", title="Loss", series=[
            Series(chart="loss", label="train loss (loss)", x=steps, y=train),
            Series(chart="loss", label="eval loss (eval_loss)", x=[1.0, 2.0], y=[1.5, 1.4], x_label="epoch"),
            Series(chart="loss", label="train loss (loss)", side="baseline", x=steps,
                   y=[2.0 / (1 + s / 20) for s in steps])],
            markers=[Marker(chart="loss", x=90, label="first non-finite train loss", kind="nonfinite"),
                     Marker(chart="loss", x=2, label="first non-finite eval loss", kind="nonfinite")]
            + [m for m in loss_scale_drop_markers(SCALE) if m.chart == "loss"]),
        Chart(id="loss_scale", title="Loss scale", series=[SCALE],
              markers=[m for m in loss_scale_drop_markers(SCALE) if m.chart == "loss_scale"]),
        Chart(id="op_error", title="Per-operator error along execution order", series=[
            Series(chart="op_error", label="dump: relative error per operator", style="points",
                   x=[0, 1, 2, 3, 4, 5], y=[1e-7, 2e-7, 1e-7, 0.3, 0.5, None], log_y=True,
                   x_label="operator (execution order)", y_label="euclid_rel_dist")],
            markers=[Marker(chart="op_error", x=3, label="source: Conv2d.conv2.0.forward", kind="source")]),
        Chart(id="class_hist", title="Class counts", series=[
            Series(chart="class_hist", label="train classes", style="bar", x=[0, 1, 2], y=[300, 20, 280],
                   categories=["0", "1", "2"], x_label="class", y_label="samples"),
            Series(chart="class_hist", label="eval classes", style="bar", x=[0, 1], y=[50, 45],
                   categories=["0", "2"], x_label="class", y_label="samples")]),
        Chart(id="feature_range", title="Feature ranges", series=[
            Series(chart="feature_range", label="train feature mean +- std", style="band", x=[0, 1, 2, 3],
                   y=[1.0, 2.0, 1.5, 300.0], y_low=[-1.0, 0.0, -0.5, 100.0], x_label="feature", y_label="value")]),
        Chart(id="metric", title=f"Metric {HOSTILE}", series=[
            Series(chart="metric", label=f"eval {HOSTILE}", x=[10, 20], y=[0.5, 0.6])],
            markers=[Marker(chart="metric", x=15, label=f"marker {HOSTILE}")]),
    ]
    return Report(
        advisor_version="0.0-test", run="runs/exp7", baseline="runs/base",
        summary=Summary(verdict="cause_found", headline="Most likely cause: Learning rate too high (lr_too_high)",
                        top_cause="lr_too_high", top_confidence=0.87, first_remedies=lr.remedies[:3],
                        certainty="fairly sure, but check the runner-up causes too"),
        causes=[lr, hostile], checks=checks, charts=with_divergence_markers(charts, [lr, hostile]), facts_count=12,
        rules_count=30,
        inputs=[InputRecord(path="train.log", kind="log", status="used", why="read as keyvalue"),
                InputRecord(path="hparams.yaml", kind="hparams"),
                InputRecord(path="metrics.csv", kind="metrics", status="unreadable",
                            why=f"line 3: expected 4 columns, found 2 {HOSTILE}"),
                InputRecord(path="notes.txt", kind="other", status="ignored", why="not a known artifact"),
                InputRecord(path="dump/manifest.json", kind="dump", status="unreadable", side="baseline",
                            why="not valid JSON at line 1, column 2")],
        warnings=[f"rules/custom.yaml:3:1: warning: {HOSTILE}"])


@pytest.fixture
def report() -> Report:
    return make_report()
