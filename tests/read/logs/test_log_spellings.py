"""Each log spelling of run-layout.md, line by line, including malformed lines."""

from __future__ import annotations

import math

import pytest

from advisor.extract.view.curves import curve_xy, primary_loss
from advisor.read.logs import read_file
from advisor.read.logs.merge import merge_reads


def read_lines(tmp_path, text: str, name: str = "train.log"):
    p = tmp_path / name
    p.write_text(text)
    return read_file(p, name)


def pts(read, series: str):
    s = read.series[series] if series != "main" else primary_loss(merge_reads([read]), "train")
    x, y, _, unit, _ = curve_xy(s)
    return [(float(a), float(b)) for a, b in zip(x, y)], unit


@pytest.mark.parametrize("line, step, loss, lr", [
    ("epoch 3 step 120 loss 0.4312 lr 0.01", 120, 0.4312, 0.01),
    ("step=120, loss=0.43, lr=1e-2", 120, 0.43, 0.01),
    ("[epoch 3][iter 120/500] loss: 0.4312 grad_norm: 1.2e+01", 120, 0.4312, None),
    ("iter 120 || Loss: 0.4312 || timer: 0.1 sec.", 120, 0.4312, None),
    ("Step 120: loss = 4.312E-01, learning_rate = 1e-2", 120, 0.4312, 0.01),
    ("global_step:120 | train_loss:0.4312 | lr:0.01", 120, 0.4312, 0.01),
    ("[09/02 02:37:24 d2.utils.events]:  eta: 0:05:22  iter: 120  total_loss: 0.4312  loss_cls: 0.2  lr: 0.01  max_mem: 2725M",
     120, 0.4312, 0.01),
    (" iteration      120/  500000 | learning rate: 1.000E-02 | lm loss: 4.312000E-01 | loss scale: 65536.0 |",
     120, 0.4312, 0.01),
    # fairseq SimpleProgressBar.log (its end-of-epoch "epoch 001 | loss ... | num_updates" holds the epoch's means:
    # test_log_tools.py)
    ("epoch 001:    120 / 500 loss=0.4312, ppl=1.35, wps=1000, num_updates=120, lr=0.01", 120, 0.4312, 0.01),
    ("step 120 loss tensor(0.4312, grad_fn=<NllLossBackward0>)", 120, 0.4312, None),
])
def test_key_value_spellings(tmp_path, line, step, loss, lr):
    read = read_lines(tmp_path, line + "\n")
    p, unit = pts(read, "main")
    assert unit == "step" and p == [(step, pytest.approx(loss))]
    if lr is not None:
        assert pts(read, "train/lr")[0] == [(step, pytest.approx(lr))]


@pytest.mark.parametrize("spelling, expect", [
    ("nan", math.nan), ("NaN", math.nan), ("-nan", math.nan), ("-nan(ind)", math.nan), ("1.#QNAN", math.nan),
    ("inf", math.inf), ("Infinity", math.inf), ("-inf", -math.inf), ("1.#INF", math.inf), ("1e999", math.inf),
    ("tensor(nan)", math.nan), ("nan%", math.nan),
])
def test_nonfinite_spellings(tmp_path, spelling, expect):
    read = read_lines(tmp_path, f"step 1 loss 0.5\nstep 2 loss {spelling}\nstep 3 loss 0.4\n")
    s = read.series["train/loss"]
    y = [v for _, v in pts(read, "train/loss")[0]]
    assert len(y) == 3 and s.buf.nonfinite == 1
    assert (math.isnan(y[1]) if math.isnan(expect) else y[1] == expect)
    assert s.buf.first_nonfinite[0] == 2.0


def test_mindspore_loss_monitor_and_overflow_prints(tmp_path):
    read = read_lines(tmp_path, "epoch: 1 step: 1, loss is 2.3025851\n"
                                "epoch: 1 step: 2, loss is 2.2, overflow is True, loss scale is 65536.0\n"
                                "epoch: 1 step: 3, loss is 2.1, overflow is False, loss scale is 32768.0\n"
                                "Epoch:[  0/ 10], step:[    4/ 1875], loss:[2.000/2.150], time:12.3 ms, lr:0.01\n")
    assert pts(read, "train/loss")[0] == [(1, 2.3025851), (2, 2.2), (3, 2.1), (4, 2.0)]
    assert pts(read, "train/loss_scale")[0] == [(2, 65536.0), (3, 32768.0)]
    assert read.event_counts == {"overflow": 1}
    assert "mindspore" in read.formats


