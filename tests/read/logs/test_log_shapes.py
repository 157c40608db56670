"""Log shapes that real runs write (issue #11.3).

Two kinds of material:

- ``samples/*.log``: console output of tiny runs of the real libraries (Keras 3 on torch, transformers'
  Trainer, Lightning with its rich and tqdm bars, MindSpore's LossMonitor), made by ``samples/generate.py``;
  the values differ from run to run, so these tests check counts, positions and splits.
- logs of tools that do not install here (detectron2, mmdetection, YOLOv5, Caffe, Megatron-LM,
  PaddleDetection 1.x, fairseq), written below with the format strings of the tools' own logging code
  (quoted in each helper), so that the layout is the tool's and the numbers are known.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from advisor.extract.base import RunPair
from advisor.extract.curves import CurveThresholds
from advisor.extract import crashes
from advisor.extract.view.curves import curve_xy, primary_loss
from advisor.extract.loss_curve import extract
from advisor.inventory import RunFolder
from advisor.read.logs import read_file
from advisor.read.logs.merge import merge_reads

SAMPLES = Path(__file__).parent / "samples"


def _read_sample(name: str):
    read = read_file(SAMPLES / name, name)
    assert read.problem is None
    return read


def _read_text(tmp_path, text: str, name: str = "train.log"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return read_file(p, name)


def _xy(series):
    x, y, _, unit, _ = curve_xy(series)
    return [float(v) for v in x], [float(v) for v in y], unit


def _facts(tmp_path, text: str, name: str = "train.log"):
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    (run / name).write_text(text, encoding="utf-8")
    pair = RunPair(run=RunFolder.scan(run, "run"))
    return extract(pair).facts + crashes.extract(pair).facts  # the curves, and the exceptions the log shows


# -- produced by the real libraries ----------------------------------------------------------------
def test_keras3_fit_losses_at_each_count_the_bar_shows_and_the_test_line_apart():
    read = _read_sample("keras_fit.log")            # fit(epochs=4, validation_split=.25) + print("Test loss:", ...)
    assert "keras" in read.formats
    merged = merge_reads([read])
    x, y, unit = _xy(primary_loss(merged, "train"))
    # the bar's updates at counts 1, 8 and 12 of epoch 1 (12 steps an epoch), ...: the run's step at each
    assert unit == "step" and x == [1.0, 8.0, 12.0, 13.0, 21.0, 24.0, 25.0, 31.0, 36.0, 37.0, 48.0]
    assert y[:3] == [0.7918, 0.7997, 0.7463] and all(math.isfinite(v) for v in y)  # the running means as printed
    ex, _, _ = _xy(primary_loss(merged, "eval"))
    assert ex == [12.0, 24.0, 36.0, 48.0]                   # the final "Test loss:" is not a fifth eval epoch
    assert read.series["test/loss"].buf.count == 1 and read.series["test/accuracy"].buf.count == 1
    assert read.series["train/accuracy"].buf.count == 4


def test_keras3_fit_called_once_an_epoch_one_point_a_call():
    # three fit(epochs=1) calls: no "Epoch i/n" header, and Keras 3 writes each bar's final update twice
    read = _read_sample("keras_fit_one_epoch_calls.log")
    _, y, _ = _xy(read.series["train/loss"])
    assert y == [1.0946, 0.9738, 0.8697]
    assert read.series["train/accuracy"].buf.count == 3


def test_keras3_progress_bar_states_the_steps_per_epoch(tmp_path):
    read = _read_sample("keras_fit.log")  # 12/12 in every epoch's bar; the evaluate bar after fit is not counted
    assert read.steps_per_epoch == 12 and merge_reads([read]).steps_per_epoch == 12
    facts = _facts(tmp_path, (SAMPLES / "keras_fit.log").read_text(encoding="utf-8"))
    curves = {f.split: f for f in facts if f.kind == "loss_curve"}
    assert curves["train"].x_unit == "step" and curves["train"].updates == 4 * 12
    assert curves["eval"].updates == 4 * 12


def test_keras3_nan_loss_from_the_first_epoch():
    read = _read_sample("keras_fit_nan.log")        # SGD(1.0) on a regression: the loss overflows in epoch 1
    s = read.series["train/loss"]
    assert s.buf.count == 7 and s.buf.first_nonfinite[:2] == (10.0, 1.0)  # at count 10 of epoch 1's bar
    assert read.series["eval/loss"].buf.nonfinite == 3 and read.series["test/loss"].buf.count == 1


def test_keras_progress_counter_past_the_total():
    read = _read_sample("keras_progbar_past_total.log")  # keras.utils.Progbar(target=51) updated to 52
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and len(x) == 4 and x[1] < x[2]      # counts 1 and 52 of each epoch, in step order
    assert [y[1], y[3]] == pytest.approx([1.0 / (52 + 52), 1.0 / (2 * 52 + 52)], abs=5e-5)  # the 52/51 line's value


def test_transformers_console_quoted_values_and_fractional_epochs():
    read = _read_sample("hf_trainer_console.log")   # Trainer(logging_steps=2, eval each epoch), 6 steps/epoch
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "epoch" and len(x) == 6 and all(0.6 < v < 0.8 for v in y)     # ~ln 2: two labels
    assert x[0] == pytest.approx(1 / 3, abs=1e-3) and x[1] == pytest.approx(2 / 3, abs=1e-3) and x[-1] == 2.0
    ex, _, _ = _xy(read.series["eval/loss"])
    assert ex == [1.0, 2.0]
    assert read.series["train/lr"].buf.count == 6


def test_lightning_tqdm_bar_one_point_per_batch_on_global_steps():
    read = _read_sample("lightning_tqdm.log")       # 3 epochs x 10 batches, train_loss and val_loss on the bar
    x, _, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [float(i) for i in range(1, 31)]
    ex, _, _ = _xy(read.series["eval/loss"])
    assert ex == [10.0, 20.0, 30.0]                 # val_loss once per validation, not on every bar update


def test_lightning_rich_bar_wrapped_metrics_line_joins_its_point():
    read = _read_sample("lightning_progress.log")   # rich bar, not a terminal: only its end state, metrics wrapped
    assert _xy(read.series["train/loss"])[:2] == ([30.0], [0.056])    # epoch 2 (from 0) x 10 batches + 10
    assert _xy(read.series["eval/loss"])[:2] == ([30.0], [0.036])


def test_lightning_rich_bar_recorded_from_a_terminal():
    read = _read_sample("lightning_rich_terminal.log")   # the live bar: redraws at intervals, cursor codes
    x, _, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == sorted(x) and x[-1] == 30.0 and len(x) == len(set(x))
    assert _xy(read.series["eval/loss"])[:2] == ([10.0, 20.0, 30.0], [0.778, 0.162, 0.036])


@pytest.mark.skipif(not (SAMPLES / "mindspore_lossmonitor.log").is_file(), reason="sample not generated")
def test_mindspore_loss_monitor_and_a_traceback_the_run_survived(tmp_path):
    read = _read_sample("mindspore_lossmonitor.log")  # LossMonitor(2), 3 epochs x 8 steps, NumPy 2 import warning
    x, _, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [float(i) for i in range(2, 25, 2)]
    assert read.event_counts.get("traceback") == 1 and read.events[0].followed_by_points
    facts = _facts(tmp_path, (SAMPLES / "mindspore_lossmonitor.log").read_text())
    assert not [f for f in facts if f.kind == "training_crash"]     # the import warning's traceback: no crash


# -- written with the tools' own format strings ----------------------------------------------------
def detectron2_lines(losses: list[float], crash_at: int | None = None) -> str:
    """detectron2 ``CommonMetricPrinter.write``: `` {eta}iter: {iter}  {losses}  {time}{data_time}lr: {lr}  {memory}``
    (logged every 20 iterations from iter 19), and ``SimpleTrainer._write_metrics`` raising
    ``FloatingPointError(f"Loss became infinite or NaN at iteration={iter}!\\nloss_dict = {metrics_dict}")``."""
    out = []
    for k, v in enumerate(losses):
        it = 19 + 20 * k
        out.append(f"[12/01 10:{k:02d}:00 d2.utils.events]:  eta: 0:10:00  iter: {it}  total_loss: {v:.4g}  "
                   f"loss_cls: {v * 0.4:.4g}  loss_box_reg: {v * 0.6:.4g}  time: 0.4421  data_time: 0.0213  "
                   f"lr: 0.00039962  max_mem: 2725M\n")
    if crash_at is not None:
        out.append("Traceback (most recent call last):\n"
                   '  File "tools/train_net.py", line 161, in <module>\n'
                   "    launch(\n"
                   f"FloatingPointError: Loss became infinite or NaN at iteration={crash_at}!\n"
                   "loss_dict = {'loss_cls': tensor(nan, device='cuda:0', grad_fn=<NllLossBackward0>), "
                   "'loss_box_reg': tensor(0.5123, device='cuda:0', grad_fn=<DivBackward0>)}\n")
    return "".join(out)


def test_detectron2_crash_dict_and_floating_point_error(tmp_path):
    read = _read_text(tmp_path, detectron2_lines([2.1, 1.8, 1.6, 1.5], crash_at=87))
    assert read.series["train/total_loss"].buf.count == 4
    assert read.series["train/loss_cls"].buf.nonfinite == 0           # the crash's dict is not a logged point
    assert read.event_counts == {"traceback": 1, "nonfinite_message": 1}   # the dict is the exception's 2nd line
    facts = _facts(tmp_path, detectron2_lines([2.1, 1.8, 1.6, 1.5], crash_at=87))
    curve = next(f for f in facts if f.kind == "loss_curve" and f.split == "train")
    assert curve.diverged and curve.first_nonfinite_step == 87
    crash = next(f for f in facts if f.kind == "training_crash")
    assert crash.is_nonfinite and "iteration=87" in crash.exception


def mmdet_lines(epochs: int, iters: int, every: int) -> str:
    """mmdet 2.x ``TextLoggerHook``: ``Epoch [{epoch}][{iter}/{len}]\\tlr: {lr:.3e}, eta: ..., time: ..., ...,
    {name}: {value:.4f}, ...`` and after each epoch ``Epoch(val) [{epoch}][{len}]\\tbbox_mAP: ...``."""
    out = []
    for e in range(1, epochs + 1):
        for i in range(every, iters + 1, every):
            g = (e - 1) * iters + i
            loss = 2.0 / (1 + g / 100)
            out.append(f"2026-12-01 10:00:00,000 - mmdet - INFO - Epoch [{e}][{i}/{iters}]\tlr: 2.000e-02, "
                       f"eta: 1:00:00, time: 0.512, data_time: 0.050, memory: 3000, loss_rpn_cls: {loss * .2:.4f}, "
                       f"loss_rpn_bbox: {loss * .1:.4f}, loss_cls: {loss * .5:.4f}, acc: 85.1000, "
                       f"loss_bbox: {loss * .2:.4f}, loss: {loss:.4f}, grad_norm: 8.1234\n")
        out.append(f"2026-12-01 10:00:00,000 - mmdet - INFO - Epoch(val) [{e}][625]\tbbox_mAP: {0.2 + e / 100:.4f}, "
                   "bbox_mAP_50: 0.4000, bbox_mAP_copypaste: 0.300 0.400 0.300 0.100 0.300 0.400\n")
    return "".join(out)


def test_mmdetection_iteration_lines_on_global_steps(tmp_path):
    read = _read_text(tmp_path, mmdet_lines(epochs=2, iters=500, every=50))
    x, _, unit = _xy(primary_loss(merge_reads([read]), "train"))
    assert unit == "step" and x[:2] == [50.0, 100.0] and x[10] == 550.0 and len(x) == 20
    assert read.series["train/loss"].raw_key == "loss"


def yolov5_epoch(epoch: int, epochs: int, batches: int, box: float) -> str:
    """YOLOv5 6.x ``train.py``: ``('\\n' + '%11s' * 7) % ('Epoch', 'GPU_mem', 'box_loss', 'obj_loss', 'cls_loss',
    'Instances', 'Size')`` before each epoch, then the tqdm bar's description
    ``('%11s' * 2 + '%11.4g' * 5) % (f'{epoch}/{epochs - 1}', mem, *mloss, targets.shape[0], imgs.shape[-1])``
    once per batch (carriage returns), then ``val.py``'s ``'%22s' + '%11s' * 6`` header and ``'%22s' + '%11i' * 2
    + '%11.3g' * 4`` row for ``all``."""
    head = ("\n" + "%11s" * 7) % ("Epoch", "GPU_mem", "box_loss", "obj_loss", "cls_loss", "Instances", "Size")
    rows = []
    for b in range(1, batches + 1):
        mloss = (box + 0.01 / b, 0.05, 0.02)
        desc = ("%11s" * 2 + "%11.4g" * 5) % (f"{epoch}/{epochs - 1}", "3.53G", *mloss, 36, 640)
        rows.append(f"{desc}: {b * 100 // batches:3d}%|##########| {b}/{batches} [00:05<00:00,  1.93it/s]")
    val_head = ("%22s" + "%11s" * 6) % ("Class", "Images", "Instances", "P", "R", "mAP50", "mAP50-95")
    val_row = ("%22s" + "%11i" * 2 + "%11.3g" * 4) % ("all", 128, 929, 0.577, 0.525, 0.5 + epoch / 100, 0.363)
    return head + "\n" + "\r".join(rows) + "\n" + val_head + ": 100%|##########| 4/4 [00:01<00:00,  2.51it/s]\n" \
        + val_row + "\n"


def test_yolov5_table_one_point_per_epoch_and_the_sum_of_its_losses(tmp_path):
    text = "".join(yolov5_epoch(e, 3, 5, box=0.1 - e / 100) for e in range(3))
    read = _read_text(tmp_path, text)
    assert "table" in read.formats
    x, y, unit = _xy(read.series["train/box_loss"])
    assert (unit, x) == ("epoch", [0.0, 1.0, 2.0])             # the last of the epoch's bar updates
    assert y == pytest.approx([0.1 + 0.002, 0.09 + 0.002, 0.08 + 0.002], abs=1e-4)
    merged = merge_reads([read])
    total = primary_loss(merged, "train")
    assert total.name == "train/loss_sum" and total.raw_key == "box_loss + obj_loss + cls_loss"
    assert _xy(total)[1] == pytest.approx([0.172, 0.162, 0.152], abs=1e-4)
    assert _xy(read.series["eval/map50"])[:2] == ([0.0, 1.0, 2.0], pytest.approx([0.5, 0.51, 0.52]))


def test_yolov5_5x_header_names_total(tmp_path):
    # YOLOv5 5.x: ('\n' + '%10s' * 8) % ('Epoch', 'gpu_mem', 'box', 'obj', 'cls', 'total', 'labels', 'img_size')
    head = ("%10s" * 8) % ("Epoch", "gpu_mem", "box", "obj", "cls", "total", "labels", "img_size")
    rows = [("%10s" * 2 + "%10.4g" * 6) % (f"{e}/2", "3.5G", 0.1, 0.05, 0.02, 0.17 - e / 100, 36, 640) for e in range(3)]
    read = _read_text(tmp_path, "\n".join(f"{head}\n{r}" for r in rows) + "\n")
    total = primary_loss(merge_reads([read]), "train")
    assert total.raw_key == "total_loss" and _xy(total)[1] == pytest.approx([0.17, 0.16, 0.15])


def test_bare_step_loss_table(tmp_path):
    text = "step loss lr\n" + "".join(f"{s} {3.0 / (1 + s / 100):.4f} 0.001\n" for s in range(0, 1000, 100))
    text += "training done\n100 200 300\n"           # numbers after the table has ended are not rows
    read = _read_text(tmp_path, text)
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [float(s) for s in range(0, 1000, 100)] and y[0] == 3.0


def caffe_lines(iters: list[int], test_every: int) -> str:
    """Caffe ``Solver::Step`` / ``SGDSolver::ApplyUpdate`` / ``Solver::Test`` glog lines:
    ``Iteration {iter} ({rate} iter/s, {lapse}s/{display} iters), loss = {smoothed_loss}``, one
    ``    Train net output #{k}: {name} = {value} (* {weight} = {weighted} loss)`` per output,
    ``Iteration {iter}, lr = {rate}``; ``Iteration {iter}, Testing net (#0)`` then ``    Test net output #{k}: ...``."""
    out = []
    for it in iters:
        if it % test_every == 0:
            out.append(f"I1201 10:00:00.000000  1234 solver.cpp:330] Iteration {it}, Testing net (#0)\n")
            out.append(f"I1201 10:00:01.000000  1234 solver.cpp:397]     Test net output #0: accuracy = {0.5 + it / 10000}\n")
            out.append(f"I1201 10:00:01.000000  1234 solver.cpp:397]     Test net output #1: loss = {2.0 - it / 1000} "
                       f"(* 1 = {2.0 - it / 1000} loss)\n")
        loss = 2.3 / (1 + it / 100)
        out.append(f"I1201 10:00:02.000000  1234 solver.cpp:218] Iteration {it} (12.3 iter/s, 8.1s/100 iters), "
                   f"loss = {loss:.6g}\n")
        out.append(f"I1201 10:00:02.000000  1234 solver.cpp:237]     Train net output #0: loss = {loss * 1.01:.6g} "
                   f"(* 1 = {loss * 1.01:.6g} loss)\n")
        out.append(f"I1201 10:00:02.000000  1234 sgd_solver.cpp:105] Iteration {it}, lr = 0.01\n")
    return "".join(out)


def test_caffe_one_point_per_iteration(tmp_path):
    read = _read_text(tmp_path, caffe_lines(list(range(0, 1000, 100)), test_every=500))
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [float(i) for i in range(0, 1000, 100)] and y[0] == 2.3   # not two per iteration
    assert _xy(read.series["eval/accuracy"])[0] == [0.0, 500.0]
    assert _xy(read.series["eval/loss"])[:2] == ([0.0, 500.0], [2.0, 1.5])
    assert _xy(read.series["train/lr"])[0][:2] == [0.0, 100.0] and "caffe" in read.formats


def megatron_lines(first: int, last: int, every: int, total: int) -> str:
    """Megatron-LM ``training_log``: `` iteration {it:8d}/{train_iters:8d} |`` then `` {key}: {value} |`` fields:
    ``consumed samples``, ``learning rate`` ({:.3E}), ``global batch size``, ``lm loss`` ({:.6E}),
    ``loss scale``, ``grad norm``, ``number of skipped iterations``, ``number of nan iterations``."""
    out = []
    for it in range(first, last + 1, every):
        out.append(f" iteration {it:8d}/{total:8d} | consumed samples: {it * 512:12d} | elapsed time per iteration "
                   f"(ms): 512.3 | learning rate: {1.5e-4:.3E} | global batch size:   512 | lm loss: {3.2:.6E} | "
                   f"loss scale: 65536.0 | grad norm: 0.812 | number of skipped iterations:   0 | "
                   f"number of nan iterations:   0 |\n")
    return "".join(out)


def test_megatron_excerpt_is_a_window_not_a_flat_start(tmp_path):
    # an excerpt from iteration 12000 on, where the loss has settled at 3.2: not "never learned"
    facts = _facts(tmp_path, megatron_lines(12000, 14000, 100, 50000))
    curve = next(f for f in facts if f.kind == "loss_curve" and f.split == "train")
    assert curve.metric_name == "lm_loss" and curve.first_step == 12000 and curve.points == 21
    assert curve.is_window and curve.drop_ratio is None and not curve.is_stagnant
    # the same numbers from iteration 0 are the start of training: a flat curve there is measured
    start = next(f for f in _facts(tmp_path, megatron_lines(0, 2000, 100, 50000))
                 if f.kind == "loss_curve" and f.split == "train")
    assert not start.is_window and start.drop_ratio == pytest.approx(0.0)


def test_window_rule_on_counters_from_one_and_logging_intervals():
    th = CurveThresholds()
    from advisor.extract.loss_curve import is_window

    assert not is_window(np.array([1.0, 2.0, 3.0]), "epoch")
    assert not is_window(np.array([19.0, 39.0, 59.0]), "step")      # detectron2: iter 19, 39, ...
    assert not is_window(np.array([500.0, 1000.0]), "step")         # HF logging_steps=500
    assert is_window(np.array([148.0, 149.0, 150.0]), "epoch")
    assert not is_window(np.array([5000.0, 6000.0]), "index")
    assert th is not None


def test_paddledetection_quoted_values(tmp_path):
    # PaddleDetection 1.x tools/train.py: 'iter: {}, lr: {:.6f}, {}, time: {:.3f}, eta: {}' with
    # TrainingStats.log(): ', '.join(str(dict({x: y})).strip('{}') ...) of '{:.6f}'-formatted strings
    lines = "".join(f"2026-12-01 10:00:00,000-INFO: iter: {it}, lr: 0.010000, 'loss_cls': '{0.5 / (1 + it / 100):.6f}', "
                    f"'loss_bbox': '0.100000', 'loss': '{0.6 / (1 + it / 100):.6f}', time: 0.512, eta: 1:00:00\n"
                    for it in range(0, 100, 20))
    read = _read_text(tmp_path, lines)
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [0.0, 20.0, 40.0, 60.0, 80.0] and y[0] == 0.6
    assert read.series["train/loss_cls"].buf.count == 5 and read.series["train/lr"].buf.count == 5


def test_fairseq_train_inner_lines(tmp_path):
    # fairseq progress_bar.JsonProgressBar/SimpleProgressBar: "epoch 001:    100 / 1000 loss=9.123, ..., num_updates=100"
    lines = "".join(f"2026-12-01 10:00:00 | INFO | train_inner | epoch 001:    {u} / 1000 loss={10 - u / 100:.3f}, "
                    f"nll_loss=8.456, ppl=351.2, wps=12345.6, ups=3.2, wpb=3840, bsz=128, num_updates={u}, "
                    f"lr=1.25e-05, gnorm=2.345, loss_scale=128, train_wall=31, gb_free=10.1, wall=35\n"
                    for u in range(100, 600, 100))
    read = _read_text(tmp_path, lines)
    x, y, unit = _xy(primary_loss(merge_reads([read]), "train"))
    assert unit == "step" and x == [100.0, 200.0, 300.0, 400.0, 500.0] and y[0] == 9.0


def test_epoch_step_brackets_give_the_global_step(tmp_path):
    # print('Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'.format(epoch + 1, num_epochs, i + 1, total_step, loss.item()))
    read = _read_text(tmp_path, "Epoch [7/30], Step [200/391], Loss: 0.4312\nEpoch [7/30], Step [300/391], Loss: 0.4012\n"
                                "Epoch [8/30], Step [100/391], Loss: 0.3912\n")
    assert _xy(read.series["train/loss"])[0] == [6 * 391 + 200.0, 6 * 391 + 300.0, 7 * 391 + 100.0]


def test_an_iteration_counter_logged_at_an_interval_restarts_each_epoch(tmp_path):
    # every 5th global step, counted inside the epoch: epoch 2 starts at iter 2, above epoch 1's first (1)
    lines = [f"[epoch 1][iter {i}/43] loss: {2.0 - i / 50:.4f}" for i in (1, 5, 10, 15, 20, 25, 30, 35, 40)]
    lines += [f"[epoch 2][iter {i}/43] loss: {1.0 - i / 100:.4f}" for i in (2, 7, 12)]
    x = _xy(_read_text(tmp_path, "\n".join(lines) + "\n").series["train/loss"])[0]
    assert x == sorted(x) and len(set(x)) == len(x)          # one training run, not a restart at epoch 2
    assert x[-3:] == [40 + 2.0, 40 + 7.0, 40 + 12.0]


@pytest.mark.parametrize("line, series", [
    ("epoch 3 step 300 cost 1.25", "train/cost"),
    ("epoch 3 step 300 IDLoss: 1.25", "train/idloss"),
    ("epoch 3 step 300 giou_loss: 1.25", "train/giou_loss"),
    ("epoch 3 step 300 train_cost: 1.25", "train/cost"),
])
def test_other_loss_names(tmp_path, line, series):
    read = _read_text(tmp_path, line + "\n")
    assert _xy(read.series[series])[:2] == ([300.0], [1.25])


def test_component_losses_summed_only_without_a_total(tmp_path):
    read = _read_text(tmp_path, "".join(f"step {s} loss_cls: 0.5 loss_bbox: 0.25 giou_loss: 0.125\n" for s in (1, 2)))
    total = primary_loss(merge_reads([read]), "train")
    assert total.name == "train/loss_sum" and _xy(total)[1] == [0.875, 0.875]
    read = _read_text(tmp_path, "".join(f"step {s} loss_cls: 0.5 loss_bbox: 0.25 total_loss: 0.75\n" for s in (1, 2)))
    assert primary_loss(merge_reads([read]), "train").raw_key == "total_loss"


def test_nan_only_in_validation_lines(tmp_path):
    text = "".join(f"epoch {e} step {e * 100} loss {1.0 / e:.3f}\n" for e in range(1, 5))
    text += "epoch 2 total_val_loss: nan\nepoch 3 total_val_loss: nan\n"
    read = _read_text(tmp_path, text)
    assert read.series["train/loss"].buf.nonfinite == 0
    assert read.series["eval/total_loss"].buf.nonfinite == 2
    facts = _facts(tmp_path, text.replace("total_val_loss: nan", "eval_loss = nan"))
    ev = next(f for f in facts if f.kind == "loss_curve" and f.split == "eval")
    tr = next(f for f in facts if f.kind == "loss_curve" and f.split == "train")
    assert ev.nonfinite_count == 2 and not tr.diverged


def test_tensor_nan_repr_and_minimum_loss_scale_without_traceback(tmp_path):
    text = ("step 1 loss tensor(2.3012, device='cuda:0', grad_fn=<NllLossBackward0>)\n"
            "step 2 loss tensor(nan, device='cuda:0', grad_fn=<NllLossBackward0>)\n"
            "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. "
            "Try lowering the learning rate, using gradient clipping or increasing the batch size.\n")
    read = _read_text(tmp_path, text)
    assert _xy(read.series["train/loss"])[0] == [1.0, 2.0] and read.series["train/loss"].buf.first_nonfinite[0] == 2.0
    assert read.event_counts == {"traceback": 1, "nonfinite_message": 1}


def test_ultralytics8_table_and_box_validation_header(tmp_path):
    # ultralytics 8 DetectionTrainer.progress_string: ("\n" + "%11s" * (4 + len(loss_names))) % ("Epoch", "GPU_mem",
    # *loss_names, "Instances", "Size"); DetectionValidator.get_desc: ("%22s" + "%11s" * 6) % ("Class", "Images",
    # "Instances", "Box(P", "R", "mAP50", "mAP50-95)")
    text = ""
    for e in range(1, 4):
        text += ("\n" + "%11s" * 7) % ("Epoch", "GPU_mem", "box_loss", "cls_loss", "dfl_loss", "Instances", "Size") + "\n"
        text += ("%11s" * 2 + "%11.4g" * 5) % (f"{e}/3", "2.61G", 1.3 - e / 10, 1.6, 1.2, 217, 640) \
            + ": 100%|##########| 8/8 [00:02<00:00,  3.21it/s]\n"
        text += ("%22s" + "%11s" * 6) % ("Class", "Images", "Instances", "Box(P", "R", "mAP50", "mAP50-95)") \
            + ": 100%|##########| 1/1 [00:00<00:00,  4.10it/s]\n"
        text += ("%22s" + "%11i" * 2 + "%11.3g" * 4) % ("all", 4, 17, 0.5, 0.6, 0.5 + e / 100, 0.3) + "\n"
    read = _read_text(tmp_path, text)
    assert _xy(read.series["train/box_loss"])[:2] == ([1.0, 2.0, 3.0], pytest.approx([1.2, 1.1, 1.0]))
    assert _xy(read.series["eval/map50"])[:2] == ([1.0, 2.0, 3.0], pytest.approx([0.51, 0.52, 0.53]))
    assert primary_loss(merge_reads([read]), "train").name == "train/loss_sum"


def test_an_exception_line_outside_a_traceback_is_a_crash_only_when_it_says_non_finite(tmp_path):
    read = _read_text(tmp_path, "step 1 loss 0.5\nConnectionError: info server unreachable, retrying\nstep 2 loss 0.4\n")
    assert read.event_counts == {}


def test_keras_update_past_the_total_after_a_warning_stays_in_its_epoch(tmp_path):
    text = ("Epoch 1/2\n51/51 [==============================] - 1s 2ms/step - loss: 0.5000\n"
            "WARNING:tensorflow:Your input ran out of data\n"
            "52/51 [==============================] - 1s 2ms/step - loss: 0.4000\n"
            "Epoch 2/2\n51/51 [==============================] - 1s 2ms/step - loss: 0.3000\n"
            " 1/4 [======>.......................] - ETA: 0s - loss: 0.2900\n"
            "4/4 [==============================] - 0s 1ms/step - loss: 0.2800\n")
    read = _read_text(tmp_path, text)
    assert _xy(read.series["train/loss"])[:2] == ([1.0, 2.0], [0.4, 0.3])
    assert _xy(read.series["test/loss"])[1] == [0.28]                  # model.evaluate's bar


def test_paddledetection2_log_printer(tmp_path):
    # ppdet/engine/callbacks.py LogPrinter: ' '.join(['Epoch: [{}]', '[{:>3}/{}]', 'learning_rate: {lr:.6f}',
    # '{meters}', 'eta: {eta}', 'batch_cost: {btime}', 'data_cost: {dtime}', 'ips: {ips:.4f} images/s']);
    # meters: '{}: {:.6f}' per loss, space-separated; epochs count from 0
    lines = "".join(f"[12/01 10:00:00] ppdet.engine INFO: Epoch: [{e}] [{i:>3}/100] learning_rate: 0.000100 "
                    f"loss_xy: 2.176380 loss_cls: 0.237628 loss: {4.0 - e - i / 100:.6f} eta: 0:54:58 "
                    f"batch_cost: 2.0509 data_cost: 1.7642 ips: 3.9007 images/s\n"
                    for e in range(2) for i in range(0, 100, 20))
    read = _read_text(tmp_path, lines)
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x[:2] == [0.0, 20.0] and x[5] == 100.0 and len(x) == 10 and y[5] == 3.0


def mxnet_lines(epochs: int, batches: int, every: int) -> str:
    """MXNet 1.x ``Speedometer``: ``'Epoch[%d] Batch [%d-%d]\\tSpeed: %.2f samples/sec' + '\\t%s=%f' * n`` and
    ``Module.fit``: ``'Epoch[%d] Train-%s=%f'``, ``'Epoch[%d] Time cost=%.3f'``, ``'Epoch[%d] Validation-%s=%f'``
    (through ``logging.info`` of the root logger: ``INFO:root:``)."""
    out = []
    for e in range(epochs):
        for b in range(every, batches + 1, every):
            ce = 2.3 / (1 + (e * batches + b) / 100)
            out.append(f"INFO:root:Epoch[{e}] Batch [{b - every}-{b}]\tSpeed: 1234.56 samples/sec\t"
                       f"accuracy={0.5 + e / 10:f}\tcross-entropy={ce:f}\n")
        out.append(f"INFO:root:Epoch[{e}] Train-accuracy={0.55 + e / 10:f}\n")
        out.append(f"INFO:root:Epoch[{e}] Train-cross-entropy={1.5 - e / 10:f}\n")
        out.append(f"INFO:root:Epoch[{e}] Time cost=12.345\n")
        out.append(f"INFO:root:Epoch[{e}] Validation-accuracy={0.6 + e / 10:f}\n")
        out.append(f"INFO:root:Epoch[{e}] Validation-cross-entropy={1.4 - e / 10:f}\n")
    return "".join(out)


def test_mxnet_speedometer_and_epoch_summaries(tmp_path):
    read = _read_text(tmp_path, mxnet_lines(epochs=3, batches=300, every=100))
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0]
    assert y[0] == pytest.approx(2.3 / 2)
    assert _xy(read.series["train/loss@epoch"])[:2] == ([0.0, 1.0, 2.0], pytest.approx([1.5, 1.4, 1.3]))
    assert _xy(read.series["eval/loss"])[1] == pytest.approx([1.4, 1.3, 1.2])
    assert _xy(read.series["eval/accuracy"])[1] == pytest.approx([0.6, 0.7, 0.8])
    assert primary_loss(merge_reads([read]), "train").name == "train/loss"


