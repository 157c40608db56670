"""Model descriptions a run already has -> layer records. No judgement.

Formats read (each from its documented or printed layout; nothing is ever loaded or executed):

- Keras ``model.summary()`` text in a log (the box table, Keras 2 dashes or Keras 3 box
  drawing): layer name, class, output shape, parameters; activations are not printed;
- Keras ``model.to_json()`` / ``get_config()`` JSON, and the ``config.json`` inside a
  ``.keras`` zip (the JSON only; the weights are never opened), with ``compile_config``;
- PyTorch ``print(model)``: ``(fc1): Linear(in_features=64, out_features=10, bias=True)``,
  nested ``Sequential(...)``;
- MindSpore ``print(net)``: ``Dense<input_channels=64, output_channels=10, has_bias=True>``
  (MindSpore 1.x/2.0) or ``Dense(input_channels=64, ...)`` (later releases), with a fused
  ``activation=`` argument;
- Hugging Face ``config.json``: ``architectures``, ``num_labels``/``id2label``, ``problem_type``;
- the ``layers``/``hidden_sizes``, ``activation(s)``, ``output_activation``, ``output_units``
  keys of a hyper-parameter mapping;
- compile/loss settings printed in a log: ``loss='categorical_crossentropy'``,
  ``'loss': ...`` of a printed ``get_compile_config()``, ``from_logits=True``,
  ``metrics=['accuracy']``, ``criterion: CrossEntropyLoss()``.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


#: activation spellings -> canonical name
_ACTIVATIONS = {
    "relu": "relu",
    "relu6": "relu",
    "sigmoid": "sigmoid",
    "hardsigmoid": "sigmoid",
    "tanh": "tanh",
    "softmax": "softmax",
    "softmax2d": "softmax",
    "logsoftmax": "log_softmax",
    "log_softmax": "log_softmax",
    "gelu": "gelu",
    "elu": "elu",
    "selu": "selu",
    "leakyrelu": "leaky_relu",
    "leaky_relu": "leaky_relu",
    "prelu": "leaky_relu",
    "silu": "silu",
    "swish": "silu",
    "mish": "silu",
    "softplus": "softplus",
    "softsign": "tanh",
    "hardtanh": "tanh",
    "linear": "linear",
    "identity": "linear",
    "none": "linear",
    "exponential": "exponential",
}
_DENSE = {"linear", "dense", "lazylinear"}
_CONV = re.compile(r"^(conv|separableconv|depthwiseconv|convtranspose)", re.IGNORECASE)
_RECURRENT = re.compile(r"^(lstm|gru|rnn|simplernn|bidirectional|lstmcell|grucell)$", re.IGNORECASE)
_NORM = re.compile(r"norm", re.IGNORECASE)
_POOL = re.compile(r"pool", re.IGNORECASE)
_RESHAPE = {"flatten", "reshape", "permute", "unflatten", "squeeze", "expanddims", "repeatvector"}


def canonical_activation(name: Any) -> str | None:
    """'ReLU', 'relu', 'keras.activations.relu', None -> relu / ... / None (unknown spelling: lower-case text)."""
    if name is None:
        return None
    if isinstance(name, dict):  # a serialised Keras activation object
        name = name.get("config", {}).get("name") if isinstance(name.get("config"), dict) else name.get("class_name")
        if name is None:
            return None
    text = str(name).strip().rsplit(".", 1)[-1]
    key = re.sub(r"[^a-z0-9_]", "", text.lower())
    return _ACTIVATIONS.get(key, _ACTIVATIONS.get(key.replace("_", ""), key or None))


@dataclass
class RawLayer:
    name: str
    layer_type: str
    role: str
    units: int | None = None
    activation: str | None = None
    dropout_rate: float | None = None
    #: printed inside a Sequential / SequentialCell, whose printed order is the execution order (a custom
    #: module prints its submodules in definition order and may apply activations as functions in forward)
    in_sequence: bool = True


@dataclass
class ModelDescription:
    """The layers of one model description, in order, and what else it states."""

    format: str
    framework: str
    path: str = ""
    line: int | None = None
    layers: list[RawLayer] = field(default_factory=list)
    activations_known: bool = True
    total_params: int | None = None
    architecture: str | None = None
    n_classes: int | None = None  # HF num_labels / id2label
    problem_type: str | None = None  # HF problem_type
    min_params: int | None = None  # HF config: what its embedding, attention and feed-forward matrices hold at least
    compile: CompileSettings | None = None


@dataclass
class CompileSettings:
    """Loss / metrics / optimizer as configured (Keras compile, a printed criterion)."""

    loss: str | None = None
    from_logits: bool | None = None
    metrics: list[str] = field(default_factory=list)
    optimizer: str | None = None
    learning_rate: float | None = None
    path: str = ""
    line: int | None = None


def role_of(layer_type: str) -> str:
    t = layer_type.strip()
    low = t.lower()
    if low in _DENSE:
        return "dense"
    if _CONV.match(low):
        return "conv"
    if _RECURRENT.match(low):
        return "recurrent"
    if low == "embedding":
        return "embedding"
    if low in ("activation",) or canonical_activation(low) in set(_ACTIVATIONS.values()) - {"linear"}:
        return "activation"
    if "dropout" in low:
        return "dropout"
    if _NORM.search(low):
        return "norm"
    if _POOL.search(low):
        return "pool"
    if low in _RESHAPE:
        return "reshape"
    if low in ("inputlayer", "input"):
        return "input"
    return "other"


# -- Keras JSON configs ----------------------------------------------------------------------------


def _keras_layer(entry: dict) -> RawLayer | None:
    cls = entry.get("class_name")
    raw_cfg = entry.get("config")
    cfg: dict = raw_cfg if isinstance(raw_cfg, dict) else {}
    if not isinstance(cls, str):
        return None
    role = role_of(cls)
    units = cfg.get("units", cfg.get("filters"))
    act = cfg.get("activation")
    if cls == "Activation":
        role = "activation"
    elif role == "activation":
        act = cls
    rate = cfg.get("rate") if role == "dropout" else None
    return RawLayer(
        name=str(cfg.get("name", cls)),
        layer_type=cls,
        role=role,
        units=units if isinstance(units, int) else None,
        activation=canonical_activation(act) if act is not None else ("linear" if role in ("dense", "conv") else None),
        dropout_rate=float(rate) if isinstance(rate, (int, float)) else None,
    )


def _keras_layers(config: dict) -> list[RawLayer]:
    layers: list[RawLayer] = []
    for entry in config.get("layers", []) if isinstance(config.get("layers"), list) else []:
        if not isinstance(entry, dict):
            continue
        inner = entry.get("config")
        if entry.get("class_name") in ("Sequential", "Functional", "Model") and isinstance(inner, dict):
            layers.extend(_keras_layers(inner))
            continue
        layer = _keras_layer(entry)
        if layer is not None:
            layers.append(layer)
    return layers


def _loss_name(loss: Any) -> tuple[str | None, bool | None]:
    if isinstance(loss, str):
        return loss, None
    if isinstance(loss, dict):
        raw_cfg = loss.get("config")
        cfg: dict = raw_cfg if isinstance(raw_cfg, dict) else {}
        name = loss.get("class_name") or cfg.get("name")
        fl = cfg.get("from_logits")
        return (str(name) if name else None), (fl if isinstance(fl, bool) else None)
    if isinstance(loss, list) and loss:
        return _loss_name(loss[0])
    return None, None


def _metric_names(metrics: Any) -> list[str]:
    out: list[str] = []
    for m in metrics if isinstance(metrics, list) else [metrics] if metrics else []:
        if isinstance(m, str):
            out.append(m)
        elif isinstance(m, dict):
            name = m.get("class_name") or (m.get("config") or {}).get("name")
            if name:
                out.append(str(name))
        elif isinstance(m, list):
            out.extend(_metric_names(m))
    return out


def keras_compile(compile_config: Any, path: str = "") -> CompileSettings | None:
    if not isinstance(compile_config, dict):
        return None
    loss, fl = _loss_name(compile_config.get("loss"))
    opt = compile_config.get("optimizer")
    opt_name, lr = None, None
    if isinstance(opt, dict):
        raw_cfg = opt.get("config")
        cfg: dict = raw_cfg if isinstance(raw_cfg, dict) else {}
        opt_name = opt.get("class_name") or cfg.get("name")
        lr = cfg.get("learning_rate")
    elif isinstance(opt, str):
        opt_name = opt
    return CompileSettings(
        loss=loss,
        from_logits=fl,
        metrics=_metric_names(compile_config.get("metrics")),
        optimizer=str(opt_name) if opt_name else None,
        learning_rate=float(lr) if isinstance(lr, (int, float)) and not isinstance(lr, bool) else None,
        path=path,
    )


def is_keras_model_config(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("class_name") in ("Sequential", "Functional", "Model")
        and isinstance(obj.get("config"), dict)
        and isinstance(obj["config"].get("layers"), list)
    )


def parse_keras_config(obj: Any, path: str = "") -> ModelDescription | None:
    """A Keras ``to_json()``/``get_config()``-with-class object, or a ``.keras`` config.json."""
    if not is_keras_model_config(obj):
        return None
    desc = ModelDescription(
        format="keras_config",
        framework="keras",
        path=path,
        layers=_keras_layers(obj["config"]),
        architecture=str(obj.get("class_name")),
    )
    desc.compile = keras_compile(obj.get("compile_config"), path)
    return desc if desc.layers else None


def read_keras_file(path: Path, max_bytes: int = 20_000_000) -> Any:
    """The config.json of a ``.keras`` zip (only that member is read; the weights are never opened)."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("config.json")
        if info.file_size > max_bytes:
            raise ValueError(f"config.json in the .keras file is {info.file_size} bytes (limit {max_bytes})")
        return json.loads(z.read(info).decode("utf-8"))


