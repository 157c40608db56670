"""Model descriptions printed as text: ``print(model)`` of PyTorch and MindSpore, Keras' ``model.summary()``,
and the compile settings and metric names a log prints -> the records of ``model_desc.py``."""

from __future__ import annotations

import ast
import bisect
import re

from advisor.read.logs.keyvalue import ACCURACY_OF_RE, VALUE_WRAPPER

from advisor.read.model_desc import (
    CompileSettings,
    ModelDescription,
    RawLayer,
    canonical_activation,
    keras_compile,
    role_of,
)

#: the last text split into lines (the model searches read one log's head one after another)
_last_split: tuple[str, list[str], str] | None = None


def _split(text: str) -> tuple[list[str], str]:
    """``text.splitlines()``, and those lines joined by line feeds (one scan finds the lines that hold something;
    the count of line feeds before a match is its line's index). Kept for the next search of the same text; the
    caller does not change the list."""
    global _last_split
    last = _last_split
    if last is not None and last[0] is text:
        return last[1], last[2]
    lines = text.splitlines()
    joined = "\n".join(lines)
    _last_split = (text, lines, joined)
    return lines, joined


#: containers whose printed order is the execution order (``RawLayer.in_sequence``)
_SEQUENTIAL = {"sequential", "sequentialcell"}


# -- PyTorch / MindSpore printed module trees ------------------------------------------------------

_MODULE_LINE = re.compile(
    r"^(?P<indent>\s*)\((?P<name>[^()]+)\):\s*(?P<type>[A-Za-z_][\w.]*)(?P<open>[(<])(?P<rest>.*)$"
)
_TOP_LINE = re.compile(r"^(?P<type>[A-Z][\w]*)(?P<open>[(<])\s*$")
_INT_ARG = r"{key}\s*=\s*(\d+)"


#: digits of the largest layer width or parameter count read; longer numbers are not sizes (and a string of
#: thousands of digits would hit Python's int-conversion limit)
MAX_DIGITS = 18


def _small_int(digits: str) -> int | None:
    """``int(digits)`` (a sign and thousands commas allowed), or None beyond ``MAX_DIGITS`` digits."""
    digits = digits.replace(",", "")
    return int(digits) if len(digits.lstrip("-")) <= MAX_DIGITS else None


def _int_arg(args: str, *keys: str) -> int | None:
    for key in keys:
        m = re.search(_INT_ARG.format(key=key), args)
        if m:
            return _small_int(m.group(1))
    return None


def _leaf_from(name: str, layer_type: str, args: str, framework: str) -> RawLayer:
    role = role_of(layer_type)
    units = None
    activation = None
    rate = None
    if role == "dense":
        units = _int_arg(args, "out_features", "output_channels", "out_channels")
    elif role == "conv":
        units = _int_arg(args, "out_channels", "output_channels")
        if units is None:  # torch Conv2d(1, 8, kernel_size=...) positional
            m = re.match(r"\s*\d+\s*,\s*(\d+)", args)
            units = _small_int(m.group(1)) if m else None
    elif role == "activation":
        activation = canonical_activation(layer_type)
    elif role == "dropout":
        m = re.search(r"\bp\s*=\s*([0-9.eE-]+)", args) or re.search(r"keep_prob\s*=\s*([0-9.eE-]+)", args)
        if m:
            try:
                rate = float(m.group(1))
                if "keep_prob" in m.group(0):
                    rate = 1.0 - rate
            except ValueError:
                rate = None
    if role in ("dense", "conv"):
        m = re.search(r"activation\s*=\s*([A-Za-z_]+)", args)
        if m:
            activation = canonical_activation(m.group(1))
        elif framework == "mindspore" or role == "dense":
            activation = None  # torch Linear has none; a MindSpore Dense without activation= neither
    return RawLayer(name=name, layer_type=layer_type, role=role, units=units, activation=activation, dropout_rate=rate)