def test_deepspeed_minimum_loss_scale_exception(tmp_path):
    # deepspeed/runtime/fp16/loss_scaler.py DynamicLossScaler.update_scale: raise Exception("Current loss scale
    # already at minimum - cannot decrease scale anymore. Exiting run.")
    text = ("step 1 loss 2.31\nstep 2 loss 2.25\nTraceback (most recent call last):\n"
            '  File "train.py", line 88, in <module>\n    engine.step()\n'
            "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.\n")
    read = _read_text(tmp_path, text)
    assert read.event_counts == {"traceback": 1, "nonfinite_message": 1}
    assert read.events[-1].step == 2.0 and not read.events[0].followed_by_points


def test_pytorch_examples_mnist_loop(tmp_path):
    # pytorch/examples mnist/main.py: 'Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}' every log_interval batches
    # and '\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n' after each epoch
    text = ""
    for e in (1, 2):
        for b in range(0, 938, 300):
            text += f"Train Epoch: {e} [{b * 64}/60000 ({100. * b / 938:.0f}%)]\tLoss: {2.3 / (e + b / 938):.6f}\n"
        text += f"\nTest set: Average loss: {0.1 / e:.4f}, Accuracy: {9800 + e * 10}/10000 ({98 + e / 10:.0f}%)\n\n"
    read = _read_text(tmp_path, text)
    x, _, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x[:2] == [0.0, 19200.0] and x[4] == 60000.0 and len(x) == 8
    assert _xy(read.series["eval/loss"])[:2] == ([1.0, 2.0], [0.1, 0.05])
    assert _xy(read.series["eval/accuracy"])[1] == [0.981, 0.982]


