"""Model descriptions, loss settings and task hints -> ``model_layer``, ``model_summary``, ``loss_setup``
and ``task`` facts.

1. Every model description read of a folder (``advisor.read.run``) is parsed
   (``advisor.read.model_desc``): Keras configs (``*.json`` with a Sequential/Functional model,
   the ``config.json`` of a ``.keras`` zip), PyTorch/MindSpore module trees and Keras summaries
   printed in logs or ``model.txt``, a Hugging Face ``config.json``, the model keys of a
   hyper-parameter file. The most complete one gives the layers (a Keras config, then a printed
   module tree, then a summary, then hparams keys); an output activation stated elsewhere
   (``output_activation:`` in a config) fills a gap.
2. The loss as configured: a Keras ``compile_config``, a loss printed in a log, the ``loss`` key of a
   hyper-parameter file; it is mapped to what it expects of the model output and the targets
   (documented behaviour of each framework's loss classes).
3. The task, decided from every source that says it, in this order: a Hugging Face
   ``problem_type``/``num_labels``, a ``task``/``num_classes`` setting (else a well-known data set the
   config names exactly, with its documented class count: ``advisor.knowledge.datasets``), the labels of a
   data sample, the metrics logged or
   configured (accuracy: classification; mae/rmse/r2 alone: regression), the output layer
   (softmax over k >= 2 units: k classes), and last the loss's name. The fact says which source
   decided and whether it was only the loss or only a metric, so rules that judge the loss or the
   metric do not rely on it.
"""

from __future__ import annotations

import re
from collections import Counter

from advisor.extract.structure_compare import compare_structures, inference_graph_hides, width_list_hides
from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.facts.base import Source
from advisor.facts.model import LossSetup, ModelLayer, ModelSummary, Task
from advisor.extract.view.model_inputs import Found
from advisor.knowledge.metrics import ACCURACY_NAME, REGRESSION_NAME
from advisor.extract.view import RunView
from advisor.read import model_desc as md
from advisor.read.run import RunRead

_FORMAT_RANK = {
    "keras_config": 0,
    "mindspore_repr": 1,
    "torch_repr": 1,
    "keras_summary": 2,
    "onnx_graph": 2,
    "hparams": 3,
}
_WEIGHTED = ("dense", "conv", "recurrent", "embedding")
_PASS_THROUGH = ("dropout", "norm", "pool", "reshape", "other", "input")


# -- the loss --------------------------------------------------------------------------------------


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.strip().rsplit(".", 1)[-1].lower())


#: (squashed names, family, variant, targets, expects; "?" = logits when from_logits is true, else probabilities)
_LOSS_TABLE: tuple[tuple[frozenset[str], str, str, str, str], ...] = (
    (frozenset({"sparsecategoricalcrossentropy"}), "cross_entropy", "sparse_categorical", "class_ids", "?"),
    (frozenset({"categoricalcrossentropy"}), "cross_entropy", "categorical", "one_hot", "?"),
    (frozenset({"binarycrossentropy", "binaryfocalcrossentropy"}), "bce", "binary", "binary", "?"),
    (
        frozenset(
            {
                "bcewithlogitsloss",
                "bcewithlogits",
                "binarycrossentropywithlogits",
                "sigmoidcrossentropy",
                "sigmoidcrossentropywithlogits",
            }
        ),
        "bce",
        "torch_bce_with_logits",
        "binary",
        "logits",
    ),
    (frozenset({"bceloss", "bce"}), "bce", "torch_bce", "binary", "probabilities"),
    (
        frozenset({"softmaxcrossentropywithlogits", "softmaxcrossentropy"}),
        "cross_entropy",
        "softmax_cross_entropy",
        "class_ids_or_one_hot",
        "logits",
    ),
    (
        frozenset({"crossentropyloss", "crossentropy", "ce", "celoss"}),
        "cross_entropy",
        "torch_cross_entropy",
        "class_ids_or_one_hot",
        "logits",
    ),
    (frozenset({"nllloss", "nll", "negativeloglikelihood"}), "nll", "torch_nll", "class_ids", "log_probabilities"),
    (frozenset({"mse", "mseloss", "meansquarederror", "l2loss", "l2"}), "mse", "regression", "values", "values"),
    (frozenset({"mae", "l1", "l1loss", "meanabsoluteerror"}), "l1", "regression", "values", "values"),
    (
        frozenset({"huber", "huberloss", "smoothl1", "smoothl1loss", "logcosh"}),
        "huber",
        "regression",
        "values",
        "values",
    ),
    (
        frozenset({"kld", "kldivloss", "kldivergence", "kullbackleiblerdivergence"}),
        "kl",
        "other",
        "values",
        "log_probabilities",
    ),
    (
        frozenset({"hinge", "squaredhinge", "categoricalhinge", "hingeembeddingloss", "multimarginloss"}),
        "hinge",
        "other",
        "values",
        "values",
    ),
)