def parse_module_repr(text: str, path: str = "") -> list[ModelDescription]:
    """Every PyTorch / MindSpore module tree printed in ``text`` (a log, a model.txt)."""
    lines, joined = _split(text)
    out: list[ModelDescription] = []
    i = 0
    for k in _top_line_candidates(joined):
        if k < i:
            continue  # (inside a tree read already)
        i = k
        top = _TOP_LINE.match(lines[i].strip()) if not lines[i].startswith(" ") else None
        if top is None or i + 1 >= len(lines) or not _MODULE_LINE.match(lines[i + 1]):
            continue
        desc, j = _module_tree(lines, i, top, path)
        if desc.layers:
            out.append(desc)
        i = max(j, i + 1)
    return out


#: a line that may open a module tree (``_TOP_LINE`` of the stripped line, not indented by a space), in the text
_TOP_CANDIDATE = re.compile(r"^(?! )[^\S\n]*[A-Z]\w*[(<][^\S\n]*$", re.M)


def _top_line_candidates(joined: str) -> list[int]:
    """The indices of the lines (of ``joined``: lines joined by line feeds) that may open a module tree: one scan."""
    found = []
    no, at = 0, 0
    for m in _TOP_CANDIDATE.finditer(joined):
        no += joined.count("\n", at, m.start())
        at = m.start()
        found.append(no)
    return found


def _module_tree(lines: list[str], i: int, top: re.Match[str], path: str) -> tuple[ModelDescription, int]:
    """The module tree whose top line is ``lines[i]``, and the index of the line after it."""
    desc = ModelDescription(
        format="torch_repr", framework="pytorch", path=path, line=i + 1, architecture=top.group("type")
    )
    mindspore_hint = top.group("open") == "<"
    j = i + 1
    # a stack of open containers: (indent, RawLayer-or-None for a layer whose args span lines, class name)
    open_layers: list[tuple[int, RawLayer | None, str]] = []
    top_type = top.group("type")
    while j < len(lines):
        line = lines[j]
        stripped = line.strip()
        if not stripped:
            break
        indent = len(line) - len(line.lstrip())
        m = _MODULE_LINE.match(line)
        if m:
            while open_layers and open_layers[-1][0] >= indent:
                open_layers.pop()
            layer_type, rest = m.group("type"), m.group("rest")
            if m.group("open") == "<" or "input_channels=" in rest or "output_channels=" in rest:
                mindspore_hint = True
            this_closer = ">" if m.group("open") == "<" else ")"
            opened = rest.strip() == ""  # the line ends after '(' or '<': a container or multi-line args
            parent = open_layers[-1][1] if open_layers else None
            parent_type = open_layers[-1][2] if open_layers else top_type
            in_seq = parent_type.lower() in _SEQUENTIAL
            if opened:
                holder = None
                if role_of(layer_type) in ("dense", "conv"):
                    holder = RawLayer(
                        name=m.group("name"), layer_type=layer_type, role=role_of(layer_type), in_sequence=in_seq
                    )
                    desc.layers.append(holder)
                open_layers.append((indent, holder, layer_type))
            elif parent is not None and m.group("name") == "activation":
                pass  # the fused activation of a MindSpore Dense, already taken from its arguments
            else:
                args = rest[: -len(this_closer)] if rest.rstrip().endswith(this_closer) else rest
                leaf = _leaf_from(m.group("name"), layer_type, args, "mindspore" if mindspore_hint else "pytorch")
                leaf.in_sequence = in_seq
                desc.layers.append(leaf)
        elif stripped in (")", ">"):
            if open_layers and indent <= open_layers[-1][0]:
                open_layers.pop()
            elif indent == 0:
                j += 1
                break
        elif open_layers and open_layers[-1][1] is not None and "=" in stripped:
            holder = open_layers[-1][1]  # the argument line of a multi-line MindSpore Dense
            filled = _leaf_from(holder.name, holder.layer_type, stripped, "mindspore")
            holder.units, holder.activation = filled.units, filled.activation
        elif indent == 0:
            break
        j += 1
    # activations are known only where the printed order is the execution order
    desc.activations_known = all(la.in_sequence for la in desc.layers if la.role in ("dense", "conv"))
    if mindspore_hint:
        desc.format, desc.framework = "mindspore_repr", "mindspore"
    return desc, j


# -- Keras model.summary() --------------------------------------------------------------------------