def test_pandas_frame_of_keras_history(tmp_path):
    # print(pd.DataFrame(history.history)) with display.max_rows=10: the index right-aligned first, the columns
    # right-aligned under their names, '...' rows for the rows left out, then '[20 rows x 4 columns]'
    text = ("        loss  accuracy  val_loss  val_accuracy\n"
            "0   0.690000  0.500000  0.680000      0.550000\n"
            "1   0.500000  0.700000  0.550000      0.660000\n"
            "2   0.400000  0.800000  0.500000      0.700000\n"
            "..       ...       ...       ...           ...\n"
            "18  0.400000  0.800000  0.500000      0.700000\n"
            "19  0.350000  0.850000  0.520000      0.690000\n"
            "\n[20 rows x 4 columns]\n")
    read = _read_text(tmp_path, text)
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "epoch" and x == [0.0, 1.0, 2.0, 18.0, 19.0] and y[:2] == [0.69, 0.5]
    assert _xy(read.series["eval/accuracy"])[1][-1] == 0.69


def test_hf_notebook_table_copied_as_text(tmp_path):
    # transformers.utils.notebook.NotebookProgressCallback: columns "Step" (or "Epoch"), "Training Loss",
    # "Validation Loss", then each eval metric as " ".join(part.capitalize() ...) of its name without "eval_";
    # "No log" where no training loss was logged yet; a rendered HTML table copies as tab-separated text
    text = ("Step\tTraining Loss\tValidation Loss\tAccuracy\n"
            "50\tNo log\t0.690000\t0.550000\n"
            "100\t0.654300\t0.640000\t0.620000\n"
            "150\t0.601200\t0.611000\t0.650000\n")
    read = _read_text(tmp_path, text)
    assert _xy(read.series["train/loss"])[:2] == ([100.0, 150.0], [0.6543, 0.6012])
    assert _xy(read.series["eval/loss"])[:2] == ([50.0, 100.0, 150.0], [0.69, 0.64, 0.611])
    assert _xy(read.series["eval/accuracy"])[:2] == ([50.0, 100.0, 150.0], [0.55, 0.62, 0.65])


