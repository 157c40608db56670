"""advisor.read.log_settings: settings printed in logs, parsed without executing anything."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from advisor.read.log_settings import read_log_settings, settings_in_text

SAMPLES = Path(__file__).resolve().parents[1] / "extract" / "config_samples"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--arch", default="resnet18")
    p.add_argument("--amp", action="store_true")
    p.add_argument("--betas", type=float, nargs=2, default=[0.9, 0.999])
    p.add_argument("--resume", type=Path, default=None)
    p.add_argument("--act", type=str.lower, default="relu")
    return p


def test_a_real_argparse_namespace_print():
    args = _parser().parse_args(["--lr", "0.01", "--batch-size", "64", "--amp", "--betas", "0.9", "0.98"])
    log = f"INFO starting\n{args}\nEpoch 1 loss 2.3\n"
    (found,) = settings_in_text(log)
    assert found.form == "Namespace" and found.line == 2
    assert found.values == {"lr": 0.01, "batch_size": 64, "arch": "resnet18", "amp": True, "betas": [0.9, 0.98],
                            "resume": None, "act": "relu"}


def test_a_namespace_with_values_that_are_not_python_keeps_the_others():
    args = _parser().parse_args(["--resume", "ckpt/last.pt"])
    args.loss_fn = print  # a function's repr: <built-in function print>
    (found,) = settings_in_text(str(args))
    assert found.values["lr"] == 0.1 and found.values["arch"] == "resnet18"
    assert "loss_fn" not in found.values and "resume" not in found.values  # PosixPath('...') is a call


def test_a_command_line_in_a_log():
    argv = ["torchrun", "--nproc_per_node=4", "train.py", "--lr", "0.01", "--batch-size", "32", "--amp",
            "--betas", "0.9", "0.98", "optimizer.eps=1e-6", "--name", "my run"]
    (found,) = settings_in_text(f"[2024-01-01 10:00:00] command: {shlex.join(argv)}\nstep 1 loss 2.0\n")
    assert found.form == "command line" and found.line == 1
    assert found.values == {"nproc_per_node": 4, "lr": 0.01, "batch_size": 32, "amp": True, "betas": [0.9, 0.98],
                            "optimizer.eps": 1e-6, "name": "my run"}


def test_a_python_file_name_in_a_traceback_is_not_a_command():
    log = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\nValueError: x\n'
    assert settings_in_text(log) == []


def test_an_mmdetection_config_dump_with_lines():
    (found,) = read_log_settings(SAMPLES / "mmdet" / "20240311_101500.log")
    assert found.form == "config dump" and found.line == 11
    v = found.values
    assert v["optimizer"] == {"type": "SGD", "lr": 0.02, "momentum": 0.9, "weight_decay": 0.0001}
    assert v["lr_config"]["step"] == [8, 11] and v["runner"]["max_epochs"] == 12
    assert v["model"]["roi_head"]["bbox_head"]["num_classes"] == 80
    assert v["train_pipeline"][1] == {"type": "Resize", "img_scale": [1333, 800], "keep_ratio": True}
    assert "gpu_ids" not in v  # range(0, 1): a call, not a literal
    assert found.lines["optimizer.lr"] == 39 and found.lines["model.roi_head.bbox_head.num_classes"] == 24
    assert found.lines["lr_config.warmup_ratio"] == 45


def test_nothing_in_a_dump_is_executed(tmp_path):
    marker = tmp_path / "pwned"
    log = (f"optimizer = dict(type='SGD', lr=__import__('os').system('touch {marker}'))\n"
           f"a = dict(x=1)\nb = [open('{marker}', 'w')]\nc = 2 ** 1000000\nd = {'9' * 5000}\n"
           f"e = {'[' * 500 + ']' * 500}\nf = 3\n")
    (found,) = settings_in_text(log)
    assert not marker.exists()
    assert found.values["optimizer"] == {"type": "SGD"} and found.values["a"] == {"x": 1}
    assert not {"b", "c", "d", "e"} & set(found.values) and found.values["f"] == 3


def test_plain_assignments_in_a_log_are_not_a_dump():
    assert settings_in_text("x = 5\ny = 6\nz = 'a'\n") == []  # no dict(...): not a config
    assert settings_in_text("loss = dict(a=1)\n") == []  # one statement


def test_hostile_prints_are_skipped_not_parsed_at_length(tmp_path):
    huge = "Namespace(lr=0.1, x='" + "a" * 1_000_000 + "')\n"
    deep = "Namespace(lr=0.1, x=" + "[" * 5000 + "]" * 5000 + ")\n"
    cmd = "python train.py --lr 0.1 --name '" + "b" * 100 + "\n"  # unbalanced quote
    (tmp_path / "train.log").write_text(huge + deep + cmd + "\x00\xff Namespace(lr=\n")
    found = read_log_settings(tmp_path / "train.log")
    assert [(f.form, f.line, f.values) for f in found] == [("Namespace", 2, {"lr": 0.1})]


def test_a_printed_vars_of_args_is_a_settings_dict():
    args = _parser().parse_args(["--lr", "0.01", "--batch-size", "64", "--resume", "ckpt.pt"])
    log = f"INFO starting\n{vars(args)}\nEpoch 1 loss 2.3\n"
    (found,) = settings_in_text(log)
    assert found.form == "dict" and found.line == 2
    assert found.values["lr"] == 0.01 and found.values["batch_size"] == 64 and found.values["betas"] == [0.9, 0.999]
    assert "resume" not in found.values  # PosixPath(...) is not a literal: that key alone is dropped
    assert found.lines["lr"] == 2


def test_a_keras_compile_config_print_gives_the_optimizer_and_rate():
    # a real Keras 3 log: model.summary(), print(model.get_compile_config()), then fit
    from advisor.extract import extract_facts
    from advisor.extract.base import RunPair
    from advisor.inventory import RunFolder

    run = SAMPLES.parent / "fixtures" / "keras_log_only_healthy"
    (found,) = [s for s in settings_in_text((run / "train.log").read_text(encoding="utf-8")) if s.form == "dict"]
    assert found.values["optimizer"]["class_name"] == "Adam" and found.lines["optimizer.config.learning_rate"] == 12
    hp = {f.name: f for f in extract_facts(RunPair(run=RunFolder.scan(run))).facts if f.kind == "hyperparameter"}
    assert hp["optimizer"].value == "adam" and abs(hp["learning_rate"].value - 1e-3) < 1e-9
    assert hp["learning_rate"].source.line == 12


def test_printed_dicts_of_logged_values_are_not_settings():
    lines = [
        "{'loss': '7.473', 'grad_norm': '5.343', 'learning_rate': '0.9', 'epoch': '0.2632'}",  # transformers 5
        "{'loss': 0.6931, 'grad_norm': 1.2, 'learning_rate': 5e-05, 'epoch': 0.5}",  # transformers 4
        "{'eval_loss': 0.52, 'eval_accuracy': 0.81, 'eval_runtime': 0.3, 'epoch': 1.0}",
        "{'train_runtime': 2.19, 'train_samples_per_second': 3281.5, 'train_loss': 1.099, 'epoch': 6.0}",
        "{'Accuracy': 0.94}",  # MindSpore Model.eval
        "{'loss': [2.3, 1.1], 'accuracy': [0.1, 0.6]}",  # a Keras History.history
        "{'step': 10, 'lr': 0.1}",
    ]
    assert settings_in_text("\n".join(lines) + "\n") == []


def test_a_keras_compile_call_gives_optimizer_loss_and_metrics():
    line = "model.compile(optimizer='adam', loss='binary_crossentropy', metrics=['accuracy'])"
    found, header = settings_in_text(f"Model: \"sequential\"\n{line}\nEpoch 1/25\n")
    assert found.form == "compile call" and found.line == 2
    assert (header.form, header.values, header.line) == ("epoch header", {"epochs": 25}, 3)
    assert found.values == {"optimizer": "adam", "loss": "binary_crossentropy", "metrics": ["accuracy"],
                            "framework": "keras"}
    # a constructor gives its class and rate (Keras 2's lr= and a positional rate too)
    for call, name, rate in [
        ("model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.5, momentum=0.9), loss='mse')", "SGD", 0.5),
        (">>> model.compile(loss='categorical_crossentropy', optimizer=Adam(lr=1e-3))", "Adam", 1e-3),
        ("model.compile(tf.keras.optimizers.RMSprop(0.01), loss='mse')", None, None),  # positional: not named
        ("model.compile(optimizer=tf.keras.optimizers.RMSprop(0.01), loss='mse')", "RMSprop", 0.01),
    ]:
        (found,) = settings_in_text(call + "\n")
        assert found.values.get("optimizer") == name and found.values.get("learning_rate") == rate, call
    # other calls named compile, and compile calls with nothing literal, are not settings
    assert settings_in_text("model = torch.compile(model, mode='max-autotune')\n") == []
    assert settings_in_text("model.compile(optimizer=opt, loss=loss_fn)\n") == []
    assert settings_in_text("model.compile(optimizer=__import__('os').system('x'), loss='mse')\n")[0].values == {
        "loss": "mse", "framework": "keras"}  # never called: a name that is not a literal is dropped


def test_an_optimizer_named_in_compile_runs_at_the_keras_default_rate(tmp_path):
    from advisor.extract import extract_facts
    from advisor.extract.base import RunPair
    from advisor.inventory import RunFolder

    log = ("model.compile(optimizer='sgd', loss='sparse_categorical_crossentropy', metrics=['accuracy'])\n"
           "Epoch 1/2\n10/10 - 0s - 3ms/step - accuracy: 0.5 - loss: 1.2\n"
           "Epoch 2/2\n10/10 - 0s - 3ms/step - accuracy: 0.6 - loss: 1.0\n")
    (tmp_path / "train.log").write_text(log)
    hp = {f.name: f for f in extract_facts(RunPair(run=RunFolder.scan(tmp_path))).facts if f.kind == "hyperparameter"}
    assert hp["optimizer"].value == "sgd" and hp["learning_rate"].value == 0.01
    assert hp["learning_rate"].is_default and "keras.io" in hp["learning_rate"].default_source
    # the learning-rate check (and so every evidence text that quotes the rate) says it is the default
    facts = extract_facts(RunPair(run=RunFolder.scan(tmp_path))).facts
    (check,) = [f for f in facts if f.kind == "learning_rate_check"]
    assert check.learning_rate_origin == "Keras' default for compile(optimizer='sgd')"
    assert check.optimizer_origin is None  # the optimizer itself is stated
    # a rate stated elsewhere wins over the default
    (tmp_path / "hparams.yaml").write_text("learning_rate: 0.3\n")
    hp = {f.name: f for f in extract_facts(RunPair(run=RunFolder.scan(tmp_path))).facts if f.kind == "hyperparameter"}
    assert hp["learning_rate"].value == 0.3 and not hp["learning_rate"].is_default


def test_one_setting_printed_alone_on_its_line():
    """print(f"Learning rate = {lr}") before every step, print("Batch size:", 32), a key the vocabulary knows:
    the first print of each is a setting; logged values and unknown names are not."""
    text = (
        "Learning rate = 1.2\nBatch size: 32\nEPOCHS = 30\nloss: 0.5\nEpoch: 3\nseed value = 7\n"
        "step 1 loss 2.3\nLearning rate = 0.6\n"
    )
    found = [(s.form, s.values, s.line) for s in settings_in_text(text)]
    assert found == [
        ("setting line", {"learning_rate": 1.2}, 1),
        ("setting line", {"batch_size": 32}, 2),
        ("setting line", {"epochs": 30}, 3),
    ]


def test_a_config_dump_keeps_its_assignments():
    text = "lr = 0.01\nmomentum = 0.9\noptimizer = dict(type='SGD', lr=0.01)\n"
    (dump,) = settings_in_text(text)
    assert dump.form == "config dump" and dump.values["lr"] == 0.01


def test_a_block_of_assignments_that_is_no_dump_is_scanned_once(monkeypatch):
    """Thousands of ``a = 1`` lines without a dict(...) are no config dump; the block is read once, not again from
    each of its lines (which took minutes on a long log)."""
    import advisor.read.log_settings as ls

    calls = []
    real = ls._config_dump
    monkeypatch.setattr(ls, "_config_dump", lambda lines, start: calls.append(start) or real(lines, start))
    assert settings_in_text("a = 1\n" * 2000) == []
    assert calls == [0]


def test_an_epoch_header_gives_the_epochs_the_run_was_set_to_train():
    """Keras fit prints ``Epoch 1/50`` (the only place its log states the epochs); many torch scripts print
    ``Epoch [1/50]``. The first header counts; a header whose count exceeds its total, or one inside other text,
    is not one."""
    for text in ("Epoch 1/50\n45/45 - 0s - loss: 2.3\nEpoch 2/50\n", "Epoch [1/50]\nEpoch [2/50]\n", "Epoch 0/50:\n"):
        (found,) = settings_in_text(text)
        assert found.form == "epoch header" and found.values == {"epochs": 50}, text
    assert settings_in_text("Epoch 7/5\n") == []
    assert settings_in_text("step 3 Epoch 1/50 loss 2.3\n") == []
    # a printed EPOCHS = 30 comes first: it is the setting
    assert [f.values for f in settings_in_text("EPOCHS = 30\nEpoch 1/50\n")] == [{"epochs": 30}]
