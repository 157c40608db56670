"""Several files of one run: merged per series, nothing counted twice."""

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

def _train_log(n: int) -> str:
    return "".join(f"step {i} loss {2.0 / (1 + 0.1 * i):.5f} lr 0.01\n" for i in range(n))


def test_train_from_log_eval_from_csv(tmp_path):
    (tmp_path / "train.log").write_text(_train_log(100))
    (tmp_path / "metrics.csv").write_text("step,val_loss\n" + "".join(f"{i},{1.5 - 0.001 * i}\n" for i in range(0, 100, 10)))
    ex = extract(RunPair(run=RunFolder.scan(tmp_path)))
    curves = {f.split: f for f in ex.facts if f.kind == "loss_curve"}
    assert curves["train"].points == 100 and curves["train"].source.path == "train.log"
    assert curves["eval"].points == 10 and curves["eval"].source.path == "metrics.csv"
    assert [f.kind for f in ex.facts].count("generalization_gap") == 1


def test_same_curve_in_two_files_is_counted_once(tmp_path):
    (tmp_path / "train.log").write_text(_train_log(100))
    (tmp_path / "stdout").write_text(_train_log(100))
    (tmp_path / "metrics.jsonl").write_text("".join(f'{{"epoch": {i}, "loss": {2.0 / (1 + i)}}}\n' for i in range(5)))
    ex = extract(RunPair(run=RunFolder.scan(tmp_path)))
    train = [f for f in ex.facts if f.kind == "loss_curve" and f.split == "train"]
    assert len(train) == 1 and train[0].points == 100 and train[0].x_unit == "step"
    notes = [c.note for c in ex.checks if c.note]
    assert any("also in" in n for n in notes)


def test_overflow_messages_of_two_ranks_are_not_summed(tmp_path):
    msg = ("[deepspeed] OVERFLOW! Rank {r} Skipping step. Attempted loss scale: {a}, reducing to {b}\n")
    for r in (0, 1):
        lines = [msg.format(r=r, a=2 ** (16 - k), b=2 ** (15 - k)) for k in range(3)]
        lines += [f"step:{i}, loss:{3.0 - i * 0.01}\n" for i in range(0, 100, 10)]
        (tmp_path / f"rank{r}.log").write_text("".join(lines))
    ex = extract(RunPair(run=RunFolder.scan(tmp_path)))
    over = [f for f in ex.facts if f.kind == "overflow_events"]
    assert len(over) == 1 and over[0].count == 3


def test_epoch_only_eval_is_put_on_the_steps_of_the_train_log(tmp_path):
    (tmp_path / "train.log").write_text("".join(f"epoch {i // 10} step {i} loss {2.0 / (1 + 0.1 * i):.5f}\n"
                                                for i in range(100)))
    (tmp_path / "training.log").write_text("epoch,val_loss\n" + "".join(f"{e},{1.5 - 0.1 * e}\n" for e in range(10)))
    ex = extract(RunPair(run=RunFolder.scan(tmp_path)))
    ev = next(f for f in ex.facts if f.kind == "loss_curve" and f.split == "eval")
    assert ev.x_unit == "step" and (ev.first_step, ev.last_step) == (9, 99)
    gap = next(f for f in ex.facts if f.kind == "generalization_gap")
    assert gap.train_drop_after_turn_ratio is not None


def test_a_console_log_saved_under_another_name_is_found_by_content(tmp_path):
    (tmp_path / "R50_log.py").write_text("".join(f"[d2.utils.events]:  iter: {i}  total_loss: {1.0 / (1 + i * 0.01):.4f}\n"
                                                 for i in range(19, 400, 20)))
    (tmp_path / "logger.py").write_text("import logging\nlog = logging.getLogger(__name__)\n")
    (tmp_path / "output").write_bytes(b"")
    ex = extract(RunPair(run=RunFolder.scan(tmp_path)))
    assert [(i.path, i.status) for i in ex.inputs] == [("R50_log.py", "used")]
    assert next(f for f in ex.facts if f.kind == "loss_curve").points == 20


def test_class_count_for_the_chance_level_from_the_training_labels(tmp_path):
    import numpy as np

    (tmp_path / "data").mkdir()
    np.savez(tmp_path / "data" / "train.npz", x=np.zeros((40, 3)), y=np.arange(40) % 4)
    rng = np.random.default_rng(0)
    (tmp_path / "train.log").write_text("".join(f"step {i} loss {np.log(4) + 0.002 * rng.standard_normal():.5f}\n"
                                                for i in range(200)))
    ex = extract(RunPair(run=RunFolder.scan(tmp_path)))
    curve = next(f for f in ex.facts if f.kind == "loss_curve")
    assert curve.class_count == 4 and "distinct labels" in curve.class_count_source
    assert curve.is_at_chance and abs(curve.chance_ratio - 1) < 0.01