def timm_lines(epochs: int, updates: int, every: int) -> str:
    """timm train.py ``train_one_epoch`` / ``validate`` log lines (format strings quoted in advisor.read.logs.timm)."""
    out = []
    for e in range(epochs):
        for u in [*range(0, updates, every), updates - 1]:
            loss = 6.9 / (1 + (e * updates + u) / 100)
            out.append(f"Train: {e} [{u:>4d}/{updates} ({100. * (u + 1) / updates:>3.0f}%)]  Loss: {loss:#.3g} "
                       f"({loss * 1.1:#.3g})  Time: 0.512s,  500.00/s  (0.520s,  492.31/s)  LR: {1e-3:.3e}  "
                       f"Data: 0.011 (0.012)\n")
        for b in (0, 50, 97):
            out.append(f"Test: [{b:>4d}/97]  Time: 0.101 (0.105)  Loss: {0.9:>7.3f} ({1.0 - e / 10:>6.3f})  "
                       f"Acc@1: {80.0:>7.3f} ({70.0 + e:>7.3f})  Acc@5: {95.0:>7.3f} ({90.0 + e:>7.3f})\n")
    return "".join(out)


def test_timm_train_and_validate_lines(tmp_path):
    read = _read_text(tmp_path, timm_lines(epochs=2, updates=300, every=100))
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [0.0, 100.0, 200.0, 299.0, 300.0, 400.0, 500.0, 599.0] and y[0] == 6.9
    ex, ey, _ = _xy(read.series["eval/loss"])
    assert ex == [299.0, 599.0] and ey == [1.0, 0.9]                 # the last batch's running means
    assert _xy(read.series["eval/acc@1"])[1] == [70.0, 71.0]
    assert read.series["train/lr"].buf.count == 8