def loss_setup(name: str, from_logits: bool | None, framework: str | None) -> LossSetup | None:
    """What the named loss expects, from each framework's documentation (None: a loss not in the table).

    Keras' probabilistic losses take probabilities unless from_logits=True; torch CrossEntropyLoss,
    BCEWithLogitsLoss and MindSpore SoftmaxCrossEntropyWithLogits take logits; a bare "cross_entropy"
    in a Keras/TensorFlow run takes probabilities (unless from_logits), sparse or one-hot unknown.
    """
    s = _squash(name)
    row = next((r for r in _LOSS_TABLE if s in r[0]), None)
    if row is None:
        return None
    _, family, variant, targets, expects = row
    if variant == "torch_cross_entropy" and framework in ("keras", "tensorflow"):
        # a bare "cross_entropy" in a Keras run: probabilities unless from_logits, sparse or not unknown
        variant, expects = "other", "logits" if from_logits else "probabilities"
    if expects == "?":
        expects = "logits" if from_logits else "probabilities"
    return LossSetup(
        name=name,
        family=family,
        variant=variant,
        target_form=targets,
        expects=expects,  # type: ignore[arg-type]
        from_logits=from_logits,
        framework=framework or None,
    )


def _trainable_params(folder: RunRead) -> int | None:
    """The trainable parameter count a log states (Trainer's "Number of trainable parameters" line)."""
    for printed in folder.log_settings:
        for found in printed.found:
            value = found.values.get("num_parameters") if found.form == "Trainer" else None
            if isinstance(value, int):
                return value
    return None


#: the loss a transformers ``*ForSequenceClassification`` head computes for each ``config.problem_type``
#: (documented in the models' forward: regression MSELoss, single-label CrossEntropyLoss, multi-label
#: BCEWithLogitsLoss; problem_type is set from num_labels and the label dtype at the first batch with labels)
_HF_HEAD_LOSS = {
    "regression": "MSELoss",
    "single_label_classification": "CrossEntropyLoss",
    "multi_label_classification": "BCEWithLogitsLoss",
}


def _hf_head_loss(hf: md.ModelDescription) -> LossSetup | None:
    """The loss of a Hugging Face sequence-classification head, from its config's problem_type (num_labels=1
    alone also means regression); None for other architectures or an undecided problem type."""
    if md.LM_HEAD.search(hf.architecture or ""):  # the models' forward: cross-entropy over the next (masked) token
        got = loss_setup("CrossEntropyLoss", None, "pytorch")
        return got.model_copy(update={"name": f"CrossEntropyLoss ({hf.architecture}'s token loss)"}) if got else None
    if not (hf.architecture or "").endswith("ForSequenceClassification"):
        return None
    pt = (hf.problem_type or "").lower() or ("regression" if hf.n_classes == 1 else "")
    name = _HF_HEAD_LOSS.get(pt)
    if name is None:
        return None
    got = loss_setup(name, None, "pytorch")
    return got.model_copy(update={"name": f"{name} (transformers problem_type={pt})"}) if got is not None else None


