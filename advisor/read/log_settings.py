"""Settings printed in a training log -> nested mappings with the line of each key. No judgement.

The shapes read, all common at the top of real logs:

- a config dump, as mmdetection/mmengine print it after ``Config:``: statements
  ``optimizer = dict(type='SGD', lr=0.02, momentum=0.9)`` at the start of a line,
  continued over indented lines. A block of at least ``MIN_DUMP_STATEMENTS``
  consecutive statements, one of them a ``dict(...)``, is taken as a dump;
- an argparse ``Namespace(lr=0.01, batch_size=32, ...)`` print;
- the command line of the run: ``python train.py --lr 0.01 --bs 32``, ``torchrun
  --nproc_per_node 8 train.py ...``, Hydra overrides ``optimizer.lr=0.1``;
- a settings mapping printed whole on one line: ``print(vars(args))`` ``{'lr': 0.01, 'batch_size': 32}``,
  Keras ``print(model.get_compile_config())`` ``{'optimizer': {'class_name': 'Adam', 'config':
  {'learning_rate': 0.001, ...}}, 'loss': ...}``; a printed dict that holds logged values (a numeric
  ``loss``/``accuracy``, an ``epoch`` or ``step``: Hugging Face Trainer's log lines, as the log reader judges
  them) is not settings, and
  only the first ``MAX_DICT_LINES`` dict-shaped lines are tried;
- a Keras ``model.compile(optimizer='adam', loss='binary_crossentropy', metrics=['accuracy'])`` call as a
  script echoes it (or as it stands in a pasted excerpt): ``optimizer`` (a name, or ``Adam(learning_rate=0.01)``
  whose class and learning rate are taken), ``loss`` and ``metrics``, under the framework ``keras`` (an
  optimizer given by name is built by Keras with its default learning rate: extract/hparams.py adds it);
- the block Hugging Face ``Trainer`` logs at INFO level (as the transformers example scripts set it)
  when training starts: ``***** Running training *****`` then ``  Num examples = 1,200``,
  ``  Total optimization steps = 228``, ``  Number of trainable parameters = 75,139``, ... each
  taken under the ``TrainingArguments`` name it reports (``HF_TRAINER_BLOCK``);
- peft's ``model.print_trainable_parameters()``: ``trainable params: 294,912 || all params: 125,315,328 ||
  trainable%: 0.2353``: the trainable count as the vocabulary's ``num_parameters``, the others as written
  (``all_params``, ``trainable%``);
- one setting printed alone on its line, ``Learning rate = 1.2``, ``lr: 0.001``, ``Batch size: 32``, ``EPOCHS =
  30``: a name the settings vocabulary knows (``advisor/knowledge/settings.py``, spaces and hyphens read as
  underscores) and one number; the first print of each name is taken (a script that prints its rate at every
  step prints the rate it set first), and a line of logged values (``loss: 0.5``) is no setting;
- the epoch header of a fit loop, ``Epoch 1/50`` (Keras ``fit``; ``Epoch [1/50]`` as many torch scripts print
  it): the number after the slash is the epochs the run was set to train, taken from the first header as
  ``epochs`` (the only place a Keras log states it);
- the line Lightning's fit loop logs (INFO, to stderr) when training ends on its budget:
  "Trainer.fit stopped: max_epochs=12 reached." (backquoted names; or ``max_steps``): the ``Trainer`` argument and
  its value, the only place a log states it when the script does not print its settings.

Nothing is executed: the text is parsed with ``ast.parse`` and only literal
constants are taken (numbers, strings, booleans, None, lists, tuples, dicts and
``dict(key=...)`` calls); any other expression (a name, a call, arithmetic) drops
that one key. Statement size, nesting depth and the part of the file read are capped.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.knowledge.settings import SYNONYMS
from advisor.read.logs.keys import holds_logged_values

#: only the start of a log is searched: settings are printed before training
HEAD_BYTES = 4_000_000
MAX_STATEMENT_LINES = 3000
MAX_STATEMENT_CHARS = 300_000
MAX_DEPTH = 32
MIN_DUMP_STATEMENTS = 3
#: a Namespace print or a command line longer than this is not read
MAX_LINE_CHARS = 65_536
#: dict-shaped lines tried as printed settings (they are printed before training; a Trainer log has thousands)
MAX_DICT_LINES = 50

_SKIP = object()  # a value that is not a literal: the key is dropped

#: Trainer's "***** Running training *****" lines -> the setting each one reports
HF_TRAINER_BLOCK = {
    "num examples": "num_train_examples",
    "num epochs": "num_train_epochs",
    "instantaneous batch size per device": "per_device_train_batch_size",
    "total train batch size (w. parallel, distributed & accumulation)": "total_train_batch_size",
    "gradient accumulation steps": "gradient_accumulation_steps",
    "total optimization steps": "max_steps",
    "number of trainable parameters": "num_parameters",  # the vocabulary's num_parameters: trainable ones
}
_HF_BLOCK_START = "***** Running training *****"
#: Lightning's fit loop, when the budget ends training (lightning/pytorch/loops/fit_loop.py)
_LIGHTNING_STOP_START = "`Trainer.fit` stopped: `max_"
_LIGHTNING_STOP = re.compile(r"`Trainer\.fit` stopped: `(max_epochs|max_steps)=(\d{1,12})` reached\.")
#: peft ``PeftModel.print_trainable_parameters``: f"trainable params: {trainable_params:,d} || all params:
#: {all_param:,d} || trainable%: {100 * trainable_params / all_param:.4f}"
_PEFT_PARAMS_START = "trainable params: "
_PEFT_PARAMS = re.compile(
    r"trainable params: ([\d,]{1,24}) \|\| all params: ([\d,]{1,24}) \|\| trainable%: (\d{1,3}(?:\.\d{1,12})?)"
)
_HF_BLOCK_LINE = re.compile(r"^(?:.*?\S)??\s{2,}([A-Za-z][\w ().,&-]*?)\s+=\s+([\d,]+(?:\.\d+)?)\s*$")

_ASSIGN = re.compile(r"^([A-Za-z_]\w*)\s*=\s*(\S)")
_LITERAL_START = re.compile(r"dict\(|[\[{(\"'\-+.\d]|True\b|False\b|None\b")
_NAMESPACE = re.compile(r"\bNamespace\((.*)\)\s*$")
_COMPILE = re.compile(r"\.compile\((.*)\)\s*$")
_COMMAND = re.compile(r"(?:^|[\s:$>#])((?:\S*/)?(?:python[\d.]*|torchrun|deepspeed|accelerate\s+launch)\s.*)$")
_SCRIPT = re.compile(r"\S+\.py$")
_HYDRA = re.compile(r"^\+{0,2}([A-Za-z_][\w.]*)=(.*)$")
_EPOCH_HEADER = re.compile(r"^\s*Epoch\s*\[?\s*(\d{1,9})\s*/\s*(\d{1,9})\s*\]?\s*:?\s*$")
_SETTING_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z _-]{0,40}?)\s*[=:]\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
#: single-setting lines read per log (a script that prints its rate at every step is read once)
MAX_SETTING_LINES = 2000


@dataclass
class LogSettings:
    """The settings of one shape found in a log."""

    form: str  # "config dump" | "dict" | "Namespace" | "command line" | "Trainer" | "compile call"
    line: int  # first line (1-based)
    values: dict[str, Any] = field(default_factory=dict)  # nested for a config dump
    lines: dict[str, int] = field(default_factory=dict)  # dotted key -> line


def read_log_settings(path: Path) -> list[LogSettings]:
    """Every settings print in the first ``HEAD_BYTES`` of the log at ``path`` (in file order)."""
    with open(path, "rb") as fh:
        head = fh.read(HEAD_BYTES)
    return settings_in_text(head.decode("utf-8", errors="replace"))


def settings_in_text(text: str) -> list[LogSettings]:
    lines = text.split("\n")
    out: list[LogSettings] = []
    dict_lines = 0
    setting_lines = 0
    named: set[str] = set()
    no_dump_before = 0  # a block of assignments already found to be no dump is not scanned again from each line
    i = 0
    while i < len(lines):
        line = lines[i]
        if (  # (what every shape below needs; most lines of a log hold none of it)
            "=" not in line
            and ":" not in line
            and "(" not in line
            and "{" not in line
            and "Epoch" not in line
            and "*****" not in line
            and ".py" not in line
        ):
            i += 1
            continue
        if (
            i >= no_dump_before
            and "=" in line
            and _ASSIGN.match(line)
            and _LITERAL_START.match(line.split("=", 1)[1].lstrip())
        ):
            dump, nxt = _config_dump(lines, i)
            if dump is not None:
                out.append(dump)
                i = nxt
                continue
            no_dump_before = nxt
        if setting_lines < MAX_SETTING_LINES and len(line) <= 80 and (m := _SETTING_LINE.match(line)):
            setting_lines += 1
            key = re.sub(r"[\s-]+", "_", m.group(1).strip()).lower()
            if key in SYNONYMS and key not in named and not holds_logged_values([key]):
                named.add(key)
                value = _scalar(m.group(2))
                out.append(LogSettings(form="setting line", line=i + 1, values={key: value}, lines={key: i + 1}))
            i += 1
            continue
        if len(line) > MAX_LINE_CHARS:
            pass
        elif "epochs" not in named and line.lstrip()[:5] == "Epoch" and (m := _EPOCH_HEADER.match(line)):
            if 0 <= int(m.group(1)) <= int(m.group(2)):
                named.add("epochs")
                out.append(
                    LogSettings(
                        form="epoch header", line=i + 1, values={"epochs": int(m.group(2))}, lines={"epochs": i + 1}
                    )
                )
        elif _HF_BLOCK_START in line:
            block = _hf_trainer_block(lines, i)
            if block is not None:
                out.append(block)
        elif _PEFT_PARAMS_START in line:
            m = _PEFT_PARAMS.search(line)
            if m is not None:
                values = {
                    "num_parameters": int(m.group(1).replace(",", "")),
                    "all_params": int(m.group(2).replace(",", "")),
                    "trainable%": float(m.group(3)),
                }
                out.append(
                    LogSettings(form="peft print", line=i + 1, values=values, lines=dict.fromkeys(values, i + 1))
                )
        elif _LIGHTNING_STOP_START in line:
            m = _LIGHTNING_STOP.search(line)
            if m is not None:
                out.append(
                    LogSettings(
                        form="Lightning stop message",
                        line=i + 1,
                        values={m.group(1): int(m.group(2))},
                        lines={m.group(1): i + 1},
                    )
                )
        elif dict_lines < MAX_DICT_LINES and line.lstrip()[:1] == "{" and line.rstrip()[-1:] == "}":
            dict_lines += 1
            printed = _settings_dict(line.strip(), i + 1)
            if printed is not None:
                out.append(printed)
        elif "Namespace(" in line:
            ns = _namespace(line, i + 1)
            if ns is not None:
                out.append(ns)
        elif ".compile(" in line:
            call = _compile_call(line, i + 1)
            if call is not None:
                out.append(call)
        elif ".py" in line:
            cmd = _command_line(line, i + 1)
            if cmd is not None:
                out.append(cmd)
        i += 1
    return out


# -- literal evaluation (never eval) ------------------------------------------------
def _literal(node: ast.AST, depth: int = 0) -> Any:
    """The value of a literal expression, or ``_SKIP`` for anything else."""
    if depth > MAX_DEPTH:
        return _SKIP
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, (str, int, float, bool, type(None))) else _SKIP
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _literal(node.operand, depth + 1)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
        return _SKIP
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(e, depth + 1) for e in node.elts]
        return _SKIP if any(v is _SKIP for v in items) else items
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values):
            key = _literal(k, depth + 1) if k is not None else _SKIP
            if isinstance(key, (str, int, float, bool)):
                value = _literal(v, depth + 1)
                if value is not _SKIP:
                    out[key] = value
        return out
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        out = {}
        for kw in node.keywords:
            if kw.arg is None:
                continue  # dict(**other): not a literal
            value = _literal(kw.value, depth + 1)
            if value is not _SKIP:
                out[kw.arg] = value
        return out
    return _SKIP


def _key_lines(node: ast.AST, prefix: str, offset: int, out: dict[str, int], depth: int = 0) -> None:
    """Line of every dotted key of a ``dict(...)`` / ``{...}`` literal (as ``flatten`` names them)."""
    if depth > MAX_DEPTH:
        return
    pairs: list[tuple[Any, ast.AST, int]] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        pairs = [(kw.arg, kw.value, kw.value.lineno) for kw in node.keywords if kw.arg is not None]
    elif isinstance(node, ast.Dict):
        pairs = [(k.value, v, k.lineno) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)]
    for key, value, lineno in pairs:
        name = f"{prefix}{key}"
        out[name] = offset + lineno
        _key_lines(value, name + ".", offset, out, depth + 1)


def _parse(text: str, mode: str) -> ast.AST | None:
    try:
        return ast.parse(text, mode=mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None  # not Python, a 5000-digit number, or nested beyond the parser


# -- config dumps -------------------------------------------------------------------
def _statement(lines: list[str], start: int) -> tuple[ast.Assign | None, int]:
    """The assignment starting at ``start`` (it may continue on indented lines), and the next line."""
    chunk = [lines[start]]
    end = start + 1
    while (
        end < len(lines)
        and len(chunk) < MAX_STATEMENT_LINES
        and (lines[end][:1] in (" ", "\t", ")", "]", "}") or not lines[end].strip())
    ):
        if not lines[end].strip() and end + 1 < len(lines) and not lines[end + 1][:1].isspace():
            break  # a blank line before the next statement
        chunk.append(lines[end])
        end += 1
    text = "\n".join(chunk)
    if len(text) > MAX_STATEMENT_CHARS:
        return None, end
    tree = _parse(text, "exec")
    if not isinstance(tree, ast.Module) or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign):
        return None, end
    node = tree.body[0]
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return None, end
    return node, end


def _config_dump(lines: list[str], start: int) -> tuple[LogSettings | None, int]:
    """A block of consecutive assignments from ``start``; a LogSettings if it looks like a config dump."""
    stmts: list[tuple[ast.Assign, int]] = []
    i = start
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if not _ASSIGN.match(lines[i]):
            break
        node, nxt = _statement(lines, i)
        if node is not None:
            stmts.append((node, i))
        i = nxt  # a statement that does not parse (a 5000-digit number) is skipped, the block goes on
    if i == start:
        i = start + 1
    has_dict = any(
        isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name) and n.value.func.id == "dict"
        for n, _ in stmts
    )
    if len(stmts) < MIN_DUMP_STATEMENTS or not has_dict:
        return None, i
    found = LogSettings(form="config dump", line=start + 1)
    for node, at in stmts:
        name = node.targets[0].id  # type: ignore[attr-defined]
        value = _literal(node.value)
        if value is _SKIP:
            continue
        found.values[name] = value
        found.lines[name] = at + 1
        _key_lines(node.value, name + ".", at, found.lines)
    return found, i


# -- printed settings dicts ------------------------------------------------------------
def _settings_dict(text: str, lineno: int) -> LogSettings | None:
    """A dict literal of at least two settings printed on one line; None when it is not one, or holds logged
    values (a number or a list of numbers under a loss or score name, or a position such as ``epoch``)."""
    tree = _parse(text, "eval")
    if not isinstance(tree, ast.Expression) or not isinstance(tree.body, ast.Dict):
        return None
    values = _literal(tree.body)
    if not isinstance(values, dict) or len(values) < 2 or any(_is_logged(k, v) for k, v in values.items()):
        return None
    found = LogSettings(form="dict", line=lineno, values=values)
    _key_lines(tree.body, "", lineno - 1, found.lines)
    return found


def _is_logged(key: Any, value: Any) -> bool:
    """A number (or numbers) under a key that makes a printed dict a record (``holds_logged_values``, as the log
    reader judges). Numbers may be quoted: transformers 5 prints Trainer's logs as {'loss': '7.473', ...}."""
    numeric = _numeric(value) or (isinstance(value, list) and bool(value) and all(_numeric(v) for v in value))
    return numeric and isinstance(key, str) and holds_logged_values((key,))


