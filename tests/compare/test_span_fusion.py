"""A fused kernel whose name says nothing (issue 27 item 2): the run's ``kernel_7`` computes what the baseline's
``fc1`` + ``act1`` compute (relu where the benchmark has gelu). It is matched as a span (inputs with fc1's, output
with act1's), its inputs match and its output deviates: the diagnosis names fusion_error first, with the baseline
operators it covers, not a generic operator_accuracy; the same pair with a correct kernel raises nothing."""

from __future__ import annotations

import json
import math

import numpy as np

import advisor


def _write(folder, ops):
    d = folder / "dump"
    d.mkdir(parents=True)
    entries = []
    for name, typ, ins, outs in ops:
        for role, arrays in (("input", ins), ("output", outs)):
            for k, a in enumerate(arrays):
                f = f"{len(entries):04d}_{name}.forward.{role}.{k}.npy"
                np.save(d / f, a)
                entries.append({"name": f"{name}.forward.{role}.{k}", "file": f, "op_type": typ})
    (d / "manifest.json").write_text(json.dumps(entries))
    (folder / "train.log").write_text("".join(f"step {i} loss {2.0 - 0.01 * i:.3f}\n" for i in range(50)))


def _pair(tmp_path, kernel_is_right: bool):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w0, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((8, 16), (16, 32), (32, 4)))
    h0 = x @ w0
    f1 = h0 @ w1
    a1 = (0.5 * f1 * (1 + np.vectorize(math.erf)(f1 / math.sqrt(2)))).astype(np.float32)  # exact GELU
    k7 = a1 if kernel_is_right else np.maximum(f1, 0).astype(np.float32)
    _write(tmp_path / "base", [("fc0", "Linear", [x], [h0]), ("fc1", "Linear", [h0], [f1]), ("act1", "GELU", [f1], [a1]),
                               ("head", "Linear", [a1], [a1 @ w2])])
    _write(tmp_path / "run", [("fc0", "Linear", [x], [h0]), ("kernel_7", "CustomOp", [h0], [k7]),
                              ("head", "Linear", [k7], [k7 @ w2])])
    return advisor.diagnose(tmp_path / "run", baseline=tmp_path / "base")


def test_unnamed_fused_kernel_is_named_fusion_error(tmp_path):
    report = _pair(tmp_path, kernel_is_right=False)
    top = report.causes[0]
    assert top.id == "fusion_error" and top.confidence >= 0.5, [(c.id, c.confidence) for c in report.causes]
    (ev,) = [e for e in top.evidence if e.rule == "span-operator-is-the-source"]
    assert "fc1.forward -> act1.forward" in ev.text and "kernel_7.forward" in ev.text
    assert "operator_accuracy" not in {c.id for c in report.causes if c.confidence >= 0.5}


def test_correct_fused_kernel_raises_nothing(tmp_path):
    report = _pair(tmp_path, kernel_is_right=True)
    assert [c.id for c in report.causes if c.confidence >= 0.5] == []


def test_compare_html_draws_the_error_along_the_execution_order(tmp_path):
    """The comparison's HTML table shows the per-operator error along the execution order with the source
    operator marked (issue 27 item 6), drawn by the report's own plot code; the JSON table has no chart in it."""
    from advisor.cli import main

    _pair(tmp_path, kernel_is_right=False)
    assert main(["compare", str(tmp_path / "run" / "dump"), str(tmp_path / "base" / "dump"),
                 "-o", str(tmp_path / "c.html")]) == 1
    html = (tmp_path / "c.html").read_text()
    figure = html[html.index('id="plot-op_error"'):]
    figure = figure[: figure.index("</figure>")]
    assert "<svg" in figure and "source: kernel_7.forward" in figure and "<circle" in figure
    assert main(["compare", str(tmp_path / "run" / "dump"), str(tmp_path / "base" / "dump"),
                 "-o", str(tmp_path / "c.json")]) == 1
    assert "chart" not in json.loads((tmp_path / "c.json").read_text())