# -- facts -----------------------------------------------------------------------------------------


def _framework(found: Found, desc: md.ModelDescription | None) -> str | None:
    if desc is not None and desc.framework not in ("unknown",):
        return {"transformers": "pytorch"}.get(desc.framework, desc.framework)
    fw = found.settings.get("framework")
    if fw:
        text = str(fw[0])
        for key, canon in (
            ("keras", "keras"),
            ("tensorflow", "keras"),
            ("tf", "keras"),
            ("torch", "pytorch"),
            ("mindspore", "mindspore"),
            ("lightning", "pytorch"),
        ):
            if key in text:
                return canon
    for d in found.descriptions:
        if d.framework != "unknown":
            return d.framework
    return None


def _best_description(found: Found) -> md.ModelDescription | None:
    with_layers = [d for d in found.descriptions if d.layers]
    if not with_layers:
        return None
    best = min(with_layers, key=lambda d: (_FORMAT_RANK.get(d.format, 9), -len(d.layers)))
    if not best.activations_known or not any(la.activation for la in best.layers if la.role in ("dense", "conv")):
        # an output activation stated in a config fills the gap of a summary
        for d in found.descriptions:
            if d is best or d.format != "hparams" or not d.layers:
                continue
            stated = d.layers[-1].activation
            if stated is not None:
                weighted = [la for la in best.layers if la.role in _WEIGHTED]
                if weighted and not any(
                    la.role == "activation" for la in best.layers[best.layers.index(weighted[-1]) :]
                ):
                    weighted[-1].activation = stated
                    best.activations_known = best.format != "keras_summary" or len(weighted) == 1
                break
    return best


def _summarise(
    desc: md.ModelDescription, side: str, framework: str | None = None
) -> tuple[list[ModelLayer], ModelSummary]:
    layers = desc.layers
    weighted_idx = [i for i, la in enumerate(layers) if la.role in _WEIGHTED]
    out_i = weighted_idx[-1] if weighted_idx else None
    facts: list[ModelLayer] = []
    src = Source(path=desc.path, line=desc.line) if desc.path else None
    for i, la in enumerate(layers):
        facts.append(
            ModelLayer(
                index=i,
                name=la.name,
                layer_type=la.layer_type,
                role=la.role,  # type: ignore[arg-type]
                units=la.units,
                activation=la.activation,
                dropout_rate=la.dropout_rate,
                is_output_layer=i == out_i,
                side=side,
                source=src,
            )
        )  # type: ignore[arg-type]

    def after(i: int) -> tuple[str | None, int]:
        """The activation applied to layer i's output: its own, else the next activation layer before the
        next weighted layer ('linear' when none); and the index where the search stopped."""
        own = layers[i].activation
        j = i + 1
        found_act = None
        while j < len(layers) and layers[j].role not in _WEIGHTED:
            if layers[j].role == "activation" and found_act is None:
                found_act = layers[j].activation or ("linear" if layers[j].layer_type == "Activation" else None)
            j += 1
        if own not in (None, "linear"):
            return own, j
        if found_act is not None:
            return found_act, j
        return own, j  # None (unknown) or linear

    out_act = None
    has_drop, drop_rate = False, None
    if out_i is not None:
        out_act, _ = after(out_i)
        if out_act is None and desc.activations_known:
            out_act = "linear"
        for la in layers[out_i + 1 :]:
            if la.role == "dropout":
                has_drop, drop_rate = True, la.dropout_rate
    hidden_acts: list[str] = []
    stacked, first_stacked, saturating = 0, None, 0
    for i in weighted_idx[:-1]:
        act, _ = after(i)
        if act is None and desc.activations_known:
            act = "linear"
        if act is not None:
            hidden_acts.append(act)
        if act in ("sigmoid", "tanh"):
            saturating += 1
        nxt = next(k for k in weighted_idx if k > i)
        if (
            desc.activations_known
            and act == "linear"
            and layers[i].role in ("dense", "conv")
            and layers[nxt].role in ("dense", "conv")
        ):
            stacked += 1
            first_stacked = first_stacked or layers[i].name
    hidden = Counter(hidden_acts).most_common(1)[0][0] if hidden_acts else None
    out_layer = layers[out_i] if out_i is not None else None
    # a custom module prints its submodules in definition order: its last Linear need not be the output (several
    # heads, a projection used earlier), so its units are not taken for the model's
    units_known = desc.activations_known or desc.format not in ("torch_repr", "mindspore_repr")
    summary = ModelSummary(
        framework=framework
        if framework in ("keras", "pytorch", "mindspore") and desc.framework == "unknown"
        else desc.framework
        if desc.framework in ("keras", "pytorch", "mindspore", "transformers", "onnx")
        else "unknown",  # type: ignore[arg-type]
        description_format=desc.format,
        n_layers=len(layers),
        n_weighted_layers=len(weighted_idx),  # type: ignore[arg-type]
        total_params=desc.total_params,
        activations_known=desc.activations_known,
        output_units=out_layer.units if out_layer and units_known else None,
        output_layer_type=out_layer.layer_type if out_layer else None,
        output_activation=out_act,
        hidden_activation=hidden,
        hidden_saturating_layers=saturating,
        stacked_without_activation=stacked,
        first_stacked_layer=first_stacked,
        has_dropout_after_output=has_drop,
        output_dropout_rate=drop_rate,
        architecture=desc.architecture,
        side=side,
        source=src,
    )  # type: ignore[arg-type]
    return facts, summary


