"""Settings a training script states in its code: the optimizer's call, Keras' ``compile``/``fit``, the training
DataLoader, ``TrainingArguments`` and Lightning's ``Trainer``, argparse defaults and upper-case constants.

Only literals are taken (a number, a string, True/False), or a name the script binds to one (``LR = 1e-3`` then
``lr=LR``; ``parser.add_argument('--lr', default=0.01)`` then ``lr=args.lr``). A value the script computes is
left out. These settings count only where no settings file and no print in the log gives them (the log's
``Namespace(...)`` says what the command line changed): extract/view/settings.py takes them last.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from advisor.extract.code.calls import LOSSES, OPTIMIZERS, method
from advisor.extract.code.index import MISSING, CodeIndex, constant, dotted, index_of, keyword, last_name
from advisor.knowledge.settings import SYNONYMS
from advisor.read.log_settings import LogSettings
from advisor.read.scripts import ScriptFile

#: how a finder records a setting: (name, value or MISSING, line); the first value of a name is kept
Put = Callable[[str, Any, int], None]

#: optimizer classes (not factories) whose name is the optimizer setting
_OPTIMIZER_CLASSES = OPTIMIZERS - {"create_optimizer", "configure_optimizers", "get_optimizer", "build_optimizer"}
#: keyword arguments of a training call taken as settings, by the call's last name
CALL_SETTINGS: dict[str, tuple[str, ...]] = {
    "fit": ("epochs", "batch_size", "validation_split", "shuffle", "class_weight"),
    "DataLoader": ("batch_size",),
    "clip_grad_norm_": ("max_norm",),
}
#: calls whose every literal keyword is a setting
ALL_KEYWORDS = frozenset({"TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "Trainer"})
#: what a positional argument of an optimizer class is (after the parameters)
POSITIONAL_OPTIMIZER = ("lr",)


def code_settings(scripts: list[ScriptFile]) -> list[tuple[str, LogSettings]]:
    """(script shown, its settings) for each parsed script that states some."""
    out = []
    for script in scripts:
        index = index_of(script)
        found = script_settings(index) if index is not None else None
        if found is not None:
            out.append((script.shown, found))
    return out


def _value(index: CodeIndex, node: ast.AST | None, defaults: dict[str, Any]) -> Any:
    """A literal, or the literal a name stands for; MISSING otherwise."""
    value = constant(node)
    if value is not MISSING:
        return value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_value(index, e, defaults) for e in node.elts]
        return MISSING if any(i is MISSING for i in items) else items
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return defaults.get(node.attr, MISSING)  # args.lr -> the argparse default
    if isinstance(node, ast.Attribute) and dotted(node.value) == "self.hparams":
        return _init_default(index, node.attr)  # Lightning: self.hparams.lr -> __init__(self, lr=1e-3)
    if isinstance(node, ast.Name):
        bound = index.bindings.get(node.id, [])
        if len(bound) == 1:
            return constant(bound[0])
    return MISSING


def _init_default(index: CodeIndex, name: str) -> Any:
    """The literal default of ``name`` in a class's ``__init__`` (what ``save_hyperparameters`` records)."""
    for fn in index.functions.get("__init__", []):
        args = fn.args.args[len(fn.args.args) - len(fn.args.defaults) :]
        for arg, default in zip(args, fn.args.defaults):
            if arg.arg == name:
                return constant(default)
        for kwarg, kw_default in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
            if kwarg.arg == name and kw_default is not None:
                return constant(kw_default)
    return MISSING


def argparse_defaults(index: CodeIndex) -> dict[str, tuple[Any, int]]:
    """dest -> (default, line) of every ``add_argument('--name', default=<literal>)``."""
    out: dict[str, tuple[Any, int]] = {}
    for call in index.calls:
        if method(call) != "add_argument":
            continue
        default = constant(keyword(call, "default"))
        if default is MISSING or default is None:
            continue
        dest = constant(keyword(call, "dest"))
        if not isinstance(dest, str):
            flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            longs = [f for f in flags if f.startswith("--")] or flags
            if not longs:
                continue
            dest = longs[0].lstrip("-").replace("-", "_")
        out.setdefault(dest, (default, call.lineno))
    return out