# -- Hugging Face config.json ----------------------------------------------------------------------


#: heads that predict a token over the whole vocabulary (causal and masked language models)
LM_HEAD = re.compile(r"(LMHeadModel|ForCausalLM|ForMaskedLM)$")


def parse_hf_config(obj: Any, path: str = "") -> ModelDescription | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("architectures"), list) or "model_type" not in obj:
        return None
    arch = obj["architectures"][0] if obj["architectures"] else None
    n = obj.get("num_labels")
    if not isinstance(n, int) and isinstance(obj.get("id2label"), dict):
        n = len(obj["id2label"])
    if n is None and "id2label" not in obj and str(arch or "").endswith("ForSequenceClassification"):
        # PretrainedConfig's default num_labels is 2, and transformers 5 leaves a default id2label out of
        # config.json (to_diff_dict), so a classification head saved without one has 2 outputs
        n = 2
    if n is None and LM_HEAD.search(str(arch or "")):
        n = _first_int(obj, ("vocab_size",))  # a language model classifies each next token over its vocabulary
    pt = obj.get("problem_type")
    return ModelDescription(
        format="hf_config",
        framework="transformers",
        path=path,
        activations_known=False,
        architecture=str(arch) if arch else None,
        n_classes=n if isinstance(n, int) else None,
        problem_type=str(pt) if isinstance(pt, str) else None,
        min_params=hf_min_params(obj),
    )