class _TaskVotes:
    """What each source says of the task, in the order they are asked: the first decides, a later one that names
    another task is a conflict."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.decision: tuple[str, int | None, str, str] | None = None  # task, n, where, how
        self.conflicts: list[str] = []

    def say(self, task: str, n: int | None, where: str, how: str = "") -> None:
        self.said.append(f"{where} ({task}{'' if n is None else f', {n} classes'})")
        if self.decision is None:
            self.decision = (task, n, where, how)
        elif self.decision[0] != task:
            self.conflicts.append(where)


def _task_from_settings(found: Found, votes: _TaskVotes) -> None:
    """A Hugging Face config's problem_type/num_labels, a task or class-count setting, a well-known data set, the
    labels of a data sample."""
    hf = found.hf
    if hf is not None:
        pt = (hf.problem_type or "").lower()
        if pt == "regression" or (not pt and hf.n_classes == 1):
            votes.say(
                "regression", None, f"{hf.path}: " + (f"problem_type={hf.problem_type}" if pt else "num_labels=1")
            )
        elif pt.startswith("multi_label"):
            votes.say("multilabel", hf.n_classes, f"{hf.path}: problem_type={hf.problem_type}")
        elif hf.n_classes and hf.n_classes >= 2 and "ForSequenceClassification" in (hf.architecture or "") + pt:
            votes.say(
                "binary" if hf.n_classes == 2 else "multiclass", hf.n_classes, f"{hf.path}: num_labels={hf.n_classes}"
            )
        elif hf.n_classes and md.LM_HEAD.search(hf.architecture or ""):  # each next token is one of vocab_size classes
            votes.say("multiclass", hf.n_classes, f"{hf.path}: a {hf.architecture} over vocab_size={hf.n_classes}")
    if "task" in found.settings:
        value, where = found.settings["task"]
        n = found.settings.get("num_classes", (None, ""))[0]
        if "regress" in value:
            votes.say("regression", None, where)
        elif "multi_label" in value or "multilabel" in value:
            votes.say("multilabel", n, where)
        elif "binary" in value:
            votes.say("binary", 2, where)
        elif "class" in value:
            votes.say("binary" if n == 2 else "multiclass", n, where)
    if "num_classes" in found.settings:
        n, where = found.settings["num_classes"]
        if n >= 2:
            votes.say("binary" if n == 2 else "multiclass", n, where)
    elif "dataset_classes" in found.settings:  # a well-known data set named in the config: its documented count
        n, where = found.settings["dataset_classes"]
        votes.say("binary" if n == 2 else "multiclass", n, where)
    if found.labels is not None:
        file, cols, ltask, ln = found.labels
        votes.say(ltask, ln, f"{file}: labels" + (f" ({cols} columns)" if cols > 1 else ""))


def _task_from_model(
    found: Found,
    summary: ModelSummary | None,
    loss: LossSetup | None,
    acc: str | None,
    reg: str | None,
    votes: _TaskVotes,
) -> None:
    """The metrics logged or configured, the output layer, the loss's name (the last, weakest sources)."""
    units = summary.output_units if summary else None
    out_act = summary.output_activation if summary else None
    if acc is not None:
        n = units if units and units >= 2 else None
        if loss is not None and loss.variant == "regression" and n is None and votes.decision is None:
            pass  # accuracy beside a regression loss on one output: the metric may be the mistake (see the loss)
        elif loss is not None and loss.family == "bce" and n is None:
            votes.say("binary", 2, f"{found.metrics[acc]}: {acc}", "metric")
        else:
            votes.say("binary" if n == 2 else "multiclass", n, f"{found.metrics[acc]}: {acc}", "metric")
    elif reg is not None:
        votes.say("regression", None, f"{found.metrics[reg]}: {reg}", "metric")
    if summary is not None and units:
        where = f"{summary.source.cite() if summary.source else summary.description_format}: output layer"
        if out_act == "softmax" and units >= 2:
            votes.say("binary" if units == 2 else "multiclass", units, f"{where} {units} units + softmax", "output")
        elif out_act == "sigmoid" and units == 1:
            votes.say("binary", 2, f"{where} 1 unit + sigmoid", "output")
    if loss is not None:
        where = f"loss {loss.name}"
        if loss.variant == "regression":
            votes.say("regression", None, where, "loss")
        elif loss.variant in (
            "categorical",
            "sparse_categorical",
            "torch_cross_entropy",
            "softmax_cross_entropy",
            "torch_nll",
        ):
            votes.say("multiclass", units if units and units > 2 else None, where, "loss")
        elif loss.family == "bce":
            votes.say(
                "multilabel" if units and units > 1 and out_act in ("sigmoid", None, "linear") else "binary",
                units if units and units > 1 else 2,
                where,
                "loss",
            )