def script_settings(index: CodeIndex) -> LogSettings | None:
    """The settings the script states, with the line of each; None when it states none."""
    parsed = argparse_defaults(index)
    defaults = {k: v for k, (v, _) in parsed.items()}
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}

    def put(key: str, value: Any, line: int) -> None:
        if value is not MISSING and key not in values:
            values[key] = value
            lines[key] = line

    _constants(index, put)
    for key, (value, line) in parsed.items():
        if key in SYNONYMS:
            put(key, value, line)
    for call in index.calls:
        _call_settings(index, call, defaults, put)
    _class_count(index, values, put)
    _precision(index, put)
    if "framework" not in values and _imports(index, "torch") and "optimizer" in values:
        put("framework", "pytorch", min(lines.values()))
    if not values:
        return None
    return LogSettings(form="training script", line=min(lines.values()), values=values, lines=lines)


def _constants(index: CodeIndex, put: Put) -> None:
    """``LEARNING_RATE = 1e-3`` at the top of the script: an upper-case name the vocabulary knows."""
    for stmt in index.tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if name.isupper() and name.lower() in SYNONYMS:
                put(name.lower(), constant(stmt.value), stmt.lineno)


def _call_settings(index: CodeIndex, call: ast.Call, defaults: dict[str, Any], put: Put) -> None:
    name = last_name(call.func)
    if name in _OPTIMIZER_CLASSES and (call.args or call.keywords):
        put("optimizer", name.lower(), call.lineno)
        for kw in call.keywords:
            if kw.arg in ("lr", "learning_rate", "momentum", "weight_decay", "eps", "epsilon", "nesterov"):
                put(kw.arg, _value(index, kw.value, defaults), call.lineno)
        rates = call.args[1:] if call.args and _parameters(call.args[0]) else call.args  # torch: params first
        for key, arg in zip(POSITIONAL_OPTIMIZER, rates):
            put(key, _value(index, arg, defaults), call.lineno)
    elif name in LOSSES and name[:1].isupper() and index.enclosing(call, (ast.Call,)) is None:
        put("loss", name, call.lineno)  # criterion = nn.CrossEntropyLoss()
    elif method(call) == "compile" and keyword(call, "loss") is not None:
        _compile_settings(index, call, defaults, put)
    elif name in ALL_KEYWORDS:
        for kw in call.keywords:
            if kw.arg is not None:
                put(kw.arg, _value(index, kw.value, defaults), call.lineno)
    elif name.endswith("Config") and name[:1].isupper():  # a model built from a config: BertConfig(num_labels=3)
        for kw in call.keywords:
            if kw.arg is not None and kw.arg in SYNONYMS:
                put(kw.arg, _value(index, kw.value, defaults), call.lineno)
    else:
        wanted = CALL_SETTINGS.get(name) or CALL_SETTINGS.get(method(call), ())
        if name == "DataLoader" and not _trains(call):
            return
        for kw in call.keywords:
            if kw.arg in wanted:
                put(kw.arg, _value(index, kw.value, defaults), call.lineno)


#: schedulers: classes of torch.optim.lr_scheduler and transformers' get_*_schedule* factories
_SCHEDULER_SUFFIXES = ("LR", "Scheduler", "Warmup")


