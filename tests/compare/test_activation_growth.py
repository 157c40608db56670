"""An operator that grows its activations a thousandfold (a Linear whose weights are 3000x too large) while staying
below float16's maximum: the first such operator of a real float16 torch dump is named as an overflow in waiting;
the same model at its normal scale, and the same growth in float32, are not."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from advisor.diagnosis import diagnose  # noqa: E402
from advisor.extract import extract_facts  # noqa: E402
from advisor.extract.base import RunPair  # noqa: E402
from advisor.inventory import RunFolder  # noqa: E402
from torch_models import take_dump  # noqa: E402  (tests/compare is on the path, as for the other dump tests)

RULE = "op-output-grows-by-orders-in-fp16"


def _run(folder: Path, scale: float, dtype) -> Path:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        model[2].weight.mul_(scale)
    model = model.to(dtype)
    take_dump(model, torch.randn(4, 8, dtype=dtype), folder / "dump")
    return folder


def _growth(folder: Path):
    facts = extract_facts(RunPair(run=RunFolder.open(str(folder), "run"))).facts
    return next((f for f in facts if f.kind == "op_anomaly" and f.anomaly == "grows_by_orders"), None)


def test_a_float16_linear_3000x_too_large_is_named(tmp_path: Path) -> None:
    run = _run(tmp_path / "big", 3000.0, torch.float16)
    g = _growth(run)
    assert g is not None and g.op == "2.forward" and g.dtype == "float16"
    assert g.growth_ratio >= 1000 and g.abs_max < 65504
    report = diagnose(run)
    assert RULE in {e.rule for c in report.causes + report.smells for e in c.evidence}


def test_the_model_at_its_scale_and_the_growth_in_float32_are_not(tmp_path: Path) -> None:
    assert _growth(_run(tmp_path / "plain", 1.0, torch.float16)) is None
    g = _growth(_run(tmp_path / "f32", 3000.0, torch.float32))
    assert g is not None and g.dtype == "float32"  # the fact is there, the float16 rule is not
    report = diagnose(tmp_path / "f32")
    assert RULE not in {e.rule for c in report.causes + report.smells for e in c.evidence}