def test_keras_terminate_on_nan_message_glued_to_the_bar(tmp_path):
    read = _read_sample("keras_terminate_on_nan.log")   # fit(callbacks=[TerminateOnNaN()]) with SGD(1.0)
    assert read.event_counts == {"nonfinite_message": 1}
    assert "Invalid loss, terminating training" in read.events[0].text
    assert read.series["train/loss"].buf.count == 1 and read.series["train/loss"].buf.nonfinite == 1
    # printed on a line of its own (verbose=2, or a console without cursor control)
    read = _read_text(tmp_path, "Epoch 1/3\n12/12 - 0s - 7ms/step - loss: 1.5000\nEpoch 2/3\n"
                                "Batch 3: Invalid loss, terminating training\n")
    assert read.event_counts == {"nonfinite_message": 1}


def test_keras3_run_cut_inside_an_epoch_keeps_the_last_update(tmp_path):
    # Keras 3 erases an update with backspaces at its end; a run killed inside epoch 2 still shows that update
    text = (SAMPLES / "keras_fit.log").read_bytes().decode("utf-8")
    second = text.index("Epoch 2/4")
    cut = text.index("\r", text.index("\r", second) + 1)      # after the first update of epoch 2
    read = _read_text(tmp_path, text[:cut])
    x, y, _ = _xy(read.series["train/loss"])
    assert x == [1.0, 8.0, 12.0, 13.0] and math.isfinite(y[-1])  # (epoch 2's first update: its step 13)