_SUMMARY_ROW = re.compile(
    r"^[│|\s]*(?P<name>[\w./-]+) \((?P<type>[A-Za-z_]\w*)\)\s*[│|\s]\s*(?P<shape>\([^)]*\)|\[[^\]]*\]|multiple)"
    r"\s*[│|\s]*\s*(?P<params>[\d,]+)"
)
_TOTAL = re.compile(r"Total params:\s*([\d,]+)")


_MODEL_HEADER = re.compile(r'^\s*Model: "?([^"]*)"?\s*$')


def parse_keras_summary(text: str, path: str = "") -> list[ModelDescription]:
    """Every Keras ``model.summary()`` table in ``text``."""
    out: list[ModelDescription] = []
    current: ModelDescription | None = None
    lines, joined = _split(text)
    headers = _lines_holding(joined, "Model: ")  # (where a summary may start: other lines outside one do nothing)
    k = 0
    while k < len(lines):
        if current is None:
            nxt = bisect.bisect_left(headers, k)
            if nxt == len(headers):
                break
            k = headers[nxt]
        current = _summary_line(lines[k], k + 1, current, out, path)
        k += 1
    return [d for d in out if d.layers]


def _lines_holding(joined: str, word: str) -> list[int]:
    """The indices of the lines (of ``joined``: lines joined by line feeds) that hold ``word``, in order: one scan."""
    found: list[int] = []
    no = counted = 0
    at = joined.find(word)
    while at >= 0:
        no += joined.count("\n", counted, at)
        counted = at
        found.append(no)
        end = joined.find("\n", at)
        if end < 0:
            break
        at = joined.find(word, end)
    return found


def _summary_line(
    line: str, no: int, current: ModelDescription | None, out: list[ModelDescription], path: str
) -> ModelDescription | None:
    """Read one line of a Keras summary (or the header of one, added to ``out``); the summary open after it."""
    if _MODEL_HEADER.match(line):
        current = ModelDescription(
            format="keras_summary", framework="keras", path=path, line=no, activations_known=False
        )
        out.append(current)
        return current
    if current is None:
        return None
    m = _SUMMARY_ROW.match(line)
    if m:
        shape = m.group("shape")
        dims = re.findall(r"-?\d+|None", shape)
        units = _small_int(dims[-1]) if dims and dims[-1] != "None" else None
        ltype = m.group("type")
        role = role_of(ltype)
        layer = RawLayer(
            name=m.group("name"),
            layer_type=ltype,
            role=role,
            units=units if role in ("dense", "conv", "recurrent", "embedding") else None,
            activation=canonical_activation(ltype) if role == "activation" and ltype != "Activation" else None,
        )
        current.layers.append(layer)
        return current
    t = _TOTAL.search(line)
    if t:
        current.total_params = _small_int(t.group(1))
        return None
    return current


# -- compile / loss settings printed in a log ------------------------------------------------------

_LOSS_WORDS = re.compile(
    r"(?i)(crossentropy|cross_entropy|crossentropyloss|bce|mse|mae|l1loss|smoothl1|huber|nll|"
    r"mean_squared|mean_absolute|kld|kl_div|hinge|softmaxcrossentropy|focal|logcosh|poisson)"
)
_LOSS_KV = re.compile(r"""(?ix)(?:^|[\s,{(])['"]?(?:loss|loss_fn|criterion|loss_function)['"]?\s*[:=]\s*
                          (?P<val>[A-Za-z_][\w.]*(?:\([^)]*\))?|'[^']*'|"[^"]*")""")
_FROM_LOGITS = re.compile(r"(?i)['\"]?from_logits['\"]?\s*[:=]\s*(True|False|true|false)")
_METRICS_KV = re.compile(r"""(?i)['"]?metrics['"]?\s*[:=]\s*\[(?P<val>[^\]]*)\]""")
_DICT_LINE = re.compile(r"^\s*\{.*\}\s*$")


#: what a line must hold for ``find_compile_settings`` to take anything from it, in the lower-cased text: each
#: pattern starts with a literal (a fast scan) and matches wherever _LOSS_KV, a printed config's 'loss',
#: _FROM_LOGITS or _METRICS_KV would (the rest of the line's reading is theirs)
_MENTIONS = tuple(
    re.compile(p)
    for p in (
        r"""loss(?:_fn|_function)?['"]?[^\S\n]*[:=][^\S\n]*[a-z_'"]""",
        r"""criterion['"]?[^\S\n]*[:=][^\S\n]*[a-z_'"]""",
        r"'loss'",
        r"from_logits",
        r"""metrics['"]?[^\S\n]*[:=][^\S\n]*\[""",
    )
)
#: characters a case-insensitive pattern takes for an ASCII letter that ``str.lower`` does not lower to it
_ODD_CASE = ("\u0130", "\u0131", "\u017f", "\u212a")


