"""MindSpore loss-scale prints on lines of their own join the loss-scale history at the step just logged.

The lines follow the prints of a loop over ``TrainOneStepWithLossScaleCell`` (it returns loss, overflow flag and
scale): the LossMonitor-style loss line, then ``overflow is True, loss scale is 32768.0`` on a line of its own.
"""

from __future__ import annotations

from advisor.extract.base import RunPair
from advisor.extract import crashes, loss_curve, loss_scale
from advisor.inventory import RunFolder



def extract(pair):
    """The log extractors together: curves, loss scale and overflows, crashes."""
    ex = loss_curve.extract(pair)
    ex.merge(loss_scale.extract(pair))
    ex.merge(crashes.extract(pair))
    return ex

def test_scale_lines_of_their_own_form_the_loss_scale_history(tmp_path):
    lines, scale = [], 65536.0
    for step in range(1, 41):
        lines.append(f"epoch: 1 step: {step}, loss is {2.3 - 0.01 * step:.4f}")
        if step % 5 == 0:
            scale /= 2
            lines.append(f"overflow is True, loss scale is {scale}")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    facts = extract(RunPair(RunFolder.scan(tmp_path))).facts
    trend = next(f for f in facts if f.kind == "loss_scale_trend")
    assert trend.points == 8 and trend.reductions == 7 and trend.final_value == 256.0
    assert next(f for f in facts if f.kind == "overflow_events").count == 8


def test_a_setting_line_without_a_step_is_still_not_a_record(tmp_path):
    (tmp_path / "train.log").write_text("loss scale is 1024\nepoch: 1 step: 1, loss is 2.3\nepoch: 1 step: 2, loss is 2.2\n")
    facts = extract(RunPair(RunFolder.scan(tmp_path))).facts
    assert not any(f.kind == "loss_scale_trend" for f in facts)  # printed before any step: not tied to one