def test_hf_trainer_prints(tmp_path):
    read = read_lines(tmp_path, "{'loss': 2.31, 'grad_norm': 5.1, 'learning_rate': 5e-05, 'epoch': 0.1}\n"
                                "  5%|▌         | 10/200 [00:01<00:20,  9.1it/s]\n"
                                "{'loss': 2.0, 'grad_norm': nan, 'learning_rate': 4e-05, 'epoch': 0.2}\n"
                                "{'eval_loss': 1.9, 'eval_accuracy': 0.61, 'epoch': 0.2}\n"
                                "{'train_runtime': 10.0, 'train_samples_per_second': 3.2, 'train_loss': 2.15, 'epoch': 0.2}\n")
    assert pts(read, "train/loss") == ([(0.1, 2.31), (0.2, 2.0)], "epoch")
    assert pts(read, "eval/loss")[0] == [(0.2, 1.9)]
    assert pts(read, "eval/accuracy")[0] == [(0.2, 0.61)]
    assert read.series["train/grad_norm"].buf.nonfinite == 1


def test_a_key_abbreviated_with_a_dot_is_read(tmp_path):
    # a Keras 2 bar whose metric was named "acc." (and a loop printing the same two values beside it)
    text = ("0.2355973707751222 0.96875\n17.269388197455335 0.5\n"
            "32/32 [==============================] - 5s - loss: 17.2694 - acc.: 0.5000\n")
    read = read_lines(tmp_path, text)
    assert [v for _, v in pts(read, "train/acc")[0]] == [0.96875, 0.5, 0.5]


def test_keras_progress_lines_read_at_each_count(tmp_path):
    text = ("Epoch 1/2\n"
            "  1/100 [..............................] - ETA: 1:40 - loss: 2.4000 - accuracy: 0.1000\r"
            " 50/100 [==============>...............] - ETA: 1s - loss: 1.0000 - accuracy: 0.5000\r"
            "100/100 [==============================] - 2s 20ms/step - loss: 0.5123 - accuracy: 0.8100 - val_loss: 0.6100 - val_accuracy: 0.7800\n"
            "Epoch 2/2\n"
            "100/100 - 2s - loss: 0.4000 - accuracy: 0.8500 - val_loss: 0.5500 - val_accuracy: 0.8000 - 2s/epoch\n")
    read = read_lines(tmp_path, text)
    # epoch 1's bar at counts 1, 50 and 100: its losses there; the other metrics at the epoch's end
    assert pts(read, "train/loss") == ([(1, 2.4), (50, 1.0), (100, 0.5123), (200, 0.4)], "step")
    assert pts(read, "eval/loss")[0] == [(100, 0.61), (200, 0.55)]
    assert pts(read, "train/accuracy")[0] == [(100, 0.81), (200, 0.85)]
    assert "keras" in read.formats


def test_metriclogger_mmdet_mmengine_positions(tmp_path):
    text = ("Epoch: [1]  [ 2/10]  eta: 0:00:05  lr: 0.020000  loss: 1.5000 (1.7000)  time: 0.5\n"
            "Epoch [2][50/500]\tlr: 1.000e-02, eta: 0:10:00, time: 0.5, loss: 0.9000, loss_cls: 0.5\n"
            "Epoch(train)  [3][ 50/500]  base_lr: 1e-02 lr: 1e-02  eta: 1:00:00  loss: 0.8000  loss_bbox: 0.3\n"
            "Epoch(val) [3][50/50]    eta: 0:00:00  loss: 0.9500\n"
            "Iter(train) [  1050/90000]  lr: 1e-02  loss: 0.7000\n")
    read = read_lines(tmp_path, text)
    # torchvision: epoch 1 * 10 its + 2; mmdet/mmengine epochs count from 1: (2-1)*500+50, (3-1)*500+50
    assert pts(read, "train/loss")[0] == [(12, 1.5), (550, 0.9), (1050, 0.8), (1050, 0.7)]
    assert [v for _, v in pts(read, "eval/loss")[0]] == [0.95]


def test_deepspeed_apex_fairseq_overflow_messages(tmp_path):
    text = ("[INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
            "Attempted loss scale: 65536, reducing to 32768\n"
            "step:0, loss:5.45\n"
            "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0\n"
            "NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 8192.0\n"
            "step:10, loss:5.0\n"
            "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 8192, but hysteresis is 2. Reducing hysteresis to 1\n")
    read = read_lines(tmp_path, text)
    assert read.event_counts == {"overflow": 4}
    assert [v for _, v in pts(read, "train/loss_scale")[0]] == [65536.0, 32768.0, 16384.0, 8192.0]
    assert [e.step for e in read.events] == [None, 0.0, 0.0, 10.0]


def test_tracebacks_and_nonfinite_messages(tmp_path):
    text = ("step 10 loss 0.5\n"
            "Traceback (most recent call last):\n"
            '  File "train.py", line 3, in <module>\n'
            "    main()\n"
            "FloatingPointError: Loss became infinite or NaN at iteration=11!\n"
            "Loss is nan, stopping training\n")
    read = read_lines(tmp_path, text)
    kinds = [e.kind for e in read.events]
    assert kinds.count("traceback") == 1 and "nonfinite_message" in kinds
    assert read.events[0].text.startswith("FloatingPointError")
    assert any(e.step == 11.0 for e in read.events if e.kind == "nonfinite_message")
    # "Loss is nan" carries a (non-finite) value too
    assert read.series["train/loss"].buf.nonfinite == 1