def _numeric(value: Any) -> bool:
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -- Keras compile calls ------------------------------------------------------------
def _compile_call(line: str, lineno: int) -> LogSettings | None:
    """``model.compile(optimizer=..., loss=..., metrics=[...])`` on one line; None without an optimizer or loss
    keyword (``torch.compile(model)`` is another call)."""
    m = _COMPILE.search(line)
    if m is None:
        return None
    tree = _parse(f"compile({m.group(1)})", "eval")
    if not isinstance(tree, ast.Expression) or not isinstance(tree.body, ast.Call):
        return None
    found = LogSettings(form="compile call", line=lineno)
    for kw in tree.body.keywords:
        if kw.arg == "optimizer":
            _compile_optimizer(kw.value, found.values)
        elif kw.arg in ("loss", "metrics"):
            value = _literal(kw.value)
            if value is not _SKIP:
                found.values[kw.arg] = value
    if "optimizer" not in found.values and "loss" not in found.values:
        return None
    found.values["framework"] = "keras"
    found.lines = {k: lineno for k in found.values}
    return found


def _compile_optimizer(node: ast.AST, out: dict[str, Any]) -> None:
    """``'adam'`` -> optimizer adam (by name); ``keras.optimizers.Adam(learning_rate=0.01)`` or ``SGD(0.1)`` -> the
    class name and its learning rate (Keras 2's ``lr=`` too)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        out["optimizer"] = node.value
        return
    if not isinstance(node, ast.Call):
        return
    chain = node.func  # a dotted name (keras.optimizers.Adam), nothing computed on the way
    while isinstance(chain, ast.Attribute):
        chain = chain.value
    if not isinstance(chain, ast.Name):
        return
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else chain.id
    out["optimizer"] = name
    rate: Any = _SKIP
    for kw in node.keywords:
        if kw.arg in ("learning_rate", "lr"):
            rate = _literal(kw.value)
    if rate is _SKIP and node.args:
        rate = _literal(node.args[0])  # the first parameter of every Keras optimizer is learning_rate
    if _numeric(rate) and not isinstance(rate, str):
        out["learning_rate"] = rate


# -- Namespace prints ---------------------------------------------------------------
def _namespace(line: str, lineno: int) -> LogSettings | None:
    m = _NAMESPACE.search(line)
    if m is None:
        return None
    found = LogSettings(form="Namespace", line=lineno)
    tree = _parse(f"Namespace({m.group(1)})", "eval")
    if isinstance(tree, ast.Expression) and isinstance(tree.body, ast.Call):
        for kw in tree.body.keywords:
            if kw.arg is not None:
                value = _literal(kw.value)
                if value is not _SKIP:
                    found.values[kw.arg] = value
    else:  # a repr that is not Python (<function f at 0x...>): split at ", name=" and read each value alone
        for part in re.split(r",\s+(?=[A-Za-z_]\w*=)", m.group(1)):
            key, sep, raw = part.partition("=")
            if sep and key.isidentifier():
                node = _parse(raw.strip(), "eval")
                value = _literal(node.body) if isinstance(node, ast.Expression) else _SKIP
                if value is not _SKIP:
                    found.values[key] = value
    if not found.values:
        return None
    found.lines = {k: lineno for k in found.values}
    return found


def _hf_trainer_block(lines: list[str], start: int) -> LogSettings | None:
    """The ``  Key = number`` lines that follow Trainer's ``***** Running training *****`` (at most 20)."""
    found = LogSettings(form="Trainer", line=start + 1)
    for j in range(start + 1, min(len(lines), start + 21)):
        m = _HF_BLOCK_LINE.match(lines[j].rstrip("\r"))
        if m is None:
            if found.values:
                break
            continue
        key = HF_TRAINER_BLOCK.get(m.group(1).strip().lower())
        if key is not None:
            raw = m.group(2).replace(",", "")
            found.values[key] = float(raw) if "." in raw else int(raw)
            found.lines[key] = j + 1
    return found if found.values else None