def _task(found: Found, summary: ModelSummary | None, loss: LossSetup | None, side: str) -> Task | None:
    acc = next((m for m in found.metrics if ACCURACY_NAME.search(m) and not REGRESSION_NAME.search(m)), None)
    reg = next((m for m in found.metrics if REGRESSION_NAME.search(m)), None)
    votes = _TaskVotes()
    _task_from_settings(found, votes)
    _task_from_model(found, summary, loss, acc, reg, votes)
    if votes.decision is None:
        return None
    units = summary.output_units if summary else None
    task, n, where, how = votes.decision
    n_from_output = how == "output" or (how in ("metric", "loss") and n is not None and n == units and n != 2)
    if n is None and task == "multiclass" and units and units > 2:
        n, n_from_output = units, True
    return Task(
        task_type=task,
        n_classes=n,
        decided_from=where,
        is_from_loss=how == "loss",  # type: ignore[arg-type]
        is_from_metric=how == "metric",
        is_n_from_output=n_from_output,
        sources="; ".join(votes.said),
        has_conflict=bool(votes.conflicts),
        accuracy_metric=acc,
        regression_metric=reg,
        side=side,  # type: ignore[arg-type]
        label_columns=found.labels[1] if found.labels else None,
        labels_file=found.labels[0] if found.labels else None,
    )  # type: ignore[arg-type]


