"""What detection, vision and fine-tuning tools print (issue #26.5), and rows of bare numbers.

Three kinds of material:

- ``samples/``: files the real tools wrote on tiny synthetic tasks (``samples/generate.py ultralytics timm peft
  accelerate``, models built from configs): Ultralytics 8's console and ``results.csv``, timm's ``summary.csv``
  (``timm.utils.update_summary``), a peft LoRA run under the Trainer, an accelerate loop with its TensorBoard tracker;
- logs of tools that do not install here (MXNet, YOLOv5 1.x-5.x), written below with the format strings of the
  tools' own code (quoted in each test), and loops' own prints;
- the real issue-thread logs of ../shared/eval-real-dev (skipped when it is not beside the repository).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from advisor.extract.view.curves import curve_xy, primary_loss
from advisor.read.log_settings import settings_in_text
from advisor.read.logs import read_file
from advisor.read.logs.merge import merge_reads

SAMPLES = Path(__file__).parent / "samples"
REAL_DEV = Path(__file__).resolve().parents[3] / ".." / "shared" / "eval-real-dev"


def _read(path: Path):
    read = read_file(path, path.name)
    assert read.problem is None
    return read


def _read_text(tmp_path, text: str, name: str = "train.log"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return _read(p)


def _xy(series):
    x, y, _, unit, _ = curve_xy(series)
    return [float(v) for v in x], [float(v) for v in y], unit


def _same(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(u == v or (math.isnan(u) and math.isnan(v)) for u, v in zip(a, b))


# -- written by the real tools ---------------------------------------------------------------------
def test_ultralytics8_console_one_point_per_epoch_and_best_pt_as_test():
    read = _read(SAMPLES / "ultralytics_train.log")  # YOLO("yolov8n.yaml").train(epochs=3, imgsz=64), 8.4.190
    assert _xy(read.series["train/box_loss"]) == ([1.0, 2.0, 3.0], [1.724, 1.667, 0.1229], "epoch")
    assert _xy(read.series["train/dfl_loss"])[1] == [1.09, 0.9837, 0.08321]  # the epoch's last progress row
    total = primary_loss(merge_reads([read]), "train")
    assert total.name == "train/loss_sum" and total.raw_key == "box_loss + cls_loss + dfl_loss"
    assert _xy(read.series["eval/map50-95"])[0] == [1.0, 2.0, 3.0]  # the validation table after each epoch
    assert _xy(read.series["test/map50"])[0] == [3.0]  # "Validating .../best.pt..." after training
    # the run's arguments ("engine/trainer: agnostic_nms=False, ..., epochs=3, iou=0.7, lr0=0.01, scale=0.5, ...")
    assert not {"train/iou", "train/lr", "train/loss_scale"} & set(read.series)


def test_ultralytics8_results_csv_and_console_agree():
    csv = _read(SAMPLES / "ultralytics_results.csv")
    x, y, unit = _xy(csv.series["train/box_loss"])
    assert (x, y, unit) == ([1.0, 2.0, 3.0], [1.72402, 1.66736, 0.12294], "epoch")
    console = _read(SAMPLES / "ultralytics_train.log")
    assert [float(f"{v:.4g}") for v in y] == _xy(console.series["train/box_loss"])[1]  # '%11.4g' on the console
    # one learning rate per parameter group: pg0 is the curve, the others are series of their own
    assert _xy(csv.series["train/lr"])[1] == [0.0005, 0.001005, 0.00068]
    assert csv.series["train/lr/pg2"].buf.count == 3
    assert _xy(csv.series["eval/map50-95"])[0] == [1.0, 2.0, 3.0]


def test_timm_summary_csv():
    read = _read(SAMPLES / "timm_summary.csv")  # timm.utils.update_summary, as train.py calls it each epoch
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "epoch" and x == [0.0, 1.0, 2.0] and y[0] == 1.1871197372674942 and y[-1] == 0.8065389385446906
    assert _xy(read.series["eval/loss"])[1][-1] == 9.5224609375
    assert _xy(read.series["eval/top1"])[1] == [53.125, 53.125, 53.125]
    assert _xy(read.series["train/lr"])[1][-1] == 0.0


def test_peft_trainable_parameters_print_is_a_setting_not_a_metric():
    path = SAMPLES / "peft_lora_trainer.log"  # get_peft_model(GPT-2 from a config, LoRA r=4), Trainer(max_steps=8)
    read = _read(path)
    assert set(read.series) == {"train/loss", "train/grad_norm", "train/lr"}
    assert _xy(read.series["train/loss"]) == ([0.5, 1.0, 1.5, 2.0], [3.896, 3.907, 3.899, 3.894], "epoch")
    peft = [s for s in settings_in_text(path.read_text()) if s.form == "peft print"]
    assert len(peft) == 1 and peft[0].line == 7
    assert peft[0].values == {"num_parameters": 512, "all_params": 8640, "trainable%": 5.9259}


def test_accelerate_example_evaluation_print():
    # examples/nlp_example.py: accelerator.print(f"epoch {epoch}:", eval_metric)
    read = _read(SAMPLES / "accelerate_loop.log")
    assert set(read.series) == {"eval/accuracy"}
    assert _xy(read.series["eval/accuracy"]) == ([0.0, 1.0, 2.0], [0.640625, 0.671875, 0.6875], "epoch")


def test_accelerate_tensorboard_tracker():
    pytest.importorskip("tensorboard")
    read = _read(SAMPLES / "accelerate_tracker" / "events.out.tfevents.sample")  # accelerator.log(..., step=step)
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [float(s) for s in range(1, 13)] and len(y) == 12
    assert _xy(read.series["train/accuracy"])[0] == [4.0, 8.0, 12.0]


# -- written from the tools' format strings ---------------------------------------------------------
def test_mxnet_speedometer_metrics_after_commas(tmp_path):
    # apache/mxnet example/rcnn/rcnn/callback.py Speedometer:
    # "Epoch[%d] Batch [%d]\tSpeed: %.2f samples/sec\tTrain-%s=%f,\t%s=%f,\t%s=%f"
    rcnn = "".join(f"INFO:root:Epoch[0] Batch [{b}]\tSpeed: 12.30 samples/sec\tTrain-RPNAcc={0.5 + b / 1000:f},\t"
                   f"RPNLogLoss={0.7 - b / 1000:f},\tRPNL1Loss=0.100000,\n" for b in (20, 40, 60))
    read = _read_text(tmp_path, rcnn)
    assert _xy(read.series["train/rpnlogloss"]) == ([20.0, 40.0, 60.0], [0.68, 0.66, 0.64], "step")
    assert read.series["train/rpnl1loss"].buf.count == 3 and "mxnet" in read.formats
    # a script's own f-string of the same line, the fields after commas and blanks
    own = "".join(f"2021-08-12 05:44:0{b},294 Epoch[1] Batch[{b}] Speed: 142.99 samples/sec,  IDLoss={v},\n"
                  for b, v in ((1, "45.729"), (2, "46.012"), (3, "nan"), (4, "nan")))
    read = _read_text(tmp_path, own)
    s = read.series["train/idloss"]
    assert _same(_xy(s)[1], [45.729, 46.012, math.nan, math.nan])
    assert s.buf.first_nonfinite[0] == 3.0 and s.buf.nonfinite == 2


def yolov5_results_txt(rows: list[tuple[int, float, float]], epochs: int) -> str:
    """YOLOv5 <= 5.x train.py: s = ('%10s' * 2 + '%10.4g' * 6) % ('%g/%g' % (epoch, epochs - 1), mem, *mloss,
    targets.shape[0], imgs.shape[-1]), then f.write(s + '%10.4g' * 7 % results + '\n') with results = (P, R,
    mAP@.5, mAP@.5-.95, val box, val obj, val cls)."""
    out = []
    for epoch, total, map50 in rows:
        s = ("%10s" * 2 + "%10.4g" * 6) % (f"{epoch}/{epochs - 1}", "11.1G", 0.05, 0.03, 0.01, total, 200, 640)
        out.append(s + "%10.4g" * 7 % (0.4, 0.5, map50, map50 / 2, 0.04, 0.02, 0.009) + "\n")
    return "".join(out)


def test_yolov5_results_txt_rows_without_a_header(tmp_path):
    read = _read_text(tmp_path, yolov5_results_txt([(0, 0.12, 0.1), (1, 0.1, 0.2), (2, float("nan"), 0.3)], 10),
                      "results.txt")
    total = primary_loss(merge_reads([read]), "train")
    assert total.raw_key == "total_loss" and _same(_xy(total)[1], [0.12, 0.1, math.nan])
    assert _xy(total)[0] == [0.0, 1.0, 2.0] and total.buf.first_nonfinite[1] == 2.0
    assert _xy(read.series["eval/map50"])[1] == [0.1, 0.2, 0.3]
    assert _xy(read.series["eval/box_loss"])[1] == [0.04, 0.04, 0.04]
    assert "eval/map50-95" not in read.series  # yolov3 wrote F1 in that column
    # the training row alone (the console row, pasted without its header and bar) is read too
    row = ("%10s" * 2 + "%10.4g" * 6) % ("5/9", "3.15G", 0.06724, 0.05453, 0.006653, 0.1284, 1, 640)
    assert _xy(_read_text(tmp_path, row + "\n").series["train/total_loss"])[:2] == ([5.0], [0.1284])
    # nor a row of another width, nor without the memory column
    for other in (row + "   0.5\n", row.replace("3.15G", " 3.15") + "\n"):
        assert "train/total_loss" not in _read_text(tmp_path, other).series


def test_yolov5_results_csv(tmp_path):
    # YOLOv5 6.x utils/loggers/__init__.py on_fit_epoch_end: header ('%20s,' * n % ('epoch', *keys)).rstrip(','), rows
    # ('%20.5g,' * n % (epoch, *vals)).rstrip(','); keys train/box_loss ... metrics/mAP_0.5:0.95 ... x/lr0, x/lr1, x/lr2
    keys = ["train/box_loss", "train/obj_loss", "train/cls_loss", "metrics/precision", "metrics/recall",
            "metrics/mAP_0.5", "metrics/mAP_0.5:0.95", "val/box_loss", "val/obj_loss", "val/cls_loss", "x/lr0", "x/lr1",
            "x/lr2"]
    n = len(keys) + 1
    text = ("%20s," * n % ("epoch", *keys)).rstrip(",") + "\n"
    for e in range(3):
        vals = [0.1 - e / 100, 0.05, 0.02, 0.4, 0.5, 0.3 + e / 10, 0.15, 0.09, 0.04, 0.01, 0.07 - e / 100, 0.001, 0.1]
        text += ("%20.5g," * n % (e, *vals)).rstrip(",") + "\n"
    read = _read_text(tmp_path, text, "results.csv")
    assert _xy(read.series["eval/map50"])[:2] == ([0.0, 1.0, 2.0], [0.3, 0.4, 0.5])
    assert _xy(read.series["eval/map50-95"])[1] == [0.15, 0.15, 0.15]
    assert _xy(read.series["train/lr"])[1] == [0.07, 0.06, 0.05] and _xy(read.series["train/lr/pg2"])[1][0] == 0.1


def test_yolov5_header_pasted_without_its_epoch_column(tmp_path):
    # YOLOv5 1.x: ('\n' + '%10s' * 8) % ('Epoch', 'gpu_mem', 'GIoU', 'obj', 'cls', 'total', 'targets', 'img_size'),
    # test.py: ('%20s' + '%12s' * 6) % ('Class', 'Images', 'Targets', 'P', 'R', 'mAP@.5', 'mAP@.5:.95')
    head = ("%10s" * 7) % ("gpu_mem", "GIoU", "obj", "cls", "total", "targets", "img_size")
    row = ("%10s" + "%10.4g" * 6) % ("3.15G", 0.06724, 0.05453, 0.006653, 0.1284, 1, 640)
    val_head = ("%20s" + "%12s" * 6) % ("Class", "Images", "Targets", "P", "R", "mAP@.5", "mAP@.5:.95")
    val_row = ("%20s" + "%12.3g" * 6) % ("all", 306, 551, 0.0426, 0.149, 0.0571, 0.0136)
    read = _read_text(tmp_path, f"{head}\n{row}\n\n{val_head}\n{val_row}\n")
    assert _xy(read.series["train/giou_loss"])[1] == [0.06724]
    assert primary_loss(merge_reads([read]), "train").raw_key == "total_loss"
    assert _xy(read.series["eval/map50"])[1] == [0.0571] and _xy(read.series["eval/map50-95"])[1] == [0.0136]
    assert _xy(read.series["eval/precision"])[1] == [0.0426] and _xy(read.series["eval/recall"])[1] == [0.149]


def test_ultralytics8_segmentation_validation_header(tmp_path):
    # SegmentationValidator.get_desc: ("%22s" + "%11s" * 10) % ("Class", "Images", "Instances", "Box(P", "R",
    # "mAP50", "mAP50-95)", "Mask(P", "R", "mAP50", "mAP50-95)")
    text = ("%11s" * 8) % ("Epoch", "GPU_mem", "box_loss", "seg_loss", "cls_loss", "dfl_loss", "Instances", "Size")
    text += "\n" + ("%11s" * 2 + "%11.4g" * 6) % ("1/3", "2.1G", 1.2, 2.5, 1.6, 1.1, 20, 640) + "\n"
    text += ("%22s" + "%11s" * 10) % ("Class", "Images", "Instances", "Box(P", "R", "mAP50", "mAP50-95)", "Mask(P",
                                     "R", "mAP50", "mAP50-95)") + ": 100%|##########| 1/1 [00:00<00:00, 4.1it/s]\n"
    text += ("%22s" + "%11i" * 2 + "%11.3g" * 8) % ("all", 4, 17, 0.5, 0.6, 0.41, 0.3, 0.45, 0.55, 0.38, 0.2) + "\n"
    read = _read_text(tmp_path, text)
    assert _xy(read.series["eval/map50"])[1] == [0.41] and _xy(read.series["eval/mask_map50"])[1] == [0.38]
    assert _xy(read.series["eval/mask_map50-95"])[1] == [0.2] and _xy(read.series["train/seg_loss"])[1] == [2.5]


def test_a_settings_print_is_not_a_record(tmp_path):
    # YOLOv5 train.py print_args: "train: weights=yolov5s.pt, cfg=, ..., epochs=300, ..., rect=False, resume=False"
    text = ("engine/trainer: agnostic_nms=False, amp=False, cache=False, cfg=None, epochs=3, iou=0.7, lr0=0.01, "
            "scale=0.5\ntrain: weights=yolov5s.pt, epochs=300, batch_size=16, rect=False, resume=False, nosave=False, "
            "iou_t=0.2, acc=0.5\nstep 1 loss 0.5 use_amp=False flag=True other=None\n")
    read = _read_text(tmp_path, text)
    assert set(read.series) == set()
    # a record with one or two booleans beside it stays a record
    read = _read_text(tmp_path, "step=1, loss=0.5, amp=False\nstep=2, loss=0.4, amp=False, skipped=True\n")
    assert _xy(read.series["train/loss"])[:2] == ([1.0, 2.0], [0.5, 0.4])


def test_a_dict_printed_after_its_position(tmp_path):
    read = _read_text(tmp_path, "epoch 0: {'accuracy': 0.64, 'f1': 0.78}\nepoch 1: {'accuracy': 0.7, 'f1': 0.8}\n"
                                "Epoch 2: {'loss': 0.5, 'accuracy': 0.75}\n")
    assert _xy(read.series["eval/f1"]) == ([0.0, 1.0], [0.78, 0.8], "epoch")
    assert _xy(read.series["train/loss"])[:2] == ([2.0], [0.5])  # with its loss: the epoch's train record


def fairseq_lines(fmt: str, updates: range, per_epoch: int) -> str:
    """fairseq/logging/progress_bar.py as fairseq 0.10+ logs it: SimpleProgressBar.log ("epoch 001:    100 / 1000
    " + ", ".join(key=value)) and print ("epoch 001 | " + " | ".join(key value); validation "valid on 'valid'
    subset"), or JsonProgressBar (json.dumps of the stats as strings, with "epoch" and "update" added; print's keys
    prefixed with the tag)."""
    out = []
    head = "2020-10-01 10:00:00 | INFO | "
    for u in updates:
        e = (u - 1) // per_epoch + 1
        loss, lr = f"{10 - u / 100:.3f}", "0.0005"
        if fmt == "json":
            out.append(head + 'train_inner | {"epoch": %d, "update": %.3f, "loss": "%s", "nll_loss": "8.456", '
                       '"ppl": "351.2", "wps": "12345.6", "num_updates": "%d", "lr": "%s", "gnorm": "2.345"}\n'
                       % (e, u / per_epoch, loss, u, lr))
        else:
            out.append(head + f"train_inner | epoch {e:03d}:    {u - (e - 1) * per_epoch} / {per_epoch} loss={loss}, "
                       f"nll_loss=8.456, ppl=351.2, wps=12345.6, num_updates={u}, lr={lr}, gnorm=2.345\n")
        if u % per_epoch == 0:
            if fmt == "json":
                out.append(head + 'valid | {"epoch": %d, "valid_loss": "8.5", "valid_ppl": "238", '
                           '"valid_num_updates": "%d", "valid_best_loss": "8.5"}\n' % (e, u))
                out.append(head + 'train | {"epoch": %d, "train_loss": "9.12", "train_ppl": "338.2", '
                           '"train_num_updates": "%d", "train_lr": "0.0005"}\n' % (e, u))
            else:
                out.append(head + f"valid | epoch {e:03d} | valid on 'valid' subset | loss 8.5 | ppl 238 | "
                           f"num_updates {u} | best_loss 8.5\n")
                out.append(head + f"train | epoch {e:03d} | loss 9.12 | ppl 338.2 | num_updates {u} | lr 0.0005\n")
    return "".join(out)


@pytest.mark.parametrize("fmt", ["simple", "json"])
def test_fairseq_updates_epoch_means_and_validation(tmp_path, fmt):
    read = _read_text(tmp_path, fairseq_lines(fmt, range(100, 2100, 100), per_epoch=1000))
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [float(u) for u in range(100, 2100, 100)] and y[0] == 9.0 and y[-1] == -10.0
    assert _xy(read.series["train/loss@epoch"])[:2] == ([1000.0, 2000.0], [9.12, 9.12])  # the epoch's means
    assert _xy(read.series["eval/loss"])[:2] == ([1000.0, 2000.0], [8.5, 8.5])
    assert read.series["train/lr"].buf.count == 20 and "eval/best_loss" not in read.series


def test_opennmt_statistics_output(tmp_path):
    # onmt/utils/statistics.py Statistics.output: ("Step %2d/%5d; acc: %6.2f; ppl: %5.2f; xent: %4.2f; " +
    # "lr: %7.5f; %3.0f/%3.0f tok/s; %6.0f sec") through the logger ("[time INFO] "); xent is the training loss
    text = "".join(
        "[2021-01-01 10:%02d:00,000 INFO] Step %2d/%5d; acc: %6.2f; ppl: %5.2f; xent: %4.2f; lr: %7.5f; "
        "%3.0f/%3.0f tok/s; %6.0f sec\n" % (k, 100 * k, 100000, 10.0 + k, math.exp(7.1 - k / 10), 7.1 - k / 10,
                                           1e-4, 5000, 6000, 60 * k)
        for k in range(1, 6)
    )
    read = _read_text(tmp_path, text)
    x, y, unit = _xy(read.series["train/xent"])
    assert unit == "step" and x == [100.0, 200.0, 300.0, 400.0, 500.0] and y == [7.0, 6.9, 6.8, 6.7, 6.6]
    assert primary_loss(merge_reads([read]), "train").name == "train/xent"


def test_swin_transformer_train_print(tmp_path):
    # Swin Transformer main.py train_one_epoch: f'Train: [{epoch}/{config.TRAIN.EPOCHS}][{idx}/{num_steps}]\t'
    # f'eta {...} lr {lr:.6f}\t' f'time {...} ({...})\t' f'loss {val:.4f} ({avg:.4f})\t' f'grad_norm ...'
    # f'mem {...:.0f}MB', through its logger's "[time name] (main.py N): INFO " prefix; epochs and steps from 0
    head = "[2021-04-10 10:00:00 swin_tiny_patch4_window7_224] (main.py 225): INFO "
    text = "".join(
        head + f"Train: [{e}/300][{i}/1251]\teta 1:00:00 lr {1e-6 + (e * 1251 + i) * 1e-7:.6f}\t"
        f"time 0.3000 (0.3500)\tloss {6.9 - e - i / 1000:.4f} ({7.0 - e:.4f})\tgrad_norm 2.3000 (2.2000)\tmem 5000MB\n"
        for e in range(2)
        for i in (0, 500, 1000)
    )
    read = _read_text(tmp_path, text)
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "step" and x == [0.0, 500.0, 1000.0, 1251.0, 1751.0, 2251.0]
    assert y == [6.9, 6.4, 5.9, 5.9, 5.4, 4.9]  # the value, not the running average in parentheses
    assert read.series["train/grad_norm"].buf.count == 6


def test_dgl_example_val_and_test_accuracy_are_two_splits(tmp_path):
    # DGL's GNN examples: "Epoch {:05d} | Loss {:.4f} | Train Acc {:.4f} | Val Acc {:.4f} | Test Acc {:.4f}"; the
    # validation and the test accuracy are two held-out sets, not one eval curve interleaved
    text = "".join(
        "Epoch {:05d} | Loss {:.4f} | Train Acc {:.4f} | Val Acc {:.4f} | Test Acc {:.4f}\n".format(
            e, 1.9 - e / 100, 0.1 + e / 20, 0.07 + e / 25, 0.09 + e / 30
        )
        for e in range(5)
    )
    read = _read_text(tmp_path, text)
    assert _xy(read.series["eval/acc"])[1] == pytest.approx([0.07, 0.11, 0.15, 0.19, 0.23])
    assert _xy(read.series["test/acc"])[1] == pytest.approx([0.09, 0.1233, 0.1567, 0.19, 0.2233])
    assert read.series["train/acc"].buf.count == 5 and read.series["train/loss"].buf.count == 5


def test_megatron_validation_print(tmp_path):
    # megatron/training.py evaluate_and_print_results: ' validation loss at {} | '.format('iteration {}'), then per
    # loss '{} value: {:.6E} | ' and '{} PPL: {:.6E} | '; training_log's ' iteration {:8d}/{:8d} |' lines between
    text = ""
    for it in range(10, 110, 10):
        text += (f" iteration {it:8d}/{100:8d} | consumed samples: {it * 8:12d} | learning rate: {1.5e-4:.3E} | "
                 f"lm loss: {10 - it / 20:.6E} | loss scale: 65536.0 | grad norm: 0.812 |\n")
        if it % 50 == 0:
            text += "-" * 80 + f"\n validation loss at iteration {it} | lm loss value: {9 - it / 50:.6E} | " \
                    f"lm loss PPL: {math.exp(9 - it / 50):.6E} | \n" + "-" * 80 + "\n"
    text += " validation loss at the end of training for test data | lm loss value: 6.900000E+00 | " \
            "lm loss PPL: 9.921300E+02 | \n"
    read = _read_text(tmp_path, text)
    assert _xy(read.series["eval/lm_loss"])[:2] == ([50.0, 100.0], [8.0, 7.0])
    assert _xy(read.series["eval/lm_loss_ppl"])[1][0] == pytest.approx(math.exp(8.0), rel=1e-6)
    assert _xy(read.series["test/lm_loss"])[:2] == ([100.0], [6.9])
    assert read.series["train/lm_loss"].buf.count == 10 and "train/ppl" not in read.series


def test_nemo_progress_bar_train_loss(tmp_path):
    # NeMo's Megatron models log self.log("reduced_train_loss", ...) onto Lightning's tqdm bar
    bars = [f"Epoch {e}: 100%|##########| {b}/5 [00:0{b}<00:00, 1.2it/s, v_num=0, reduced_train_loss="
            f"{5 - (e * 5 + b) / 10:.3f}, global_step={e * 5 + b - 1:.1f}, consumed_samples={(e * 5 + b) * 8:.1f}"
            + (", val_loss=4.800]" if e else "]") for e in range(2) for b in range(1, 6)]
    read = _read_text(tmp_path, "\r".join(bars) + "\n")
    train = primary_loss(merge_reads([read]), "train")
    assert train.raw_key == "reduced_train_loss" and train.key.metric == "loss"
    assert _xy(train)[:2] == ([float(x) for x in range(1, 11)], [round(4.9 - x / 10, 3) for x in range(10)])


# -- rows of bare numbers -----------------------------------------------------------------------------
def test_bare_rows_named_by_the_keras_line_beside_them(tmp_path):
    # for x, y in batches: print(*model.train_on_batch(x, y)); then a fit() epoch whose bar shows the same values
    rows = [(0.6931471805599453, 0.5), (0.6123456789, 0.625), (0.5876543211, 0.71875)]
    text = "".join(f"{a} {b}\n" for a, b in rows)
    text += "32/32 [==============================] - 1s - loss: 0.5877 - accuracy: 0.7188\n"
    text += "0.5512345678 0.75\n"
    read = _read_text(tmp_path, text)
    x, y, unit = _xy(read.series["train/loss"])
    assert unit == "index" and y == [0.6931471805599453, 0.6123456789, 0.5876543211, 0.5877, 0.5512345678]
    assert _xy(read.series["train/accuracy"])[1] == [0.5, 0.625, 0.71875, 0.7188, 0.75]
    assert "bare_rows" in read.formats


def test_bare_rows_named_by_a_record_with_its_step(tmp_path):
    # a loop printing print(step, loss.item()) beside its logger's "step 10 loss 2.3026"
    text = "step 10 loss 2.3026\n10 2.302585\n" + "".join(f"{s} {2.3 - s / 1000:.6f}\n" for s in range(20, 60, 10))
    read = _read_text(tmp_path, text)
    assert _xy(read.series["train/loss"]) == (
        [10.0, 10.0, 20.0, 30.0, 40.0, 50.0], [2.3026, 2.302585, 2.28, 2.27, 2.26, 2.25], "step")


def test_step_loss_pairs_in_a_log_that_names_no_loss(tmp_path):
    # YANMTT pretrain_nmt.py: if ctr % 10 == 0 and rank % 8 == 0: print(ctr, lv)
    text = "".join(f"{s} {2.6 - s / 1e5:.7g}\n" for s in range(76930, 76980, 10))
    text += "76980 nan\n76990 nan\nSaving the model\nLoading from checkpoint\n77000 nan\n77010 nan\n...\n"
    read = _read_text(tmp_path, text)
    s = read.series["train/loss"]
    x, y, unit = _xy(s)
    assert unit == "step" and x == [float(v) for v in range(76930, 77020, 10)] and y[0] == pytest.approx(1.8307)
    assert s.buf.count == 9 and s.buf.nonfinite == 4 and s.buf.first_nonfinite[0] == 76980.0


def test_bare_rows_no_point_invented(tmp_path):
    pairs = "".join(f"{s} {0.5 + s / 1000:.4f}\n" for s in range(1, 6))
    # the log names its loss: the pairs may be anything (per-class AP, a learning rate)
    read = _read_text(tmp_path, "epoch 1 loss 0.9\nepoch 2 loss 0.8\n" + pairs)
    assert _xy(read.series["train/loss"])[1] == [0.9, 0.8]
    for text in (
        "".join(f"{s} {s * 2}\n" for s in range(5)),  # whole numbers both: counts, not a loss
        "".join(f"{s} 0.{s}5\n" for s in (5, 4, 3, 2)),  # the first column falls
        "1 0.5\n2 0.4\n",  # too few
        "".join(f"{a / 10} {a / 7}\n" for a in range(1, 6)),  # no whole-number first column, no name anywhere
        "0.5 0.25\nstep 3 loss 0.9 acc 0.1\n",  # a record nearby whose values are other numbers
        "0.59 0.25\nEpoch 1/1\n4/4 [==============================] - 0s - loss: 0.6\n",  # too few digits agree
    ):
        read = _read_text(tmp_path, text)
        assert "bare_rows" not in read.formats, text
        assert all(s.buf.count <= 1 for s in read.series.values()), text


def test_bare_pairs_beyond_the_series_cap_keep_exact_counts(tmp_path):
    n = 250_000
    lines = [f"{s} {1.0 + 1.0 / (s + 1):.6f}\n" for s in range(n)]
    lines[200_001] = "200001 nan\n"
    read = _read_text(tmp_path, "".join(lines))
    s = read.series["train/loss"]
    assert s.buf.count == n and s.buf.nonfinite == 1 and s.buf.first_nonfinite[0] == 200_001.0
    assert len(s.buf) <= 100_000


# -- the real issue-thread logs -------------------------------------------------------------------------
REAL_CASES = {c["case"]: c for c in json.loads((REAL_DEV / "cases.json").read_text())} \
    if (REAL_DEV / "cases.json").is_file() else {}
needs_real = pytest.mark.skipif(not REAL_CASES, reason="../shared/eval-real-dev is not beside the repository")


def _real(case: str):
    read = _read(REAL_DEV / "cases" / case / "run" / "train.log")
    return read, primary_loss(merge_reads([read]), "train")


@needs_real
@pytest.mark.parametrize("case, n, first, last, first_nan_step, unit", [
    ("byteps_issue411_mxnet_fp16_nan", 9, 45.729, math.nan, 7.0, "step"),           # Epoch[1] Batch[7] IDLoss=nan
    ("keras_issue255_int_normalize_zero_input", 8, 0.2355973707751222, 17.269388197455335, None, "index"),
    ("yanmtt_issue7_bart_fp16_nan_70k", 9, 2.6496577, math.nan, 76980.0, "step"),
    ("yolov5_issue44_scratch_map0_epochs", 1, 0.3142, 0.3142, None, "epoch"),
    ("yolov5_issue91_lowmap_repo_bug", 1, 0.1284, 0.1284, None, "index"),
])
def test_real_logs_train_loss(case, n, first, last, first_nan_step, unit):
    _, train = _real(case)
    x, y, got_unit = _xy(train)
    assert len(y) == n == REAL_CASES[case]["expected_loss_points"] and got_unit == unit
    assert _same([y[0], y[-1]], [first, last])
    nan_at = train.buf.first_nonfinite  # (step, epoch, line)
    assert (nan_at[0] if nan_at is not None else None) == first_nan_step


@needs_real
def test_real_keras_epoch_with_its_in_progress_line_is_one_point():
    # "2/2 [===] - ETA: 0s - loss: 105.5667" then, after a ModelCheckpoint message, the same epoch's final line
    # "2/2 [===] - 5s 2s/step - loss: 105.5667 - ... - val_loss: 0.0000e+00": one epoch, one point (cases.json
    # counts the value twice)
    read, train = _real("keras_issue14198_val_metrics_zero_version")
    assert _xy(train) == ([2.0], [105.5667], "epoch")
    assert _xy(read.series["eval/loss"])[1] == [0.0]