# -- command lines ------------------------------------------------------------------
def _scalar(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return int(text) if re.fullmatch(r"[-+]?\d{1,30}", text) else float(text) if len(text) < 40 else text
    except ValueError:
        return text


def _command_line(line: str, lineno: int) -> LogSettings | None:
    m = _COMMAND.search(line)
    if m is None:
        return None
    try:
        tokens = shlex.split(m.group(1))
    except ValueError:
        return None
    script = next((i for i, t in enumerate(tokens) if _SCRIPT.fullmatch(t)), None)
    if script is None:
        return None
    values: dict[str, Any] = {}
    _options(tokens[1:script], values)  # the launcher's own (--nproc_per_node 8)
    _options(tokens[script + 1 :], values)
    if not values:
        return None
    return LogSettings(form="command line", line=lineno, values=values, lines={k: lineno for k in values})


def _options(tokens: list[str], out: dict[str, Any]) -> None:
    """argparse-style ``--key value``, ``--key=value``, ``--flag``, ``--key v1 v2``; Hydra ``a.b=value``."""
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("--") and len(tok) > 2:
            key, sep, raw = tok[2:].partition("=")
            key = key.replace("-", "_")  # argparse's dest
            if sep:
                out[key] = _scalar(raw)
                i += 1
                continue
            vals = []
            j = i + 1
            while (
                j < len(tokens)
                and not (tokens[j].startswith("-") and not _is_number(tokens[j]))
                and not _HYDRA.match(tokens[j])
            ):
                vals.append(_scalar(tokens[j]))
                j += 1
            out[key] = True if not vals else vals[0] if len(vals) == 1 else vals
            i = j
            continue
        hydra = _HYDRA.match(tok)
        if hydra:
            out[hydra.group(1)] = _scalar(hydra.group(2))
        i += 1


def _is_number(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True