def _precision(index: CodeIndex, put: Put) -> None:
    """Mixed precision as the code sets it: ``model.half()`` (pure fp16), ``autocast(dtype=torch.bfloat16)``,
    ``torch.autocast("cuda")``/``torch.cuda.amp.autocast()`` (fp16 by default on CUDA), a ``GradScaler`` (dynamic
    loss scaling); and the learning-rate scheduler's class."""
    for call in index.calls:
        name = last_name(call.func)
        if method(call) in ("half",) and not call.args:
            put("precision", "fp16", call.lineno)
        elif name == "autocast":
            dtype = keyword(call, "dtype")
            device = constant(call.args[0]) if call.args else constant(keyword(call, "device_type"))
            if dtype is not None:
                put("precision", "bf16" if "bfloat16" in dotted(dtype) else "fp16", call.lineno)
            elif device != "cpu":  # CUDA autocast defaults to float16 (CPU autocast to bfloat16)
                put("precision", "fp16", call.lineno)
        elif name == "GradScaler":
            put("loss_scale", "dynamic", call.lineno)
        elif name.endswith(_SCHEDULER_SUFFIXES) or ("schedule" in name.lower() and name.startswith("get_")):
            put("lr_scheduler", name, call.lineno)


def _imports(index: CodeIndex, module: str) -> bool:
    for stmt in ast.walk(index.tree):
        if isinstance(stmt, ast.Import) and any(a.name.split(".")[0] == module for a in stmt.names):
            return True
        if isinstance(stmt, ast.ImportFrom) and (stmt.module or "").split(".")[0] == module:
            return True
    return False


def _class_count(index: CodeIndex, values: dict[str, Any], put: Put) -> None:
    """The classes a classifier has: the output units of its last ``nn.Linear`` (PyTorch, trained with a loss of
    class ids) or of the Keras output layer (with a categorical crossentropy): where no setting names them."""
    loss = str(values.get("loss", "")).lower()
    if "num_classes" not in values and ("crossentropy" in loss.replace("_", "") or "nll" in loss):
        units = [c for c in index.calls if last_name(c.func) in ("Linear", "Dense")]
        if not units:
            return
        last = units[-1]
        arg = keyword(last, "out_features") or keyword(last, "units")
        if arg is None and last.args:
            arg = last.args[1] if last_name(last.func) == "Linear" and len(last.args) > 1 else last.args[0]
        count = constant(arg)
        if isinstance(count, int) and not isinstance(count, bool):
            if count >= 2:
                put("num_classes", count, last.lineno)
            elif count == 1 and "binary" in loss:
                put("num_classes", 2, last.lineno)


def _parameters(arg: ast.expr) -> bool:
    """``model.parameters()``, ``params``, a list of parameter groups: what a torch optimizer takes first."""
    text = dotted(arg).lower()
    return "param" in text or isinstance(arg, (ast.List, ast.ListComp, ast.GeneratorExp, ast.Call))


def _trains(loader: ast.Call) -> bool:
    data = loader.args[0] if loader.args else keyword(loader, "dataset")
    return data is not None and "train" in dotted(data).lower()


def _compile_settings(index: CodeIndex, call: ast.Call, defaults: dict[str, Any], put: Put) -> None:
    """Keras ``compile(optimizer=..., loss=..., metrics=[...])``."""
    opt = keyword(call, "optimizer")
    if opt is not None:
        opt = index.resolve(opt)
        if isinstance(opt, ast.Call):
            put("optimizer", last_name(opt.func).lower(), call.lineno)
            rate = keyword(opt, "learning_rate") or keyword(opt, "lr")
            if rate is not None:
                put("learning_rate", _value(index, rate, defaults), call.lineno)
        else:
            put("optimizer", _value(index, opt, defaults), call.lineno)
    stated = keyword(call, "loss")
    if stated is None:
        return
    loss = index.resolve(stated)
    put("loss", last_name(loss.func) if isinstance(loss, ast.Call) else _value(index, loss, defaults), call.lineno)
    if isinstance(loss, ast.Call):
        put("from_logits", constant(keyword(loss, "from_logits")), call.lineno)
    metrics = keyword(call, "metrics")
    if metrics is not None:
        put("metrics", _value(index, metrics, defaults), call.lineno)
    put("framework", "keras", call.lineno)
