"""Generate the mutation corpus: small standard training programs, each run healthy and then with
one fault operator applied at a time (the operators of the DeepFD / DEFault / AUTOTRAINER
taxonomies: loss, output activation, hidden activation, learning rate, optimizer, epochs,
initialisation, normalisation, labels, batch size), keeping what the frameworks print and save.

    python benchmarks/mutations/generate.py [--out benchmarks/mutations/generated] [--only PROGRAM ...] [-j 2]
    python benchmarks/accuracy.py --runs benchmarks/mutations/generated --no-committed --by operator

Everything runs offline on CPU (scikit-learn's bundled data sets), a few seconds per run. The
output folder is ignored by git. labels.json maps each run to its true cause (the cause an expert
names for that fault), the causes an expert would accept as equally right (also_ok) and the
fault operator, in the layout benchmarks/accuracy.py reads.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
DEFAULT_OUT = HERE / "generated"

_CLS = {"hidden_act": "relu", "init": "default", "normalize": True, "label_noise": 0.0, "seed": 0}

#: program name -> (runner, healthy settings)
PROGRAMS: dict[str, tuple[str, dict]] = {
    "keras_mlp_digits": ("keras", {**_CLS, "dataset": "digits", "task": "multiclass", "hidden": [64],
                                   "out_units": 10, "out_act": "softmax", "loss": "sparse_categorical_crossentropy",
                                   "metrics": ["accuracy"], "optimizer": "adam", "lr": 1e-3, "epochs": 20,
                                   "batch_size": 32}),
    "keras_cnn_digits": ("keras", {**_CLS, "dataset": "digits", "task": "multiclass", "conv": 8, "hidden": [],
                                   "out_units": 10, "out_act": "softmax", "loss": "categorical_crossentropy",
                                   "one_hot": True, "metrics": ["accuracy"], "optimizer": "adam", "lr": 2e-3,
                                   "epochs": 15, "batch_size": 32, "write_num_classes": True}),
    "keras_binary_cancer": ("keras", {**_CLS, "dataset": "cancer", "task": "binary", "hidden": [16],
                                      "out_units": 1, "out_act": "sigmoid", "loss": "binary_crossentropy",
                                      "metrics": ["accuracy"], "optimizer": "adam", "lr": 1e-3, "epochs": 25,
                                      "batch_size": 32, "print_style": "call"}),
    "keras_logits_iris": ("keras", {**_CLS, "dataset": "iris", "task": "multiclass", "hidden": [16],
                                    "out_units": 3, "out_act": None, "loss": "sparse_categorical_crossentropy",
                                    "from_logits": True, "metrics": ["accuracy"], "optimizer": "adam", "lr": 1e-2,
                                    "epochs": 40, "batch_size": 16}),
    "keras_regression_diabetes": ("keras", {**_CLS, "dataset": "diabetes", "task": "regression", "hidden": [32],
                                            "out_units": 1, "out_act": None, "loss": "mse", "metrics": ["mae"],
                                            "optimizer": "adam", "lr": 1e-3, "epochs": 40, "batch_size": 32}),
    "torch_mlp_digits": ("torch", {**_CLS, "dataset": "digits", "task": "multiclass", "n_classes": 10, "hidden": [64],
                                   "out_units": 10, "out_act": None, "loss": "CrossEntropyLoss", "optimizer": "adam",
                                   "lr": 1e-3, "epochs": 15, "batch_size": 32, "write_num_classes": True}),
    "torch_binary_cancer": ("torch", {**_CLS, "dataset": "cancer", "task": "binary", "n_classes": 2, "hidden": [16],
                                      "out_units": 1, "out_act": None, "loss": "BCEWithLogitsLoss", "optimizer": "sgd",
                                      "momentum": 0.9, "lr": 0.01, "epochs": 25, "batch_size": 32}),
    "torch_regression_diabetes": ("torch", {**_CLS, "dataset": "diabetes", "task": "regression", "hidden": [32],
                                            "out_units": 1, "out_act": None, "loss": "MSELoss", "optimizer": "adam",
                                            "lr": 1e-3, "epochs": 40, "batch_size": 32}),
    "lightning_mlp_wine": ("lightning", {**_CLS, "dataset": "wine", "task": "multiclass", "n_classes": 3,
                                         "hidden": [32], "out_units": 3, "out_act": None, "loss": "CrossEntropyLoss",
                                         "optimizer": "adam", "lr": 3e-3, "epochs": 40, "batch_size": 16,
                                         "write_num_classes": True, "log_every": 2}),
    "lightning_mlp_digits": ("lightning", {**_CLS, "dataset": "digits", "task": "multiclass", "n_classes": 10,
                                           "hidden": [64], "out_units": 10, "out_act": None,
                                           "loss": "CrossEntropyLoss", "optimizer": "sgd", "momentum": 0.9,
                                           "lr": 0.05, "epochs": 10, "batch_size": 32}),
    "mindspore_mlp_digits": ("mindspore", {**_CLS, "net": "mlp", "dataset": "digits", "task": "multiclass",
                                           "n_classes": 10, "hidden": [64], "optimizer": "momentum",
                                           "momentum": 0.9, "lr": 0.01, "epochs": 10, "batch_size": 32}),
    "mindspore_mlp_wine": ("mindspore", {**_CLS, "net": "mlp", "dataset": "wine", "task": "multiclass",
                                         "n_classes": 3, "hidden": [32], "optimizer": "adam", "lr": 3e-3,
                                         "epochs": 30, "batch_size": 16, "amp_level": "O2",
                                         "loss_scale": 1024.0}),
    **importlib.import_module("hf_programs").PROGRAMS,  # Hugging Face Trainer programs (runner "hf")
    **importlib.import_module("hf_finetune_programs").PROGRAMS,  # fine-tuning a pre-trained GPT-2 (runner "hf_ft")
    **importlib.import_module("keras_bar_programs").PROGRAMS,  # Keras at default verbosity (runner "kerasbar")
    **importlib.import_module("lightning_bar_programs").PROGRAMS,  # Lightning defaults: bar, TensorBoard
}


def operators(base: dict) -> list[tuple[str, dict, str, list[str]]]:
    """(operator, changed settings, true cause, also-acceptable causes) applicable to a program."""
    if "net" in base:
        return importlib.import_module("mindspore_programs").operators(base)  # MindSpore programs carry their own
    if base.get("runner") == "hf":
        return importlib.import_module("hf_programs").operators(base)  # so do the Hugging Face Trainer programs
    if base.get("runner") == "hf_ft":
        return importlib.import_module("hf_finetune_programs").operators(base)
    if base.get("runner") == "kerasbar":
        return importlib.import_module("keras_bar_programs").operators(base)
    if base.get("runner") == "lightning_bar":
        return importlib.import_module("lightning_bar_programs").operators(base)
    keras = "metrics" in base
    task = base["task"]
    ops: list[tuple[str, dict, str, list[str]]] = []
    # loss
    if keras and task == "multiclass":
        ops.append(("loss", {"loss": "mse", "from_logits": False, "out_act": "softmax", "one_hot": True},
                    "loss_function_error", []))
    elif keras and task == "binary":
        ops.append(("loss", {"loss": "categorical_crossentropy"}, "loss_function_error", []))
    elif keras and task == "regression":
        ops.append(("metric", {"metrics": ["accuracy"]}, "metric_misuse", []))
    elif task == "multiclass":
        ops.append(("loss", {"loss": "MSELoss", "out_units": 1}, "loss_function_error", []))
    # (plain PyTorch binary: every wrong loss for one logit raises - CrossEntropyLoss/NLLLoss index out of
    # bounds, BCELoss refuses values outside [0, 1] - so there is no silent loss fault to inject)
    # output activation
    if keras and base.get("from_logits"):
        ops.append(("output_activation", {"out_act": "softmax"}, "loss_function_error", []))
    elif keras and task == "multiclass":
        ops.append(("output_activation", {"out_act": "sigmoid"}, "loss_function_error", []))
    elif keras and task == "binary":
        ops.append(("output_activation", {"out_act": None}, "loss_function_error", []))
    elif task == "regression":
        ops.append(("output_activation", {"out_act": "sigmoid"}, "loss_function_error", ["wrong_operator"]))
    elif task == "multiclass":
        ops.append(("output_activation", {"out_act": "softmax"}, "loss_function_error", []))
    else:
        ops.append(("output_activation", {"out_act": "sigmoid"}, "loss_function_error", []))
    # hidden activation: removed (linear layers stacked)
    if base["hidden"] and not base.get("conv"):
        ops.append(("hidden_activation", {"hidden_act": None, "hidden": base["hidden"] + [base["hidden"][-1]]},
                    "wrong_operator", []))
    # learning rate
    ops.append(("lr_high", {"lr": base["lr"] * (1000 if base["optimizer"] == "adam" else 100)}, "lr_too_high",
                ["gradient_explosion"]))
    ops.append(("lr_low", {"lr": base["lr"] / 1000}, "lr_too_low", []))
    # optimizer: Adam swapped for plain SGD at the same rate
    if base["optimizer"] == "adam":
        ops.append(("optimizer", {"optimizer": "sgd", "momentum": 0.0}, "lr_too_low", ["optimizer_error"]))
    else:
        ops.append(("optimizer", {"optimizer": "adam"}, "lr_too_high", ["optimizer_error"]))
    ops.append(("epochs", {"epochs": 2}, "insufficient_epochs", []))
    ops.append(("init", {"init": "zeros"}, "weight_init_bad", []))
    if task != "regression" or base["dataset"] != "diabetes":
        ops.append(("normalization", {"normalize": False}, "not_normalized", []))
    if task != "regression":
        ops.append(("labels", {"label_noise": 0.4}, "label_errors", []))
    ops.append(("batch_size", {"batch_size": 1024}, "insufficient_epochs", ["lr_too_low"]))
    return ops + EXTRA_OPERATORS.get(base["dataset"] + ("_keras" if keras else "_torch") + ("_cnn" if base.get("conv")
                                                                                           else ""), [])


#: operator variant -> the fault operator it belongs to (what benchmarks/accuracy.py --by operator groups on)
FAMILY = {"loss_binary": "loss", "loss_bce_on_class_ids": "loss", "output_units": "output_layer",
          "output_dropout": "output_layer", "hidden_activation_deep_sigmoid": "hidden_activation",
          "output_activation_relu": "output_activation", "output_activation_softmax_one_unit": "output_activation"}

#: further variants of the loss / output / hidden-activation operators, on the program they fit
EXTRA_OPERATORS: dict[str, list[tuple[str, dict, str, list[str]]]] = {
    "digits_keras_cnn": [("loss_binary", {"loss": "binary_crossentropy"}, "loss_function_error", [])],
    "digits_torch": [
        ("loss_bce_on_class_ids", {"loss": "BCEWithLogitsLoss", "out_units": 1}, "loss_function_error", []),
        ("output_units", {"out_units": 12}, "loss_function_error", []),
        ("output_dropout", {"out_dropout": 0.5}, "wrong_operator", []),
        ("hidden_activation_deep_sigmoid", {"hidden": [64] * 6, "hidden_act": "sigmoid", "optimizer": "sgd",
                                            "momentum": 0.9, "lr": 0.01},
         "gradient_vanishing", ["activation_saturation"]),
    ],
    "wine_torch": [("output_activation_relu", {"out_act": "relu"}, "loss_function_error", [])],
    "cancer_keras": [("output_activation_softmax_one_unit", {"out_act": "softmax"}, "loss_function_error", [])],
}


def _runner(kind: str):
    """The run function of a runner kind (its module imported only when a program of that kind runs)."""
    if kind in ("mindspore", "keras", "hf", "hf_ft", "kerasbar", "lightning_bar"):
        return importlib.import_module({"mindspore": "mindspore_programs", "keras": "keras_programs",
                                        "hf": "hf_programs", "hf_ft": "hf_finetune_programs",
                                        "kerasbar": "keras_bar_programs",
                                        "lightning_bar": "lightning_bar_programs"}[kind]).run
    import torch_programs

    return torch_programs.run_torch if kind == "torch" else torch_programs.run_lightning


def run_program(name: str, out: Path, only_ops: list[str] | None = None) -> dict:
    """Run one program healthy and under every operator, in this process; its labels."""
    kind, base = PROGRAMS[name]
    run = _runner(kind)
    labels = {}
    variants = [("healthy", {}, None, [])] + operators(base)
    if only_ops:
        variants = [v for v in variants if v[0] in only_ops]
    for op, changes, cause, also_ok in variants:
        folder = out / name / op
        t0 = time.perf_counter()
        run({**base, **changes}, folder)
        labels[f"{name}/{op}"] = {"cause": cause, "also_ok": also_ok, "operator": FAMILY.get(op, op.split("_seed")[0]),
                                  "variant": op,
                                  "program": name,
                                  "run": f"{name}/{op}", "baseline": None,
                                  "note": f"{name}: {op} {json.dumps(changes)}" if changes else f"{name}: healthy",
                                  "seconds": round(time.perf_counter() - t0, 1)}
        print(f"{name}/{op}: {labels[f'{name}/{op}']['seconds']} s", flush=True)
    return labels


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--only", nargs="+", default=[], help="program names")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--ops", nargs="+", default=[], help="only these operators (and healthy)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # child mode: one program
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.one:
        labels = run_program(args.one, out, args.ops)
        (out / args.one / "labels.part.json").write_text(json.dumps(labels), encoding="utf-8")
        return 0
    names = args.only or list(PROGRAMS)
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "KERAS_BACKEND": "torch", "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    procs: list[tuple[str, subprocess.Popen]] = []
    pending = list(names)
    failed = []
    while pending or procs:
        while pending and len(procs) < max(1, args.jobs):
            name = pending.pop(0)
            cmd = [sys.executable, __file__, "--one", name, "--out", str(out)] + (["--ops", *args.ops] if args.ops else [])
            procs.append((name, subprocess.Popen(cmd, env=env)))
        name, proc = procs.pop(0)
        if proc.wait() != 0:
            failed.append(name)
    labels: dict = {}
    path = out / "labels.json"
    if path.is_file():
        labels = json.loads(path.read_text(encoding="utf-8"))
    for name in names:
        part = out / name / "labels.part.json"
        if part.is_file():
            labels.update(json.loads(part.read_text(encoding="utf-8")))
            part.unlink()
    path.write_text(json.dumps(dict(sorted(labels.items())), indent=1), encoding="utf-8")
    print(f"{len(labels)} runs in {path}" + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