def _first_int(obj: dict, keys: tuple[str, ...]) -> int | None:
    for k in keys:
        v = obj.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def hf_min_params(obj: dict) -> int | None:
    """Parameters a Hugging Face transformer config's weight matrices hold at least: the token embedding
    (vocab_size x hidden) and, in each layer, the four attention projections (hidden x hidden) and the two
    feed-forward matrices (hidden x intermediate), as every Transformer layer has them (Vaswani et al. 2017).
    Biases, norms, position embeddings and heads come on top. None when the config does not state the sizes."""
    hidden = _first_int(obj, ("hidden_size", "d_model", "dim", "n_embd"))
    layers = _first_int(obj, ("num_hidden_layers", "n_layers", "num_layers", "n_layer"))
    vocab = _first_int(obj, ("vocab_size",))
    if hidden is None or layers is None or vocab is None:
        return None
    inner = _first_int(obj, ("intermediate_size", "hidden_dim", "ffn_dim", "d_ff", "n_inner")) or 4 * hidden
    return vocab * hidden + layers * (4 * hidden * hidden + 2 * hidden * inner)


# -- hyper-parameter keys ---------------------------------------------------------------------------

_LAYER_KEYS = ("layers", "hidden_sizes", "hidden_units", "hidden_layers", "units", "layer_sizes", "hidden_dims")
_ACT_KEYS = ("activations", "activation", "hidden_activation", "act")
_OUT_ACT_KEYS = ("output_activation", "final_activation", "out_activation", "last_activation")
_OUT_UNITS_KEYS = ("output_units", "output_dim", "out_features", "n_outputs", "num_outputs", "output_size")