def test_keras_progress_lines_without_their_epoch_headers_are_training(tmp_path):
    # an excerpt of fit's epoch lines only (the "Epoch k/N" lines left out): training points, not test points
    text = "".join(f"12/12 [==============================] - 0s 5ms/step - loss: {0.7 - e / 10:.4f} - "
                   f"val_loss: {0.75 - e / 10:.4f}\n" for e in range(4))
    read = _read_text(tmp_path, text)
    assert read.series["train/loss"].buf.count == 4 and read.series["eval/loss"].buf.count == 4
    assert "test/loss" not in read.series


def test_pytorch_tutorial_loop_and_its_accuracy_line():
    # samples/pytorch_tutorial_loop.log: a PyTorch loop printing as the official tutorials do,
    # 'Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}' and 'Accuracy of the network on the test images: {} %'
    # (an MLP on sklearn digits, Adam 1e-3, 10 epochs of 45 steps, every 15th step printed)
    read = read_file(SAMPLES / "pytorch_tutorial_loop.log")
    loss, acc = read.series["train/loss"], read.series["eval/accuracy"]
    steps, _, values, _ = acc.buf.arrays()
    assert loss.buf.count == 30 and list(loss.buf.arrays()[0][:3]) == [15.0, 30.0, 45.0]
    assert acc.buf.count == 10 and acc.raw_key == "test_accuracy"
    assert np.all((values > 0.5) & (values <= 1.0))  # percent read as a share
    # the same sentence from the other tutorials, with 'Test' in front and a decimal percentage
    from advisor.read.logs.keyvalue import parse_pairs

    line = "Test Accuracy of the model on the 10000 test images: 97.53 %"
    assert parse_pairs(line) == [("test_accuracy", pytest.approx(0.9753), "strong")]


def test_a_loops_own_validation_line_is_not_taken_for_a_validation_bar(tmp_path):
    # Lightning's validation tqdm bar ('Validation DataLoader 0: 50%|...| 1/2 [00:00<00:00, ...]') only marks a new
    # evaluation; a line of a loop's own that starts with 'Validation' and has '|' separators holds values
    log = "".join(f"epoch {e} | loss {1.0 / e:.3f}\nValidation | epoch {e} | val_loss {1.2 / e:.3f}\n" for e in range(1, 6))
    (tmp_path / "train.log").write_text(log)
    read = read_file(tmp_path / "train.log")
    assert read.series["eval/loss"].buf.count == 5 and read.series["train/loss"].buf.count == 5