def _facts_for(folder: RunRead, out: Extraction, view: RunView) -> None:
    found, records = view.model
    out.merge(records)
    desc = _best_description(found)
    framework = _framework(found, desc)
    summary = None
    if desc is not None:
        layers, summary = _summarise(desc, folder.side, framework)
        out.facts.extend(layers)
        out.facts.append(summary)
    elif found.hf is not None:
        trainable = _trainable_params(folder)
        low = found.hf.min_params
        summary = ModelSummary(
            framework="transformers",
            description_format="hf_config",
            activations_known=False,
            architecture=found.hf.architecture,
            # a sequence-classification head is one Linear(hidden, num_labels) (the models' documented layout)
            output_units=found.hf.n_classes
            if (found.hf.architecture or "").endswith("ForSequenceClassification")
            else None,
            trainable_params=trainable,
            config_min_params=low,
            trainable_share=trainable / low if trainable is not None and low else None,
            side=folder.side,  # type: ignore[arg-type]
            source=Source(path=found.hf.path),
        )
        out.facts.append(summary)
    loss = None
    comp = found.compiles[0] if found.compiles else None
    if comp is not None and comp.loss:
        fw = framework or (
            "keras" if "crossentropy" in _squash(comp.loss) and "loss" not in _squash(comp.loss) else None
        )
        loss = loss_setup(comp.loss, comp.from_logits, fw)
        if loss is not None:
            loss = loss.model_copy(update={"side": folder.side, "source": Source(path=comp.path, line=comp.line)})
        for m in comp.metrics:
            found.metrics.setdefault(m.lower(), comp.path)
    if loss is None and "loss" in found.settings:
        value, where = found.settings["loss"]
        fl = found.settings.get("from_logits", (None, ""))[0]
        loss = loss_setup(value, fl, framework)
        if loss is not None:
            loss = loss.model_copy(update={"side": folder.side, "source": Source(path=where.split(": ")[0])})
    if loss is None and found.hf is not None:
        loss = _hf_head_loss(found.hf)
        if loss is not None:
            loss = loss.model_copy(update={"side": folder.side, "source": Source(path=found.hf.path)})
    if loss is not None:
        out.facts.append(loss)
    task = _task(found, summary, loss, folder.side)
    if task is not None:
        out.facts.append(task)
    if desc is not None or loss is not None or found.hf is not None:
        out.checks.append(
            CheckRun(
                stage="model_structure",
                inputs=[("baseline:" if folder.side == "baseline" else "") + u for u in dict.fromkeys(found.used)],
                note="model description" if desc is not None else "loss and task settings",
            )
        )


def _hides(summary: ModelSummary | None, layers: list[ModelLayer]) -> frozenset[str]:
    """What one side's model description cannot show, so that the other side's layers of that kind are not called
    missing: an inference graph's folded BatchNorms and dropped Dropouts, a width list's everything but widths."""
    if summary is None:
        return frozenset()
    if summary.description_format == "onnx_graph":
        return inference_graph_hides(layers)
    if summary.description_format == "hparams":
        return width_list_hides(summary.activations_known)
    return frozenset()


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for folder in pair.sides():
        _facts_for(folder, out, pair.view(folder))
    if pair.baseline is not None:
        layers = [f for f in out.facts if isinstance(f, ModelLayer)]
        run, base = [f for f in layers if f.side == "run"], [f for f in layers if f.side == "baseline"]
        summaries = {f.side: f for f in out.facts if isinstance(f, ModelSummary)}
        diff = compare_structures(run, base, _hides(summaries.get("run"), run), _hides(summaries.get("baseline"), base))
        if diff is not None:
            out.facts.append(diff)
    return out
