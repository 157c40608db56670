"""The charts' additions are computed by the extractors, not by the report layer (issue 30): the baseline's noise
band comes with the loss curves, at the band the comparison used, and the loss-scale drops as markers."""

from __future__ import annotations

import ast
from pathlib import Path

import advisor
from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder

ROOT = Path(__file__).resolve().parents[2]


def test_baseline_band_is_made_with_the_band_the_comparison_used():
    report = advisor.diagnose(ROOT / "examples" / "port_mismatch" / "run",
                              baseline=ROOT / "examples" / "port_mismatch" / "baseline")
    loss = next(c for c in report.charts if c.id == "loss")
    bands = {s.label.split(":")[0]: s for s in loss.series if s.style == "band"}
    assert set(bands) == {s.label for s in loss.series if s.side == "baseline" and s.style == "line"}
    pair = RunPair(RunFolder.scan(ROOT / "examples" / "port_mismatch" / "run"),
                   RunFolder.scan(ROOT / "examples" / "port_mismatch" / "baseline", side="baseline"))
    ratio = next(f.noise_band_ratio for f in extract_facts(pair).facts
                 if f.kind == "baseline_deviation" and f.split == "train")
    assert bands["train loss (loss)"].label.endswith(f"±{100 * ratio:.0f}%")


def test_loss_scale_drops_are_marked_by_the_extractor(tmp_path):
    scale = [65536, 65536, 32768, 32768, 16384, 16384]
    (tmp_path / "train.log").write_text(
        "".join(f"step {10 * i} loss {2.0 - 0.1 * i:.2f} loss_scale {s}\n" for i, s in enumerate(scale)))
    report = advisor.diagnose(tmp_path)
    charts = {c.id: c for c in report.charts}
    assert [(m.x, m.label) for m in charts["loss_scale"].markers if m.kind == "scale_drop"] == [
        (20.0, "loss scale drop"), (40.0, "loss scale drop")]
    assert [(m.x, m.label) for m in charts["loss"].markers if m.kind == "scale_drop"] == [
        (20.0, "loss scale drops (2x, first)")]


def test_the_report_layer_imports_nothing_from_the_extractors():
    for path in sorted((ROOT / "advisor" / "report").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith("advisor.extract") for n in names), (path.name, names)