def _pick(mapping: dict, keys: Iterable[str]) -> tuple[str, Any] | None:
    lower = {str(k).lower(): (k, v) for k, v in mapping.items()}
    for k in keys:
        if k in lower:
            return lower[k]
    return None


def parse_hparams_model(mapping: dict, path: str = "") -> ModelDescription | None:
    """The model keys of a hyper-parameter mapping (top level or under ``model:``)."""
    scopes = [mapping] + [
        v for k, v in mapping.items() if str(k).lower() in ("model", "network", "net", "arch") and isinstance(v, dict)
    ]
    layers_v = acts_v = out_act = out_units = None
    for scope in scopes:
        layers_v = layers_v or _pick(scope, _LAYER_KEYS)
        acts_v = acts_v or _pick(scope, _ACT_KEYS)
        out_act = out_act or _pick(scope, _OUT_ACT_KEYS)
        out_units = out_units or _pick(scope, _OUT_UNITS_KEYS)
    if not (layers_v or out_act or out_units):
        return None
    desc = ModelDescription(format="hparams", framework="unknown", path=path)
    sizes: list[Any] = []
    if layers_v and isinstance(layers_v[1], list):
        sizes = layers_v[1]
    acts: list[Any] = []
    if acts_v:
        acts = acts_v[1] if isinstance(acts_v[1], list) else [acts_v[1]] * max(len(sizes), 1)
    for k, size in enumerate(sizes):
        if isinstance(size, dict):
            ltype = str(size.get("type", size.get("class_name", "Dense")))
            units = size.get("units", size.get("out_features"))
            desc.layers.append(
                RawLayer(
                    name=str(size.get("name", k)),
                    layer_type=ltype,
                    role=role_of(ltype),
                    units=units if isinstance(units, int) else None,
                    activation=canonical_activation(size.get("activation")),
                )
            )
        elif isinstance(size, int) and not isinstance(size, bool):
            act = canonical_activation(acts[k]) if k < len(acts) else None
            desc.layers.append(RawLayer(name=str(k), layer_type="Dense", role="dense", units=size, activation=act))
    # hidden_sizes / hidden_units / ...: the hidden layers only; the output layer is another one, and unknown
    # unless output_units / output_activation say more (its activation is not the hidden layers' one)
    hidden_only = layers_v is not None and str(layers_v[0]).lower().startswith("hidden")
    if out_units and isinstance(out_units[1], int) and not isinstance(out_units[1], bool):
        desc.layers.append(
            RawLayer(
                name="output",
                layer_type="Dense",
                role="dense",
                units=out_units[1],
                activation=canonical_activation(out_act[1]) if out_act else None,
            )
        )
    elif hidden_only and desc.layers:
        desc.layers.append(
            RawLayer(
                name="output",
                layer_type="Dense",
                role="dense",
                activation=canonical_activation(out_act[1]) if out_act else None,
            )
        )
    elif out_act:
        if desc.layers and desc.layers[-1].role == "dense":
            # the last listed size is the output layer when no separate output_units key says otherwise
            desc.layers[-1].activation = canonical_activation(out_act[1])
        else:
            desc.layers.append(
                RawLayer(name="output", layer_type="Dense", role="dense", activation=canonical_activation(out_act[1]))
            )
    desc.activations_known = bool(desc.layers) and all(
        la.activation is not None for la in desc.layers if la.role == "dense"
    )
    return desc