def test_settings_and_malformed_lines_are_not_points(tmp_path):
    text = ("Namespace(batch_size=64, lr=0.0001, momentum=0.9)\n"
            "[config.py:1003:print]   loss_scale ................... 0\n"
            "optimizer: {'type': 'Adam', 'lr': 3e-05}\n"
            "step 40 loss=nan(?) garbage\n"
            "step 41 loss 0.42x\n"
            "step 42 loss\n"
            "step 43 loss 0.41\n")
    read = read_lines(tmp_path, text)
    assert "train/lr" not in read.series and "train/loss_scale" not in read.series
    assert pts(read, "train/loss")[0] == [(43, 0.41)]
    assert read.bad_lines == 2 and [ln for ln, _ in read.bad_examples] == [4, 5]
    assert "nan(?)" in read.bad_examples[0][1]


def test_percent_and_eval_prefixes(tmp_path):
    read = read_lines(tmp_path, "Epoch 005 loss 9.5198 | train 2.5s | Acc 13.52% | infer 4.5s\n"
                                "epoch 5 val_loss 1.2 val_acc 0.55\n"
                                "| epoch 005 | valid on 'valid' subset | loss 7.2 | ppl 147 | num_updates 300\n")
    assert pts(read, "train/acc")[0] == [(5, pytest.approx(0.1352))]
    assert [v for _, v in pts(read, "eval/loss")[0]] == [1.2, 7.2]


def test_csv_jsonl_and_trainer_state_by_content_not_name(tmp_path):
    csv_log = read_lines(tmp_path, "epoch,accuracy,loss,val_accuracy,val_loss\n0,0.4,1.7,0.46,1.44\n1,0.5,1.5,,\n",
                         name="training.log")
    assert "csv" in csv_log.formats and pts(csv_log, "train/loss")[0] == [(0, 1.7), (1, 1.5)]
    assert pts(csv_log, "eval/loss")[0] == [(0, 1.44)]
    jl = read_lines(tmp_path, '{"step": 1, "loss": 0.5}\n{"step": 2, "loss": NaN}\nnot json\n{"step": 3, "val_loss": 0.7}\n',
                    name="out.txt")
    assert "jsonl" in jl.formats and jl.bad_lines == 1
    assert jl.series["train/loss"].buf.nonfinite == 1
    st = read_lines(tmp_path, '{"log_history": [{"loss": 1.0, "step": 5, "epoch": 0.5}, {"eval_loss": 1.2, "step": 5}]}',
                    name="state.json")
    assert "hf_trainer_state" in st.formats and pts(st, "eval/loss")[0] == [(5, 1.2)]


def test_mindspore_steps_counted_inside_each_epoch_become_global_steps(tmp_path):
    text = "".join(f"epoch: {e} step: {s}, loss is {1.0 / (e * 10 + s)}\n" for e in (1, 2, 3) for s in (1, 2, 3, 4))
    read = read_lines(tmp_path, text)
    x = [a for a, _ in pts(read, "train/loss")[0]]
    assert x == list(range(1, 13)) and not read.series["train/loss"].restarts


def test_mmdet_log_json_iterations_inside_epochs(tmp_path):
    recs = [f'{{"mode": "train", "epoch": {e}, "iter": {i}, "lr": 0.02, "loss": {2.0 / (e * 10 + i / 50)}}}'
            for e in (1, 2) for i in (50, 100, 150, 200)]
    recs.insert(4, '{"mode": "val", "epoch": 1, "iter": 200, "bbox_mAP": 0.3, "loss": 1.5}')
    read = read_lines(tmp_path, "\n".join(recs) + "\n", name="20260101.log.json")
    x = [a for a, _ in pts(read, "train/loss")[0]]
    assert x == [50, 100, 150, 200, 250, 300, 350, 400] and not read.series["train/loss"].restarts
    assert pts(read, "eval/loss")[0] == [(200, 1.5)]


def test_tqdm_bars_with_a_loss_postfix(tmp_path):
    updates = [f"Epoch {e}: {n:3d}%|{'#' * (n // 10):10s}| {n}/100 [00:0{n // 20}<00:05, 9.5it/s, loss={2.0 / (1 + e + n / 100):.3f}]"
               for e in range(3) for n in range(0, 101, 10)]
    read = read_lines(tmp_path, "\r".join(updates) + "\n")
    x = [a for a, _ in pts(read, "train/loss")[0]]
    # counter 0 of each epoch is not a point: no batch has run, a postfix there is the previous epoch's
    assert len(x) == 30 and x == sorted(x) and x[-1] > 200 and not read.series["train/loss"].restarts
    assert "tqdm" in read.formats