def find_compile_settings(text: str, path: str = "") -> CompileSettings | None:
    """The loss (and from_logits, metrics) a log states in so many words; None when it does not."""
    found = CompileSettings(path=path)
    lines, joined = _split(text)
    for no in _mentioning_lines(joined, len(lines)):
        line = lines[no - 1]
        if len(line) > 10_000:  # a compile config is a few hundred characters
            continue
        cfg = _compile_line(found, line, no, path)
        if cfg is not None:
            return cfg
    return found if found.loss else None


def _mentioning_lines(joined: str, count: int) -> list[int]:
    """The numbers (1-based) of the lines (of ``joined``: ``count`` lines joined by line feeds) that name a loss, a
    criterion, from_logits or metrics as ``find_compile_settings`` reads them: one scan for each of ``_MENTIONS``."""
    if any(ch in joined for ch in _ODD_CASE):
        return list(range(1, count + 1))  # (rare: every line is read)
    low = joined.lower()  # (no line feed comes or goes)
    found: set[int] = set()
    for mention in _MENTIONS:
        no, at = 1, 0
        for m in mention.finditer(low):
            no += low.count("\n", at, m.start())
            at = m.start()
            found.add(no)
    return sorted(found)


def _compile_line(found: CompileSettings, line: str, no: int, path: str) -> CompileSettings | None:
    """Read one line into ``found``; a whole compile config printed as a dict is returned as it is."""
    if _DICT_LINE.match(line) and "'loss'" in line:  # print(model.get_compile_config())
        try:
            obj = ast.literal_eval(line.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            obj = None
        if isinstance(obj, dict) and "loss" in obj:
            cfg = keras_compile(obj, path)
            if cfg is not None and cfg.loss:
                cfg.line = no
                return cfg
    m = _LOSS_KV.search(line)
    if m and found.loss is None:
        val = m.group("val").strip("'\"")
        if _LOSS_WORDS.search(val):
            found.loss = re.sub(r"\(.*$", "", val)
            found.line = no
            fl = _FROM_LOGITS.search(line)
            if fl:
                found.from_logits = fl.group(1).lower() == "true"
            mm = _METRICS_KV.search(line)
            if mm:
                found.metrics = [s.strip(" '\"") for s in mm.group("val").split(",") if s.strip(" '\"")]
    elif found.loss is not None and found.from_logits is None:
        fl = _FROM_LOGITS.search(line)
        if fl and no - (found.line or no) <= 3:
            found.from_logits = fl.group(1).lower() == "true"
    if not found.metrics:
        mm = _METRICS_KV.search(line)
        if mm:
            found.metrics = [s.strip(" '\"") for s in mm.group("val").split(",") if s.strip(" '\"")]
    return None


_METRIC_NAME = re.compile(
    r"(?i)(?<![\w])((?:val|valid|validation|eval|test|train)[_ ]?)?"
    r"(acc|accuracy|top1|top-1|f1|auc|map|mae|rmse|r2|mean_absolute_error)"
    r"(?![\w])['\"]?\s*[:=]?\s*" + VALUE_WRAPPER + r"?-?\d"
)


def logged_metric_names(text: str, max_lines: int = 20_000) -> list[str]:
    """Metric names that appear with a number in a log (accuracy, val_acc, mae, rmse, ...), lower-case."""
    seen: dict[str, None] = {}
    for k, line in enumerate(text.splitlines()):
        if k >= max_lines:
            break
        for m in _METRIC_NAME.finditer(line):
            seen.setdefault((m.group(1) or "").lower().replace(" ", "_") + m.group(2).lower(), None)
        if "ccuracy of the" in line and ACCURACY_OF_RE.search(line):  # the PyTorch tutorials' test accuracy
            seen.setdefault("test_accuracy", None)
    return list(seen)
